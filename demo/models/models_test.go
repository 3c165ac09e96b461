package models

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
	"testing"

	"github.com/hoard/hoard/mesh"
)

// coverage is the share of an image's pixels that differ from its corner
// pixel (the render's background).
func coverage(t *testing.T, data []byte) float64 {
	t.Helper()
	img, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	br, bg, bb, _ := img.At(b.Min.X, b.Min.Y).RGBA()
	differ := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if diff(r, br)+diff(g, bg)+diff(bl, bb) > 3*0x1000 {
				differ++
			}
		}
	}
	return float64(differ) / float64(b.Dx()*b.Dy())
}

func diff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

// TestEveryShapeRendersInEveryEncoding reads every shape back through the
// renderer in each encoding: a shape that fills a good part of the frame
// is geometry, not a sliver.
func TestEveryShapeRendersInEveryEncoding(t *testing.T) {
	ctx := context.Background()
	opts := mesh.Options{Size: 128}
	for _, name := range []string{"bust", "tower", "gem", "helmet", "vase", "ring", "mammoth", "anything else"} {
		m := ForName(name)
		threeMF, err := m.ThreeMF(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		encodings := []struct {
			format mesh.Format
			data   []byte
		}{{mesh.FormatSTL, m.BinarySTL()}, {mesh.FormatSTL, m.ASCIISTL(name)}, {mesh.FormatOBJ, m.OBJ()}, {mesh.Format3MF, threeMF}}
		for _, e := range encodings {
			img, err := mesh.Render(ctx, bytes.NewReader(e.data), int64(len(e.data)), e.format, opts)
			if err != nil {
				t.Fatalf("%s as %s: %v", name, e.format, err)
			}
			if c := coverage(t, img); c < 0.15 {
				t.Errorf("%s as %s covers %.0f%% of the frame, want a solid shape (≥ 15%%)", name, e.format, 100*c)
			}
		}
	}
}

// TestThreeMFCarriesItsThumbnail: a 3MF made with a thumbnail shows it,
// not a render.
func TestThreeMFCarriesItsThumbnail(t *testing.T) {
	var thumb bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 64, 64))
	for i := range img.Pix {
		img.Pix[i] = 0x20 // near black, unlike any render
	}
	if err := jpeg.Encode(&thumb, img, nil); err != nil {
		t.Fatal(err)
	}
	data, err := Gem().ThreeMF("gem", thumb.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	out, err := mesh.Thumbnail3MF(context.Background(), bytes.NewReader(data), int64(len(data)), mesh.Options{Size: 64})
	if err != nil {
		t.Fatalf("Thumbnail3MF: %v", err)
	}
	dec, err := jpeg.Decode(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if r, g, b, _ := dec.At(32, 32).RGBA(); r>>8 > 0x40 || g>>8 > 0x40 || b>>8 > 0x40 {
		t.Errorf("centre pixel %x %x %x, want the embedded near-black thumbnail", r>>8, g>>8, b>>8)
	}
}

// TestForNameIsDeterministic: the same name gives the same bytes.
func TestForNameIsDeterministic(t *testing.T) {
	for _, name := range []string{"dragon bust", "x", "orc orc orc"} {
		if !bytes.Equal(ForName(name).BinarySTL(), ForName(name).BinarySTL()) {
			t.Errorf("%q: two different meshes", name)
		}
	}
}

// TestDioramaRenders: the demo's flagship scene is solid geometry too.
func TestDioramaRenders(t *testing.T) {
	data := Diorama().BinarySTL()
	img, err := mesh.Render(context.Background(), bytes.NewReader(data), int64(len(data)), mesh.FormatSTL, mesh.Options{Size: 128})
	if err != nil {
		t.Fatal(err)
	}
	if c := coverage(t, img); c < 0.15 {
		t.Errorf("the diorama covers %.0f%% of the frame, want ≥ 15%%", 100*c)
	}
}
