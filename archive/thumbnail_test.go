package archive

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"testing"
)

func TestMakeThumbnail(t *testing.T) {
	var gifBuf bytes.Buffer
	pal := image.NewPaletted(image.Rect(0, 0, 30, 20), color.Palette{color.Black, color.RGBA{255, 0, 0, 255}})
	if err := gif.Encode(&gifBuf, pal, nil); err != nil {
		t.Fatal(err)
	}
	webp := webpHeader("VP8L", 640, 480)
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
		{name: "lossy webp of 800 pixels kept", data: webpHeader("VP8 ", 800, 600)},
		{name: "extended webp of 800 pixels kept", data: webpHeader("VP8X", 600, 800)},
		{name: "webp over 800 pixels refused", data: webpHeader("VP8L", 16000, 16000), isErr: ErrWebPTooLarge},
		{name: "extended webp over 800 pixels refused", data: webpHeader("VP8X", 801, 10), isErr: ErrWebPTooLarge},
		{name: "webp with an unreadable header", data: append([]byte("RIFF\x10\x00\x00\x00WEBPVP8 "), make([]byte, 40)...), isErr: ErrNotImage},
		{name: "transparent png flattened and shrunk", data: pngImage(t, 1000, 1000), w: 800, h: 800},
		{name: "gray png", data: grayPNG(t, 900, 90), w: 800, h: 80},
		{name: "paletted png", data: palettedPNG(t, 20, 1700), w: 9, h: 800},
		{name: "16-bit png", data: png16(t, 1601, 3), w: 800, h: 1},
		{name: "too many pixels", data: pngImage(t, 100, 100), opts: ThumbnailOptions{MaxPixels: 9999}, isErr: ErrImageTooLarge},
		{name: "side too long", data: pngImage(t, 300, 2), opts: ThumbnailOptions{MaxSide: 299}, isErr: ErrImageTooLarge},
		{name: "not an image", data: []byte("hello, world"), isErr: ErrNotImage},
		{name: "huge declared png refused before decoding", data: pngHeader(100000, 100000), isErr: ErrImageTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := MakeThumbnail(context.Background(), tc.data, tc.opts)
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
	f.Add(webpHeader("VP8 ", 12, 7))
	f.Add(webpHeader("VP8L", 16, 16))
	f.Add(webpHeader("VP8X", 17, 3))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := MakeThumbnail(context.Background(), data, ThumbnailOptions{MaxDimension: 16, MaxPixels: 1 << 16})
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

// webpHeader is the start of a WebP file of the given chunk type declaring
// a w×h canvas: enough for webpSize, no picture.
func webpHeader(chunk string, w, h int) []byte {
	b := append([]byte("RIFF\x40\x00\x00\x00WEBP"), chunk...)
	b = binary.LittleEndian.AppendUint32(b, 32)
	switch chunk {
	case "VP8 ":
		b = append(b, 0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a)
		b = binary.LittleEndian.AppendUint16(b, uint16(w))
		b = binary.LittleEndian.AppendUint16(b, uint16(h))
	case "VP8L":
		b = append(b, 0x2f)
		b = binary.LittleEndian.AppendUint32(b, uint32(w-1)|uint32(h-1)<<14)
	case "VP8X":
		b = append(b, 0, 0, 0, 0, byte(w-1), byte((w-1)>>8), byte((w-1)>>16), byte(h-1), byte((h-1)>>8), byte((h-1)>>16))
	}
	return append(b, make([]byte, 32)...)
}

func encodePNG(t testing.TB, img image.Image) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func grayPNG(t testing.TB, w, h int) []byte {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(i)
	}
	return encodePNG(t, img)
}

func palettedPNG(t testing.TB, w, h int) []byte {
	img := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.Black, color.NRGBA{0, 0, 255, 100}})
	for i := range img.Pix {
		img.Pix[i] = uint8(i % 2)
	}
	return encodePNG(t, img)
}

