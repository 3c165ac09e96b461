package archive

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	_ "image/gif" // decoders registered for image.Decode
	"image/jpeg"
	_ "image/png"
)

// Defaults of ThumbnailOptions.
const (
	DefaultThumbnailDimension = 800
	DefaultMaxImagePixels     = 24_000_000
	DefaultMaxImageSide       = 16384
	DefaultMaxPassthrough     = 2 << 20
)

// ThumbnailOptions bound MakeThumbnail. Zero values select the defaults.
type ThumbnailOptions struct {
	// MaxDimension is the longest side of the thumbnail
	// (DefaultThumbnailDimension).
	MaxDimension int
	// MaxPixels refuses images with more pixels before decoding them
	// (DefaultMaxImagePixels, about 100 MB of RGBA).
	MaxPixels int
	// MaxSide refuses images with a longer side (DefaultMaxImageSide).
	MaxSide int
	// MaxPassthrough is the largest WebP image kept as it is
	// (DefaultMaxPassthrough): the standard library cannot decode WebP.
	MaxPassthrough int
	// Quality is the JPEG quality (85).
	Quality int
}

func (o ThumbnailOptions) withDefaults() ThumbnailOptions {
	if o.MaxDimension <= 0 {
		o.MaxDimension = DefaultThumbnailDimension
	}
	if o.MaxPixels <= 0 {
		o.MaxPixels = DefaultMaxImagePixels
	}
	if o.MaxSide <= 0 {
		o.MaxSide = DefaultMaxImageSide
	}
	if o.MaxPassthrough <= 0 {
		o.MaxPassthrough = DefaultMaxPassthrough
	}
	if o.Quality <= 0 || o.Quality > 100 {
		o.Quality = 85
	}
	return o
}

// Errors of MakeThumbnail.
var (
	ErrNotImage       = errors.New("not a JPEG, PNG, GIF or WebP image")
	ErrImageTooLarge  = errors.New("image dimensions over the limit")
	ErrWebPTooLarge   = errors.New("WebP image too large to keep as it is")
	errImageEmptySize = errors.New("image has no pixels")
)

// MakeThumbnail turns untrusted image bytes (JPEG, PNG or the first frame of
// a GIF) into a JPEG whose longest side is at most opts.MaxDimension,
// transparent areas on white. The dimensions are read first
// (image.DecodeConfig) and images over MaxSide or MaxPixels are refused
// before any pixel is decoded. WebP images, which the standard library
// cannot decode, are returned unchanged when they are at most MaxPassthrough
// bytes (served with a sniffed image type, like an uploaded custom preview).
// Decoder panics become errors.
func MakeThumbnail(data []byte, opts ThumbnailOptions) (out []byte, err error) {
	opts = opts.withDefaults()
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("thumbnail: decoder failure: %v", p)
		}
	}()
	if isWebP(data) {
		if len(data) > opts.MaxPassthrough {
			return nil, fmt.Errorf("thumbnail: %d bytes: %w", len(data), ErrWebPTooLarge)
		}
		return data, nil
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("thumbnail: %w (%v)", ErrNotImage, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return nil, fmt.Errorf("thumbnail: %w", errImageEmptySize)
	}
	if cfg.Width > opts.MaxSide || cfg.Height > opts.MaxSide || int64(cfg.Width)*int64(cfg.Height) > int64(opts.MaxPixels) {
		return nil, fmt.Errorf("thumbnail: %s of %d×%d: %w", format, cfg.Width, cfg.Height, ErrImageTooLarge)
	}
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("thumbnail: decode %s: %w", format, err)
	}
	b := src.Bounds()
	if b.Dx() != cfg.Width || b.Dy() != cfg.Height {
		return nil, fmt.Errorf("thumbnail: %s decoded as %d×%d, header says %d×%d", format, b.Dx(), b.Dy(), cfg.Width, cfg.Height)
	}
	// Flatten onto white: JPEG has no alpha.
	flat := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(flat, flat.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	draw.Draw(flat, flat.Bounds(), src, b.Min, draw.Over)
	src = nil
	tw, th := fitWithin(b.Dx(), b.Dy(), opts.MaxDimension)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, boxDownscale(flat, tw, th), &jpeg.Options{Quality: opts.Quality}); err != nil {
		return nil, fmt.Errorf("thumbnail: encode: %w", err)
	}
	return buf.Bytes(), nil
}

// fitWithin scales w×h down (never up) so that the longer side is at most
// limit, keeping the aspect ratio and at least one pixel per side.
func fitWithin(w, h, limit int) (int, int) {
	if w <= limit && h <= limit {
		return w, h
	}
	if w >= h {
		return limit, max(1, int(int64(h)*int64(limit)/int64(w)))
	}
	return max(1, int(int64(w)*int64(limit)/int64(h))), limit
}

// boxDownscale averages the source pixels that fall in each destination
// pixel (an area filter: sharp and alias-free when shrinking).
func boxDownscale(src *image.RGBA, w, h int) *image.RGBA {
	sw, sh := src.Bounds().Dx(), src.Bounds().Dy()
	if sw == w && sh == h {
		return src
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		y0, y1 := y*sh/h, max((y+1)*sh/h, y*sh/h+1)
		for x := range w {
			x0, x1 := x*sw/w, max((x+1)*sw/w, x*sw/w+1)
			var r, g, b, a, n uint64
			for sy := y0; sy < y1; sy++ {
				row := src.Pix[sy*src.Stride+x0*4 : sy*src.Stride+x1*4]
				for i := 0; i < len(row); i += 4 {
					r += uint64(row[i])
					g += uint64(row[i+1])
					b += uint64(row[i+2])
					a += uint64(row[i+3])
				}
				n += uint64(x1 - x0)
			}
			o := y*dst.Stride + x*4
			dst.Pix[o], dst.Pix[o+1], dst.Pix[o+2], dst.Pix[o+3] = uint8(r/n), uint8(g/n), uint8(b/n), uint8(a/n)
		}
	}
	return dst
}

// isWebP reports a RIFF container of WebP data.
func isWebP(data []byte) bool {
	return len(data) >= 16 && string(data[:4]) == "RIFF" && string(data[8:14]) == "WEBPVP"
}
