package demo

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/hoard/hoard/archive"
	"github.com/hoard/hoard/mesh"
	"github.com/hoard/hoard/messenger/emulator"
)

// TestDemoWorldArchivesAreReadable: the built-in world's seed parses and its
// archives list with hoard's own archive reader.
func TestDemoWorldArchivesAreReadable(t *testing.T) {
	dir := t.TempDir()
	seed, err := WriteWorld(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := emulator.LoadSeed(seed); err != nil {
		t.Fatalf("seed: %v", err)
	}
	f := func(n string) string { return filepath.Join(dir, "files", n) }
	orc, _ := filepath.Glob(f("Orc Warband.part*.rar"))
	if len(orc) < 2 {
		t.Fatalf("the RAR set has %d volumes", len(orc))
	}
	tests := []struct {
		typ   archive.Type
		paths []string
		want  int
	}{
		{archive.ZIP, []string{f("Mammoth Factory - 2024-01.zip")}, 3},
		{archive.ZIP, []string{f("Hoard Set.zip.001"), f("Hoard Set.zip.002")}, 2},
		{archive.RAR, []string{f("Goblin Camp.rar")}, 2},
		{archive.RAR, orc, 2},
	}
	for _, tt := range tests {
		l, err := archive.List(context.Background(), tt.typ, tt.paths, archive.ListOptions{})
		files := 0
		for _, e := range l.Entries {
			if !e.IsDir {
				files++
			}
		}
		if err != nil || files != tt.want || l.Note != "" {
			t.Errorf("%v: %d files (want %d), note %q, err %v", tt.paths, files, tt.want, l.Note, err)
		}
	}
}

// TestDemoWorldModelsRender: the world's models posted on their own are
// real geometry the renderer draws (or, for Ring Set.3mf, carry the
// thumbnail it shows), so the demo's catalog shows them.
func TestDemoWorldModelsRender(t *testing.T) {
	dir := t.TempDir()
	if _, err := WriteWorld(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Dragon_Bust_v2_supported.stl", "Temple Vase.obj", "Crystal Gem.3mf", "Ring Set.3mf"} {
		data, err := os.ReadFile(filepath.Join(dir, "files", name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := mesh.Thumbnail(context.Background(), bytes.NewReader(data), int64(len(data)), mesh.Detect(name), mesh.Options{Size: 64}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "files", "Ring Set.3mf"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mesh.Thumbnail3MF(context.Background(), bytes.NewReader(data), int64(len(data)), mesh.Options{Size: 64}); err != nil {
		t.Errorf("Ring Set.3mf has no readable thumbnail: %v", err)
	}
}

// dioramaPost returns the seed's generated "Mammoth Diorama.zip".
func dioramaPost(t *testing.T, seed *emulator.Seed) emulator.Generate {
	t.Helper()
	for _, c := range seed.Channels {
		for _, p := range c.Posts {
			if p.Generate != nil && p.Generate.Name == "Mammoth Diorama.zip" {
				return *p.Generate
			}
		}
	}
	t.Fatal("no Mammoth Diorama.zip in the world")
	return emulator.Generate{}
}

// TestDemoWorldBigSampleIsAZip: "Mammoth Diorama.zip", the 2.1 GiB sample,
// is a real ZIP as the emulator serves it: archive/zip lists its entries
// from a ReaderAt (nothing materialised), hoard's own entry reader finds its
// preview, every entry's CRC checks out (the bulk's unless -short), and
// reading all of it leaves the heap flat.
func TestDemoWorldBigSampleIsAZip(t *testing.T) {
	dir := t.TempDir()
	path, err := WriteWorld(dir)
	if err != nil {
		t.Fatal(err)
	}
	seed, err := emulator.LoadSeed(path)
	if err != nil {
		t.Fatal(err)
	}
	g := dioramaPost(t, seed)
	r, err := emulator.OpenGenerated(g)
	if err != nil {
		t.Fatal(err)
	}
	if r.Size() != 2_300_000_000 {
		t.Fatalf("size %d, want 2300000000", r.Size())
	}
	zr, err := zip.NewReader(r, r.Size())
	if err != nil {
		t.Fatalf("not a ZIP: %v", err)
	}
	var got []string
	for _, f := range zr.File {
		got = append(got, f.Name)
	}
	want := []string{"Mammoth Diorama/preview.jpg", "Mammoth Diorama/STL/diorama.stl", "Mammoth Diorama/STL/mammoth.stl",
		"Mammoth Diorama/Painting guide.pdf", DioramaBulk}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("entries:\n got  %q\n want %q", got, want)
	}
	if bulk := zr.File[len(zr.File)-1]; bulk.UncompressedSize64 < 2<<30 || bulk.Method != zip.Store {
		t.Errorf("bulk entry: %d bytes, method %d; want over 2 GiB, stored", bulk.UncompressedSize64, bulk.Method)
	}
	preview, err := archive.ReadZipEntry(context.Background(), r, r.Size(), "Mammoth Diorama/preview.jpg", archive.ExtractOptions{})
	if err != nil {
		t.Fatalf("hoard's reader: preview: %v", err)
	}
	checkPicture(t, "Mammoth Diorama/preview.jpg", preview)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, f := range zr.File {
		if f.Name == DioramaBulk && testing.Short() {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.CopyBuffer(io.Discard, rc, make([]byte, 1<<20)); err != nil {
			t.Errorf("%s: %v", f.Name, err) // archive/zip checks the CRC at EOF
		}
		rc.Close()
	}
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapInuse) - int64(before.HeapInuse); grew > 64<<20 {
		t.Errorf("reading the archive grew the heap by %d MiB", grew>>20)
	}
}

// TestDemoWorldPicturesAreRenders: every picture of the world (the album's
// cover photo, the preview hoard would choose in each archive, the 3MF's
// thumbnail) decodes and shows a shape, not a smooth two-colour ramp: a
// plane fitted to its brightness leaves a large residual.
func TestDemoWorldPicturesAreRenders(t *testing.T) {
	dir := t.TempDir()
	if _, err := WriteWorld(dir); err != nil {
		t.Fatal(err)
	}
	f := func(n string) string { return filepath.Join(dir, "files", n) }
	cover, err := os.ReadFile(f("cover.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	checkPicture(t, "cover.jpg", cover)
	orc, _ := filepath.Glob(f("Orc Warband.part*.rar"))
	archives := []struct {
		typ   archive.Type
		paths []string
	}{
		{archive.ZIP, []string{f("Mammoth Factory - 2024-01.zip")}},
		{archive.ZIP, []string{f("Mammoth Factory - 2024-02.zip")}},
		{archive.ZIP, []string{f("Dragon Wings.zip")}},
		{archive.ZIP, []string{f("Hoard Set.zip.001"), f("Hoard Set.zip.002")}},
		{archive.RAR, []string{f("Goblin Camp.rar")}},
		{archive.RAR, orc},
		{archive.ZIP, []string{f("Ring Set.3mf")}},
	}
	for _, a := range archives {
		name := filepath.Base(a.paths[0])
		l, err := archive.List(context.Background(), a.typ, a.paths, archive.ListOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		e, ok := archive.ChoosePreview(l.Entries)
		if !ok {
			t.Errorf("%s: no preview to choose", name)
			continue
		}
		data, err := archive.Extract(context.Background(), a.typ, a.paths, e.Path, archive.ExtractOptions{})
		if err != nil {
			t.Fatalf("%s: %s: %v", name, e.Path, err)
		}
		checkPicture(t, name+": "+e.Path, data)
	}
	// A gradient, as the world drew before, is what the check refuses.
	if residual, err := rampResidual(JPEG(320, 240, 90)); err != nil || residual >= minResidual {
		t.Errorf("a gradient leaves residual %.1f (err %v), want < %v", residual, err, minResidual)
	}
}

// minResidual is the least RMS brightness (0–255) left after fitting a
// plane that a picture of a shape leaves; a JPEG gradient leaves about 1.
const minResidual = 12

func checkPicture(t *testing.T, name string, data []byte) {
	t.Helper()
	residual, err := rampResidual(data)
	if err != nil {
		t.Errorf("%s: %v", name, err)
	} else if residual < minResidual {
		t.Errorf("%s: brightness is a plane but for %.1f RMS: a gradient, not a picture", name, residual)
	}
}

// rampResidual decodes an image and returns the RMS of its brightness
// after the least-squares plane a + b·x + c·y is taken away.
func rampResidual(data []byte) (float64, error) {
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return 0, fmt.Errorf("does not decode: %w", err)
	}
	b := img.Bounds()
	var xs, ys, ls []float64
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			xs, ys = append(xs, float64(x)), append(ys, float64(y))
			ls = append(ls, (0.299*float64(r)+0.587*float64(g)+0.114*float64(bl))/257)
		}
	}
	// Normal equations of the plane fit, solved by Cramer's rule.
	var n, sx, sy, sxx, syy, sxy, sl, sxl, syl float64
	for i := range ls {
		x, y, l := xs[i], ys[i], ls[i]
		n++
		sx, sy, sxx, syy, sxy = sx+x, sy+y, sxx+x*x, syy+y*y, sxy+x*y
		sl, sxl, syl = sl+l, sxl+x*l, syl+y*l
	}
	det3 := func(a, b, c, d, e, f, g, h, i float64) float64 { return a*(e*i-f*h) - b*(d*i-f*g) + c*(d*h-e*g) }
	d := det3(n, sx, sy, sx, sxx, sxy, sy, sxy, syy)
	if d == 0 {
		return 0, fmt.Errorf("image too small to fit")
	}
	a0 := det3(sl, sx, sy, sxl, sxx, sxy, syl, sxy, syy) / d
	a1 := det3(n, sl, sy, sx, sxl, sxy, sy, syl, syy) / d
	a2 := det3(n, sx, sl, sx, sxx, sxl, sy, sxy, syl) / d
	var ss float64
	for i := range ls {
		e := ls[i] - (a0 + a1*xs[i] + a2*ys[i])
		ss += e * e
	}
	return math.Sqrt(ss / n), nil
}