func png16(t testing.TB, w, h int) []byte {
	img := image.NewNRGBA64(image.Rect(0, 0, w, h))
	for x := range w {
		img.SetNRGBA64(x, 0, color.NRGBA64{R: uint16(x), G: 0x8000, B: 0xffff, A: 0x7fff})
	}
	return encodePNG(t, img)
}

// TestShrinkOnWhite checks the colour of a 2×2 image averaged into one
// pixel on white, for each image type a decoder returns.
func TestShrinkOnWhite(t *testing.T) {
	r := image.Rect(0, 0, 2, 2)
	nrgba := image.NewNRGBA(r)
	rgba := image.NewRGBA(r)
	gray := image.NewGray(r)
	ycc := image.NewYCbCr(r, image.YCbCrSubsampleRatio420)
	pal := image.NewPaletted(r, color.Palette{color.NRGBA{255, 0, 0, 255}, color.Transparent})
	generic := image.NewNRGBA64(r)
	for i := range 4 {
		x, y := i%2, i/2
		if i%2 == 0 {
			nrgba.SetNRGBA(x, y, color.NRGBA{255, 0, 0, 255})
			rgba.SetRGBA(x, y, color.RGBA{255, 0, 0, 255})
			generic.SetNRGBA64(x, y, color.NRGBA64{0xffff, 0, 0, 0xffff})
		}
		gray.SetGray(x, y, color.Gray{uint8(100 * (i % 2))})
		pal.SetColorIndex(x, y, uint8(i%2))
	}
	ycc.Y[0], ycc.Y[1], ycc.Y[2], ycc.Y[3] = 0, 255, 0, 255
	ycc.Cb[0], ycc.Cr[0] = 128, 128
	for _, tc := range []struct {
		name string
		src  image.Image
		want color.RGBA
	}{
		{"nrgba: red and transparent", nrgba, color.RGBA{255, 127, 127, 255}},
		{"rgba: red and transparent", rgba, color.RGBA{255, 127, 127, 255}},
		{"gray", gray, color.RGBA{50, 50, 50, 255}},
		{"ycbcr: black and white", ycc, color.RGBA{127, 127, 127, 255}},
		{"paletted: red and transparent", pal, color.RGBA{255, 127, 127, 255}},
		{"nrgba64 through At", generic, color.RGBA{255, 127, 127, 255}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := shrinkOnWhite(tc.src, 1, 1).RGBAAt(0, 0)
			if got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestImageTooLargeError: the refusal says the image's size and the limits
// it was held to, for the people who sent it.
func TestImageTooLargeError(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		opts ThumbnailOptions
		want ImageTooLargeError
		msg  string
	}{
		{"pixel bomb", pngHeader(16000, 16000), ThumbnailOptions{},
			ImageTooLargeError{Format: "png", Width: 16000, Height: 16000, MaxPixels: DefaultMaxImagePixels, MaxSide: DefaultMaxImageSide},
			"The image is 16,000 × 16,000 pixels; previews may have at most 24 megapixels and 16,384 pixels a side."},
		{"side too long", pngHeader(20000, 2), ThumbnailOptions{MaxPixels: 1_500_000},
			ImageTooLargeError{Format: "png", Width: 20000, Height: 2, MaxPixels: 1_500_000, MaxSide: DefaultMaxImageSide},
			"The image is 20,000 × 2 pixels; previews may have at most 1.5 megapixels and 16,384 pixels a side."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := MakeThumbnail(context.Background(), tc.data, tc.opts)
			big, ok := errors.AsType[*ImageTooLargeError](err)
			if !ok || !errors.Is(err, ErrImageTooLarge) {
				t.Fatalf("err = %v, want an *ImageTooLargeError", err)
			}
			if *big != tc.want || big.Message() != tc.msg {
				t.Errorf("got %+v %q, want %+v %q", *big, big.Message(), tc.want, tc.msg)
			}
		})
	}
}
