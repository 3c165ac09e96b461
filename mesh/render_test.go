package mesh

import (
	"bytes"
	"context"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRenderLooksLikeTheModel(t *testing.T) {
	cases := []struct {
		name   string
		data   []byte
		format Format
	}{
		{"cube.stl binary", encodeBinarySTL(cube()), FormatSTL},
		{"cube.stl ascii", encodeASCIISTL(cube()), FormatSTL},
		{"tetrahedron.stl", encodeBinarySTL(tetrahedron()), FormatSTL},
		{"cube.obj", objCube(false), FormatOBJ},
		{"cube.3mf", make3MF(t, cubeModelXML()), Format3MF},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img, err := renderBytes(t, c.data, c.format, Options{Size: 128})
			if err != nil {
				t.Fatal(err)
			}
			saveRender(t, c.name, img)
			l := lookAt(t, img)
			type seen struct {
				Width, Height                          int
				CentreIsModel, CoverageInRange, Shaded bool
			}
			want := seen{128, 128, true, true, true}
			got := seen{l.Width, l.Height, l.CentreIsModel, l.Coverage >= 0.3 && l.Coverage <= 0.9, l.Shades >= 2}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("look %+v: want 128×128, the model at the centre, 30–90 %% covered, 2+ shades (-want +got):\n%s", l, diff)
			}
		})
	}
}

func TestRenderSameModelSameImage(t *testing.T) {
	ref, err := renderBytes(t, encodeBinarySTL(cube()), FormatSTL, Options{Size: 96})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		data   []byte
		format Format
	}{
		{"binary stl again", encodeBinarySTL(cube()), FormatSTL},
		{"ascii stl", encodeASCIISTL(cube()), FormatSTL},
		{"obj quads", objCube(false), FormatOBJ},
		{"obj negative indices", objCube(true), FormatOBJ},
		{"3mf", make3MF(t, cubeModelXML()), Format3MF},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img, err := renderBytes(t, c.data, c.format, Options{Size: 96})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(img, ref) {
				t.Errorf("render differs from the binary STL's: %+v vs %+v", lookAt(t, img), lookAt(t, ref))
			}
		})
	}
}

func TestRenderTorusForAPerson(t *testing.T) {
	if testing.Short() {
		t.Skip()
	}
	dir := t.TempDir()
	p := dir + "/torus.stl"
	if err := writeBinarySTL(p, 300, 200); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	img, err := renderBytes(t, data, FormatSTL, Options{})
	if err != nil {
		t.Fatal(err)
	}
	saveRender(t, "torus", img)
	t.Logf("%d bytes", len(img))
}

func TestChooseModel(t *testing.T) {
	cases := []struct {
		name    string
		entries []Candidate
		opts    Options
		want    int
	}{
		{"none", []Candidate{{"readme.txt", 10}, {"cover.jpg", 1000}}, Options{}, -1},
		{"empty archive", nil, Options{}, -1},
		{"the largest STL or OBJ", []Candidate{{"base.stl", 100}, {"bust.stl", 900}, {"arm.obj", 500}}, Options{}, 1},
		{"a 3MF before larger STLs", []Candidate{{"bust.stl", 900}, {"plate.3mf", 50}}, Options{}, 1},
		{"ties by path", []Candidate{{"b.stl", 10}, {"a.STL", 10}}, Options{}, 1},
		{"skips resource forks, empty and unknown sizes", []Candidate{{"__MACOSX/x/._bust.stl", 900}, {"x/._bust.stl", 900}, {"empty.stl", 0}, {"unknown.stl", -1}, {"bust.stl", 5}}, Options{}, 4},
		{"skips files over the input limit", []Candidate{{"huge.stl", 2000}, {"small.stl", 5}}, Options{MaxInputSize: 1000}, 1},
		{"Windows separators", []Candidate{{`models\bust.stl`, 5}}, Options{}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ChooseModel(c.entries, c.opts); got != c.want {
				t.Errorf("ChooseModel = %d, want %d", got, c.want)
			}
		})
	}
}

func TestRenderReadsBinarySTLWhoseHeaderSaysSolid(t *testing.T) {
	ref, err := renderBytes(t, encodeBinarySTL(cube()), FormatSTL, Options{Size: 48})
	if err != nil {
		t.Fatal(err)
	}
	solidHeader := encodeBinarySTL(cube())
	copy(solidHeader, "solid cube exported by a CAD program")
	padded := append(encodeBinarySTL(cube()), 0, 0, 0) // bytes after the last triangle
	bom := append([]byte("\xef\xbb\xbf"), encodeASCIISTL(cube())...)
	for name, data := range map[string][]byte{"solid header": solidHeader, "trailing bytes": padded, "ascii with a byte-order mark": bom} {
		t.Run(name, func(t *testing.T) {
			img, err := renderBytes(t, data, FormatSTL, Options{Size: 48})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(img, ref) {
				t.Errorf("looks %+v, the cube %+v", lookAt(t, img), lookAt(t, ref))
			}
		})
	}
}

