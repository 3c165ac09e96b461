package mesh

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/draw"
	_ "image/jpeg" // decoders of embedded thumbnails
	_ "image/png"
	"io"
)

// Bounds of an embedded thumbnail.
const (
	maxThumbnailBytes  = 16 << 20
	maxThumbnailSide   = 8192
	maxThumbnailPixels = 4 << 20 // 16 MiB decoded, as much again flattened
)

func thumbnail3MF(ctx context.Context, r io.ReaderAt, size int64, opts Options) ([]byte, error) {
	if size > opts.MaxInputSize {
		return nil, fmt.Errorf("mesh: 3mf: %d bytes, over the limit of %d: %w", size, opts.MaxInputSize, ErrTooLarge)
	}
	pkg, err := openPackage(r, size, opts)
	if err != nil {
		return nil, fmt.Errorf("mesh: 3mf: %w", err)
	}
	part, err := pkg.thumbnailPart(ctx)
	if err != nil {
		return nil, fmt.Errorf("mesh: %w", err)
	}
	data, err := pkg.readAll(part, maxThumbnailBytes)
	if err != nil {
		return nil, fmt.Errorf("mesh: 3mf: thumbnail: %w", err)
	}
	img, err := fitImage(data, opts.Size)
	if err != nil {
		return nil, fmt.Errorf("mesh: 3mf: thumbnail %s: %w", part, err)
	}
	return encodeImage(img)
}

// readAll returns a part's bytes, refusing more than limit.
func (p *pkg3MF) readAll(part string, limit int64) ([]byte, error) {
	rc, err := p.open(part)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w: %w", part, err, ErrMalformed)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is over %d bytes: %w", part, limit, ErrTooLarge)
	}
	return data, nil
}

// fitImage decodes a PNG or JPEG, after checking its dimensions, and fits
// it into a square of side pixels on the render background, centred, its
// aspect ratio kept.
func fitImage(data []byte, side int) (*image.RGBA, error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("not a PNG or JPEG image (%v): %w", err, ErrMalformed)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width > maxThumbnailSide || cfg.Height > maxThumbnailSide ||
		cfg.Width*cfg.Height > maxThumbnailPixels {
		return nil, fmt.Errorf("a %s of %d×%d pixels, outside 1–%d a side and %d in all: %w",
			format, cfg.Width, cfg.Height, maxThumbnailSide, maxThumbnailPixels, ErrTooLarge)
	}
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decode %s: %v: %w", format, err, ErrMalformed)
	}
	b := src.Bounds()
	flat := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(flat, flat.Bounds(), image.NewUniform(backgroundColor), image.Point{}, draw.Src)
	draw.Draw(flat, flat.Bounds(), src, b.Min, draw.Over)
	w, h := side, side
	if b.Dx() > b.Dy() {
		h = max(1, side*b.Dy()/b.Dx())
	} else {
		w = max(1, side*b.Dx()/b.Dy())
	}
	out := image.NewRGBA(image.Rect(0, 0, side, side))
	draw.Draw(out, out.Bounds(), image.NewUniform(backgroundColor), image.Point{}, draw.Src)
	resample(out, image.Rect((side-w)/2, (side-h)/2, (side-w)/2+w, (side-h)/2+h), flat)
	return out, nil
}

// resample scales src into the rectangle at of dst: each destination pixel
// averages the source pixels it covers when shrinking (an area filter) and
// interpolates between the nearest four when enlarging (bilinear).
func resample(dst *image.RGBA, at image.Rectangle, src *image.RGBA) {
	sw, sh := src.Bounds().Dx(), src.Bounds().Dy()
	w, h := at.Dx(), at.Dy()
	for y := range h {
		for x := range w {
			var c [4]float64
			if sw >= w && sh >= h {
				c = boxAverage(src, x*sw/w, max((x+1)*sw/w, x*sw/w+1), y*sh/h, max((y+1)*sh/h, y*sh/h+1))
			} else {
				c = bilinear(src, (float64(x)+0.5)*float64(sw)/float64(w)-0.5, (float64(y)+0.5)*float64(sh)/float64(h)-0.5)
			}
			o := dst.PixOffset(at.Min.X+x, at.Min.Y+y)
			for i := range 4 {
				dst.Pix[o+i] = uint8(min(255, c[i]+0.5))
			}
		}
	}
}

func boxAverage(src *image.RGBA, x0, x1, y0, y1 int) [4]float64 {
	var sum [4]float64
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			o := src.PixOffset(x, y)
			for i := range 4 {
				sum[i] += float64(src.Pix[o+i])
			}
		}
	}
	n := float64((x1 - x0) * (y1 - y0))
	for i := range sum {
		sum[i] /= n
	}
	return sum
}

func bilinear(src *image.RGBA, fx, fy float64) [4]float64 {
	sw, sh := src.Bounds().Dx(), src.Bounds().Dy()
	fx, fy = min(max(fx, 0), float64(sw-1)), min(max(fy, 0), float64(sh-1))
	x0, y0 := int(fx), int(fy)
	x1, y1 := min(x0+1, sw-1), min(y0+1, sh-1)
	ax, ay := fx-float64(x0), fy-float64(y0)
	var c [4]float64
	for i := range 4 {
		top := float64(src.Pix[src.PixOffset(x0, y0)+i])*(1-ax) + float64(src.Pix[src.PixOffset(x1, y0)+i])*ax
		bottom := float64(src.Pix[src.PixOffset(x0, y1)+i])*(1-ax) + float64(src.Pix[src.PixOffset(x1, y1)+i])*ax
		c[i] = top*(1-ay) + bottom*ay
	}
	return c
}
