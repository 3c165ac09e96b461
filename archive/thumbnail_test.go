package archive

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"testing"
)

func TestMakeThumbnail(t *testing.T) {
	var gifBuf bytes.Buffer
	pal := image.NewPaletted(image.Rect(0, 0, 30, 20), color.Palette{color.Black, color.RGBA{255, 0, 0, 255}})
	if err := gif.Encode(&gifBuf, pal, nil); err != nil {
		t.Fatal(err)
	}
	webp := append([]byte("RIFF\x10\x00\x00\x00WEBPVP8 "), make([]byte, 40)...)
	for _, tc := range []struct {
		name  string
		data  []byte
		opts  ThumbnailOptions
		w, h  int // 0: passthrough
		isErr error
	}{
		{name: "small jpeg kept at its size", data: jpegImage(t, 120, 80), w: 120, h: 80},
		{name: "wide png shrunk", data: pngImage(t, 1600, 400), w: 800, h: 200},
		{name: "tall jpeg shrunk", data: jpegImage(t, 300, 900), opts: ThumbnailOptions{MaxDimension: 300}, w: 100, h: 300},
		{name: "gif first frame", data: gifBuf.Bytes(), w: 30, h: 20},
		{name: "webp kept as it is", data: webp},
		{name: "webp over the passthrough cap", data: webp, opts: ThumbnailOptions{MaxPassthrough: 10}, isErr: ErrWebPTooLarge},
		{name: "too many pixels", data: pngImage(t, 100, 100), opts: ThumbnailOptions{MaxPixels: 9999}, isErr: ErrImageTooLarge},
		{name: "side too long", data: pngImage(t, 300, 2), opts: ThumbnailOptions{MaxSide: 299}, isErr: ErrImageTooLarge},
		{name: "not an image", data: []byte("hello, world"), isErr: ErrNotImage},
		{name: "huge declared png refused before decoding", data: pngHeader(100000, 100000), isErr: ErrImageTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := MakeThumbnail(tc.data, tc.opts)
			if tc.isErr != nil {
				if !errors.Is(err, tc.isErr) {
					t.Fatalf("err = %v, want %v", err, tc.isErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.w == 0 {
				if !bytes.Equal(out, tc.data) {
					t.Fatal("passthrough changed the bytes")
				}
				return
			}
			cfg, err := jpeg.DecodeConfig(bytes.NewReader(out))
			if err != nil || cfg.Width != tc.w || cfg.Height != tc.h {
				t.Fatalf("thumbnail %d×%d (%v), want %d×%d", cfg.Width, cfg.Height, err, tc.w, tc.h)
			}
		})
	}
}

// pngHeader is a PNG signature and an IHDR chunk declaring w×h, nothing
// more: DecodeConfig reads it, a decoder would try to allocate w×h.
func pngHeader(w, h uint32) []byte {
	b := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")
	b = binary.BigEndian.AppendUint32(b, w)
	b = binary.BigEndian.AppendUint32(b, h)
	b = append(b, 8, 6, 0, 0, 0)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[12:]))
}

func FuzzMakeThumbnail(f *testing.F) {
	f.Add(pngImage(f, 5, 3))
	f.Add(jpegImage(f, 9, 4))
	f.Add(pngHeader(1, 1))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := MakeThumbnail(data, ThumbnailOptions{MaxDimension: 16, MaxPixels: 1 << 16})
		if err != nil {
			return
		}
		if isWebP(data) {
			return
		}
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(out))
		if err != nil || cfg.Width > 16 || cfg.Height > 16 {
			t.Fatalf("thumbnail %d×%d, %v", cfg.Width, cfg.Height, err)
		}
	})
}