// allocatedDuring returns the bytes the Go heap allocated while fn ran: an
// upper bound of what fn held at once.
func allocatedDuring(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestRenderMemoryDoesNotGrowWithTriangles(t *testing.T) {
	opts := Options{Size: 64}
	_, small := renderTorusFile(t, writeBinarySTL, 10, 10, opts)
	_, large := renderTorusFile(t, writeBinarySTL, 200, 250, opts)
	_, smallASCII := renderTorusFile(t, writeASCIISTL, 10, 10, opts)
	_, largeASCII := renderTorusFile(t, writeASCIISTL, 200, 250, opts)
	// 200 to 100,000 triangles: a few KiB more at most (the read buffer
	// is the same; only error paths and encoders differ).
	if large > small+64<<10 || largeASCII > smallASCII+64<<10 {
		t.Errorf("allocated binary %d → %d bytes, ascii %d → %d bytes for 500× the triangles", small, large, smallASCII, largeASCII)
	}
}

func TestRenderConcurrently(t *testing.T) {
	data := make3MF(t, cubeModelXML())
	r := bytes.NewReader(data) // one reader shared by every call
	want, err := Render(context.Background(), r, int64(len(data)), Format3MF, Options{Size: 48})
	if err != nil {
		t.Fatal(err)
	}
	results := make(chan []byte, 4)
	for range cap(results) {
		go func() {
			img, err := Render(context.Background(), r, int64(len(data)), Format3MF, Options{Size: 48})
			if err != nil {
				t.Error(err)
			}
			results <- img
		}()
	}
	for range cap(results) {
		if img := <-results; !bytes.Equal(img, want) {
			t.Error("a concurrent render differs")
		}
	}
}

// renderTorusFile writes the torus as an STL and renders it from the file,
// returning the image and the bytes allocated meanwhile.
func renderTorusFile(t *testing.T, write func(path string, nu, nv int) error, nu, nv int, opts Options) ([]byte, uint64) {
	t.Helper()
	p := filepath.Join(t.TempDir(), fmt.Sprintf("torus-%d-%d.stl", nu, nv))
	if err := write(p, nu, nv); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	var img []byte
	allocated := allocatedDuring(func() {
		img, err = Render(context.Background(), f, st.Size(), FormatSTL, opts)
	})
	if err != nil {
		t.Fatal(err)
	}
	return img, allocated
}

// roughness is the mean difference of horizontally neighbouring pixels of
// the model: low for a smooth surface, high where holes show the inside.
func roughness(t testing.TB, data []byte) float64 {
	img := decodeJPEG(t, data)
	b := img.Bounds()
	var sum float64
	n := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x+1 < b.Max.X; x++ {
			p := color.GrayModel.Convert(img.At(x, y)).(color.Gray)
			q := color.GrayModel.Convert(img.At(x+1, y)).(color.Gray)
			if isBackground(color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)) || isBackground(color.RGBAModel.Convert(img.At(x+1, y)).(color.RGBA)) {
				continue
			}
			sum += math.Abs(float64(p.Y) - float64(q.Y))
			n++
		}
	}
	return sum / float64(max(n, 1))
}

// TestRenderTenMillionTriangles renders a 500 MB binary STL: it must
// allocate what a small one does (the triangles are streamed, never held)
// and look as smooth as a coarse tessellation of the same torus (every
// triangle drawn: no holes). HOARD_LARGE_TESTS=1 runs it (10 s, 500 MB of
// temporary disk); BenchmarkRenderSTL measures the same file.
func TestRenderTenMillionTriangles(t *testing.T) {
	if os.Getenv("HOARD_LARGE_TESTS") == "" {
		t.Skip("HOARD_LARGE_TESTS=1 runs it")
	}
	img, allocated := renderTorusFile(t, writeBinarySTL, 2500, 2000, Options{})
	saveRender(t, "torus-10m", img)
	coarse, _ := renderTorusFile(t, writeBinarySTL, 300, 200, Options{})
	l, rough, coarseRough := lookAt(t, img), roughness(t, img), roughness(t, coarse)
	if allocated > 16<<20 || l.Coverage < 0.3 || rough > 2*coarseRough+1 {
		t.Errorf("allocated %d bytes (want ≤ 16 MiB), look %+v, roughness %.1f (the coarse torus's %.1f)", allocated, l, rough, coarseRough)
	}
}
