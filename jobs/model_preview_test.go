package jobs

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"path/filepath"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/archive"
	"github.com/hoard/hoard/archive/rarwriter"
	"github.com/hoard/hoard/demo/models"
)

// previewLook is what a preview shows, as far as the test tells.
type previewLook string

const (
	lookNone      previewLook = "none"      // no preview
	lookRender    previewLook = "render"    // the renderer's light background around a model
	lookThumbnail previewLook = "thumbnail" // the 3MF's own near-black thumbnail
)

// lookOf classifies a preview: JPEG of 512 pixels square (the renderer's
// size), its corner the light background of a render or the dark
// thumbnail the test embedded.
func lookOf(t *testing.T, data []byte) previewLook {
	t.Helper()
	if data == nil {
		return lookNone
	}
	img, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("preview is not a JPEG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 512 || b.Dy() != 512 {
		t.Fatalf("preview is %v, want 512×512", b)
	}
	r, g, b, _ := img.At(256, 256).RGBA()
	cr, _, _, _ := img.At(2, 2).RGBA()
	switch {
	case r>>8 < 0x40 && g>>8 < 0x40 && b>>8 < 0x40:
		return lookThumbnail
	case cr>>8 > 0xc0:
		return lookRender
	}
	t.Fatalf("preview looks like neither a render nor the thumbnail (centre %x, corner %x)", r>>8, cr>>8)
	return ""
}

// darkJPEG is a near-black JPEG, the "designer's thumbnail" of a 3MF.
func darkJPEG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 96, 96))
	for y := range 96 {
		for x := range 96 {
			img.Set(x, y, color.RGBA{0x18, 0x18, 0x20, 0xff})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// zipOf is a ZIP archive of the named files, in order.
func zipOf(t *testing.T, files ...any) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for i := 0; i < len(files); i += 2 {
		w, err := zw.Create(files[i].(string))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(files[i+1].([]byte)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestModelPreview makes previews of model packages from their bytes on
// disk, as inspect does for a package without a picture: documents of each
// model format, archives holding models, a 3MF's own thumbnail, and
// hostile or broken models, which leave the package without a preview (or
// give way to the next model) and never fail it.
func TestModelPreview(t *testing.T) {
	bust := models.Bust()
	withThumb, err := models.Gem().ThreeMF("gem", darkJPEG(t))
	if err != nil {
		t.Fatal(err)
	}
	plain3MF, err := models.Tower().ThreeMF("tower", nil)
	if err != nil {
		t.Fatal(err)
	}
	// A binary STL whose header claims a billion triangles in 134 bytes.
	lying := make([]byte, 134)
	binary.LittleEndian.PutUint32(lying[80:], 1_000_000_000)
	rar := rarwriter.Write([]rarwriter.File{{Name: "Goblin/goblin.stl", Data: bust.ASCIISTL("goblin")}}, rarwriter.Options{})[0]

	tests := []struct {
		name string
		file string
		typ  archive.Type
		data []byte
		want previewLook
	}{
		{"binary STL document", "Dragon Bust.stl", archive.Document, bust.BinarySTL(), lookRender},
		{"ASCII STL document, upper-case extension", "DRAGON.STL", archive.Document, bust.ASCIISTL("dragon"), lookRender},
		{"OBJ document", "vase.obj", archive.Document, models.Vase().OBJ(), lookRender},
		{"3MF document with its thumbnail", "gem.3mf", archive.Document, withThumb, lookThumbnail},
		{"3MF document without one", "tower.3mf", archive.Document, plain3MF, lookRender},
		{"PDF document", "guide.pdf", archive.Document, []byte("%PDF-1.4\n"), lookNone},
		{"lying STL document", "liar.stl", archive.Document, lying, lookNone},
		{"text named .stl", "notes.stl", archive.Document, []byte("this is not a model at all"), lookNone},
		{"ZIP of STLs", "Castle.zip", archive.ZIP, zipOf(t, "Castle/walls.stl", models.Tower().BinarySTL(), "Castle/readme.txt", []byte("hi")), lookRender},
		{"ZIP: the 3MF before a larger STL", "Gems.zip", archive.ZIP, zipOf(t, "big.stl", models.Torus(9, 3, 96, 48).BinarySTL(), "gem.3mf", withThumb), lookThumbnail},
		{"ZIP: a broken model gives way to the next", "Mixed.zip", archive.ZIP, zipOf(t, "a/huge-broken.stl", append(lying, make([]byte, 1<<20)...), "a/ring.stl", models.Torus(9, 3, 24, 12).BinarySTL()), lookRender},
		{"ZIP without models", "Docs.zip", archive.ZIP, zipOf(t, "readme.txt", []byte("hello")), lookNone},
		{"RAR with a model", "Goblin.rar", archive.RAR, rar, lookRender},
	}
	d := &inspector{log: discardLogger()}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.file)
			if err := os.WriteFile(path, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			var entries []archive.Entry
			if tt.typ != archive.Document {
				l, err := archive.List(context.Background(), tt.typ, []string{path}, archive.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				entries = l.Entries
			}
			p := &hoard.Package{FileName: tt.file, FileSize: int64(len(tt.data))}
			got := lookOf(t, d.modelPreviewIfNone(context.Background(), nil, p, tt.typ, []string{path}, entries))
			if got != tt.want {
				t.Errorf("preview: %s, want %s", got, tt.want)
			}
		})
	}
}

// TestModelPreviewKeepsAPicture: a package that has a picture (a posted
// photo, an image in its archive) keeps it; nothing is rendered.
func TestModelPreviewKeepsAPicture(t *testing.T) {
	d := &inspector{log: discardLogger()}
	photo := darkJPEG(t)
	p := &hoard.Package{FileName: "bust.stl"}
	got := d.modelPreviewIfNone(context.Background(), photo, p, archive.Document, []string{"/nonexistent/bust.stl"}, nil)
	if !bytes.Equal(got, photo) {
		t.Error("the package's picture was replaced")
	}
}

// TestModelPreviewStopsWithItsContext: a cancelled ingestion makes no
// preview and does not wait for the renderer.
func TestModelPreviewStopsWithItsContext(t *testing.T) {
	d := &inspector{log: discardLogger()}
	path := filepath.Join(t.TempDir(), "ring.stl")
	if err := os.WriteFile(path, models.Torus(9, 3, 24, 12).BinarySTL(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := d.modelPreview(ctx, &hoard.Package{FileName: "ring.stl"}, archive.Document, []string{path}, nil); got != nil {
		t.Error("a cancelled context still made a preview")
	}
}
