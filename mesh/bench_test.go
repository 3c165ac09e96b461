package mesh

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
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

// writeBinarySTL streams the torus into a binary STL file.
func writeBinarySTL(path string, nu, nv int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	w.Write(make([]byte, 80))
	binary.Write(w, binary.LittleEndian, uint32(2*nu*nv))
	var rec [50]byte
	err = bumpyTorus(nu, nv, func(t *triangle) error {
		for i := range 9 {
			binary.LittleEndian.PutUint32(rec[12+4*i:], math.Float32bits(float32(t[i/3][i%3])))
		}
		_, err := w.Write(rec[:])
		return err
	})
	if err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// writeASCIISTL streams the torus into an ASCII STL file.
func writeASCIISTL(path string, nu, nv int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, "solid torus")
	err = bumpyTorus(nu, nv, func(t *triangle) error {
		n := t[1].sub(t[0]).cross(t[2].sub(t[0])).normalized()
		fmt.Fprintf(w, "facet normal %e %e %e\n outer loop\n", n[0], n[1], n[2])
		for _, v := range t {
			fmt.Fprintf(w, "  vertex %e %e %e\n", float32(v[0]), float32(v[1]), float32(v[2]))
		}
		_, err := fmt.Fprint(w, " endloop\nendfacet\n")
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "endsolid torus")
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
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
