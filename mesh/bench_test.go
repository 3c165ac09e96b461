package mesh

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"
)

// bumpyTorus calls emit with the 2·nu·nv triangles of a torus lying on the
// XY plane whose tube is rippled, so that shading has something to show.
func bumpyTorus(nu, nv int, emit func(t *triangle) error) error {
	const R, r = 40.0, 14.0
	point := func(i, j int) vec3 {
		u := 2 * math.Pi * float64(i%nu) / float64(nu)
		v := 2 * math.Pi * float64(j%nv) / float64(nv)
		rr := r * (1 + 0.08*math.Sin(9*u)*math.Sin(5*v))
		return vec3{(R + rr*math.Cos(v)) * math.Cos(u), (R + rr*math.Cos(v)) * math.Sin(u), r + rr*math.Sin(v)}
	}
	for i := range nu {
		for j := range nv {
			a, b, c, d := point(i, j), point(i+1, j), point(i+1, j+1), point(i, j+1)
			if err := emit(&triangle{a, b, c}); err != nil {
				return err
			}
			if err := emit(&triangle{a, c, d}); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeFile streams what write writes into a new file.
func writeFile(path string, write func(w *bufio.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	if err := write(w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// writeBinarySTL streams the torus into a binary STL file.
func writeBinarySTL(path string, nu, nv int) error {
	return writeFile(path, func(w *bufio.Writer) error {
		w.Write(make([]byte, 80))
		binary.Write(w, binary.LittleEndian, uint32(2*nu*nv))
		var rec [50]byte
		return bumpyTorus(nu, nv, func(t *triangle) error {
			for i := range 9 {
				binary.LittleEndian.PutUint32(rec[12+4*i:], math.Float32bits(float32(t[i/3][i%3])))
			}
			_, err := w.Write(rec[:])
			return err
		})
	})
}

// writeASCIISTL streams the torus into an ASCII STL file.
func writeASCIISTL(path string, nu, nv int) error {
	return writeFile(path, func(w *bufio.Writer) error {
		fmt.Fprintln(w, "solid torus")
		err := bumpyTorus(nu, nv, func(t *triangle) error {
			n := t[1].sub(t[0]).cross(t[2].sub(t[0])).normalized()
			fmt.Fprintf(w, "facet normal %e %e %e\n outer loop\n", n[0], n[1], n[2])
			for _, v := range t {
				fmt.Fprintf(w, "  vertex %e %e %e\n", float32(v[0]), float32(v[1]), float32(v[2]))
			}
			_, err := fmt.Fprint(w, " endloop\nendfacet\n")
			return err
		})
		fmt.Fprintln(w, "endsolid torus")
		return err
	})
}

// benchFiles are generated once per test binary and removed by TestMain.
var (
	benchDir      string
	benchDirOnce  sync.Once
	benchFileOnce = map[string]*sync.Once{}
	benchFileMu   sync.Mutex
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// benchFile returns the path of a generated model, making it on first use.
func benchFile(b *testing.B, name string, write func(path string) error) string {
	b.Helper()
	benchDirOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mesh-bench-")
		if err != nil {
			panic(err)
		}
		benchDir = dir
	})
	path := filepath.Join(benchDir, name)
	benchFileMu.Lock()
	once, ok := benchFileOnce[name]
	if !ok {
		once = new(sync.Once)
		benchFileOnce[name] = once
	}
	benchFileMu.Unlock()
	var err error
	once.Do(func() { err = write(path) })
	if err != nil {
		b.Fatal(err)
	}
	return path
}

// heapPeak samples the live heap every millisecond until stopped and
// returns the largest value seen.
func heapPeak() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	done, result := make(chan struct{}), make(chan uint64)
	go func() {
		var peak uint64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				result <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(done); return <-result }
}

// benchRender renders the file b.N times, reporting the peak live heap
// during the renders and the input's size.
func benchRender(b *testing.B, path string, format Format, wantErr bool) {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	b.SetBytes(st.Size())
	b.ReportAllocs()
	stop := heapPeak()
	b.ResetTimer()
	for b.Loop() {
		_, err := Render(context.Background(), f, st.Size(), format, Options{})
		if (err != nil) != wantErr {
			b.Fatalf("err = %v, want an error: %v", err, wantErr)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(stop())/(1<<20), "peak-heap-MiB")
}

// BenchmarkRenderSTL renders a 10,000,000-triangle binary STL (500 MB,
// generated on first use into a temporary directory).
func BenchmarkRenderSTL(b *testing.B) {
	path := benchFile(b, "torus-10m.stl", func(p string) error { return writeBinarySTL(p, 2500, 2000) })
	benchRender(b, path, FormatSTL, false)
}

// BenchmarkRenderASCIISTL renders a 1,000,000-triangle ASCII STL.
func BenchmarkRenderASCIISTL(b *testing.B) {
	path := benchFile(b, "torus-1m-ascii.stl", func(p string) error { return writeASCIISTL(p, 1000, 500) })
	benchRender(b, path, FormatSTL, false)
}

// BenchmarkRenderLyingSTL reads a binary STL whose header claims
// 200,000,000 triangles (10 GB) while the file holds one.
func BenchmarkRenderLyingSTL(b *testing.B) {
	path := benchFile(b, "lying.stl", func(p string) error {
		data := encodeBinarySTL(tetrahedron()[:1])
		binary.LittleEndian.PutUint32(data[80:], 200_000_000)
		return os.WriteFile(p, data, 0o644)
	})
	benchRender(b, path, FormatSTL, true)
}

// write3MF writes the torus as a 3MF of one indexed mesh (nu·nv vertices,
// 2·nu·nv triangles).
func write3MF(path string, nu, nv int) error {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><model unit="millimeter" xmlns="http://schemas.microsoft.com/3dmanufacturing/core/2015/02"><resources><object id="1" type="model"><mesh><vertices>`)
	const R, r = 40.0, 14.0
	for i := range nu {
		for j := range nv {
			u, v := 2*math.Pi*float64(i)/float64(nu), 2*math.Pi*float64(j)/float64(nv)
			fmt.Fprintf(&b, `<vertex x="%.4f" y="%.4f" z="%.4f"/>`, (R+r*math.Cos(v))*math.Cos(u), (R+r*math.Cos(v))*math.Sin(u), r+r*math.Sin(v))
		}
	}
	b.WriteString(`</vertices><triangles>`)
	for i := range nu {
		for j := range nv {
			a, c := i*nv+j, (i+1)%nu*nv+j
			bb, d := (i+1)%nu*nv+(j+1)%nv, i*nv+(j+1)%nv
			fmt.Fprintf(&b, `<triangle v1="%d" v2="%d" v3="%d"/><triangle v1="%d" v2="%d" v3="%d"/>`, a, c, bb, a, bb, d)
		}
	}
	b.WriteString(`</triangles></mesh></object></resources><build><item objectid="1"/></build></model>`)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range []zipFile{{"_rels/.rels", []byte(rootRels)}, {"3D/3dmodel.model", []byte(b.String())}} {
		w, err := zw.Create(f.name)
		if err != nil {
			return err
		}
		if _, err := w.Write(f.data); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// BenchmarkRender3MF renders a 3MF of 500,000 triangles (31 MB of model
// XML).
func BenchmarkRender3MF(b *testing.B) {
	path := benchFile(b, "torus-500k.3mf", func(p string) error { return write3MF(p, 500, 500) })
	benchRender(b, path, Format3MF, false)
}
