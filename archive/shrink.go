package archive

import (
	"image"
	"image/color"
)

// shrinkOnWhite returns src flattened onto white (JPEG has no alpha) and
// box-filtered down to w×h: each destination pixel averages the source
// pixels that fall in it (an area filter: sharp and alias-free when
// shrinking). It reads src one row at a time and allocates nothing of the
// source's size, so a decode costs only its decoded image.
func shrinkOnWhite(src image.Image, w, h int) *image.RGBA {
	b := src.Bounds()
	sw, sh := b.Dx(), b.Dy()
	readRow := rowReader(src)
	xs := make([]int, w+1) // source columns [xs[x], xs[x+1]) make destination column x
	for x := range w {
		xs[x] = x * sw / w
	}
	xs[w] = sw
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	row := make([]uint8, 3*sw)
	acc := make([]uint64, 3*w)
	for y := range h {
		y0, y1 := y*sh/h, max((y+1)*sh/h, y*sh/h+1)
		clear(acc)
		for sy := y0; sy < y1; sy++ {
			readRow(b.Min.Y+sy, row)
			for x := range w {
				x0, x1 := xs[x], max(xs[x+1], xs[x]+1)
				a := acc[3*x : 3*x+3]
				for i := 3 * x0; i < 3*x1; i += 3 {
					a[0] += uint64(row[i])
					a[1] += uint64(row[i+1])
					a[2] += uint64(row[i+2])
				}
			}
		}
		for x := range w {
			n := uint64(max(xs[x+1], xs[x]+1)-xs[x]) * uint64(y1-y0)
			o := y*dst.Stride + x*4
			dst.Pix[o], dst.Pix[o+1], dst.Pix[o+2], dst.Pix[o+3] = uint8(acc[3*x]/n), uint8(acc[3*x+1]/n), uint8(acc[3*x+2]/n), 255
		}
	}
	return dst
}

// rowReader returns a function that writes row y of src, flattened onto
// white, into row as R, G, B bytes; the decoders' own image types are read
// directly, any other through At.
func rowReader(src image.Image) func(y int, row []uint8) {
	b := src.Bounds()
	switch m := src.(type) {
	case *image.NRGBA:
		return func(y int, row []uint8) {
			p := m.Pix[m.PixOffset(b.Min.X, y):]
			for i, j := 0, 0; j < len(row); i, j = i+4, j+3 {
				a := uint32(p[i+3])
				for k := range 3 {
					row[j+k] = uint8((uint32(p[i+k])*a+127)/255 + 255 - a)
				}
			}
		}
	case *image.RGBA:
		return func(y int, row []uint8) {
			p := m.Pix[m.PixOffset(b.Min.X, y):]
			for i, j := 0, 0; j < len(row); i, j = i+4, j+3 {
				a := p[i+3]
				row[j], row[j+1], row[j+2] = p[i]+255-a, p[i+1]+255-a, p[i+2]+255-a
			}
		}
	case *image.Gray:
		return func(y int, row []uint8) {
			p := m.Pix[m.PixOffset(b.Min.X, y):]
			for x := range len(row) / 3 {
				row[3*x], row[3*x+1], row[3*x+2] = p[x], p[x], p[x]
			}
		}
	case *image.YCbCr:
		return func(y int, row []uint8) {
			for x := range len(row) / 3 {
				yi, ci := m.YOffset(b.Min.X+x, y), m.COffset(b.Min.X+x, y)
				row[3*x], row[3*x+1], row[3*x+2] = color.YCbCrToRGB(m.Y[yi], m.Cb[ci], m.Cr[ci])
			}
		}
	case *image.Paletted:
		pal := make([][3]uint8, len(m.Palette))
		for i, c := range m.Palette {
			pal[i] = onWhite(c)
		}
		return func(y int, row []uint8) {
			p := m.Pix[m.PixOffset(b.Min.X, y):]
			for x := range len(row) / 3 {
				c := [3]uint8{255, 255, 255} // an index past the palette
				if int(p[x]) < len(pal) {
					c = pal[p[x]]
				}
				copy(row[3*x:], c[:])
			}
		}
	}
	return func(y int, row []uint8) {
		for x := range len(row) / 3 {
			c := onWhite(src.At(b.Min.X+x, y))
			copy(row[3*x:], c[:])
		}
	}
}

// onWhite is c drawn over white, in 8-bit RGB.
func onWhite(c color.Color) [3]uint8 {
	r, g, bl, a := c.RGBA() // premultiplied, 16-bit
	return [3]uint8{uint8((r + 0xffff - a) >> 8), uint8((g + 0xffff - a) >> 8), uint8((bl + 0xffff - a) >> 8)}
}
