package mesh

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math"
)

// vec3 is a point or direction; models are Z-up (OBJ, Y-up, is turned on
// reading).
type vec3 [3]float64

// triangle is three corners.
type triangle [3]vec3

func (a vec3) sub(b vec3) vec3 { return vec3{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }
func (a vec3) dot(b vec3) float64 {
	return a[0]*b[0] + a[1]*b[1] + a[2]*b[2]
}
func (a vec3) cross(b vec3) vec3 {
	return vec3{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}
func (a vec3) normalized() vec3 {
	l := math.Sqrt(a.dot(a))
	if l == 0 || math.IsInf(l, 0) || math.IsNaN(l) {
		return vec3{}
	}
	return vec3{a[0] / l, a[1] / l, a[2] / l}
}

// maxCoord bounds a usable coordinate: a vertex farther out is junk (a
// model in millimetres 100 km wide) that would shrink the model to a dot,
// and its triangle is skipped.
const maxCoord = 1e8

// usable reports whether every corner of t has finite coordinates within
// maxCoord.
func (t *triangle) usable() bool {
	for i := range 3 {
		for j := range 3 {
			if c := t[i][j]; !(c >= -maxCoord && c <= maxCoord) { // false for NaN too
				return false
			}
		}
	}
	return true
}

// The camera: orthographic, looking at the model from the front-right
// (azimuth from the front, -Y, towards +X) and above (elevation), Z up.
const (
	cameraAzimuthDeg   = 35
	cameraElevationDeg = 28
	frameMargin        = 0.06 // of the image, on each side
)

// view is the camera's basis: right, up and towards the camera.
var view = func() [3]vec3 {
	az, el := cameraAzimuthDeg*math.Pi/180, cameraElevationDeg*math.Pi/180
	toCamera := vec3{math.Sin(az) * math.Cos(el), -math.Cos(az) * math.Cos(el), math.Sin(el)}
	right := vec3{0, 0, 1}.cross(toCamera).normalized()
	up := toCamera.cross(right)
	return [3]vec3{right, up, toCamera}
}()

// toView turns a model point into view coordinates: x right, y up, z
// towards the camera. It runs six times a triangle: written out over
// pointers, it copies no vectors (a third of a 10M-triangle render's time).
func toView(p *vec3) vec3 {
	r, u, c := &view[0], &view[1], &view[2]
	return vec3{
		p[0]*r[0] + p[1]*r[1] + p[2]*r[2],
		p[0]*u[0] + p[1]*u[1] + p[2]*u[2],
		p[0]*c[0] + p[1]*c[1] + p[2]*c[2],
	}
}

// Lights in view coordinates, and the look.
var (
	keyLight  = vec3{-0.5, 0.75, 0.45}.normalized() // upper left, in front
	fillLight = vec3{0.75, -0.2, 0.6}.normalized()  // right, in front
)

const (
	ambient       = 0.28
	keyStrength   = 0.72
	fillStrength  = 0.18
	depthShadeMin = 0.78 // the farthest point's brightness relative to the nearest
)

var (
	backgroundColor = color.RGBA{0xf3, 0xf4, 0xf6, 0xff}
	modelColor      = [3]float64{0x9c, 0xb4, 0xd4}
)

// bounds is what the first pass learns: the model's extent in view
// coordinates and how many triangles can be drawn.
type bounds struct {
	min, max vec3
	usable   int // triangles with usable coordinates
	total    int // every triangle read
}

// measure is the first pass: the extent of the usable triangles, and no
// more than limit triangles in all.
func measure(ctx context.Context, src source, limit int) (bounds, error) {
	b := bounds{min: vec3{math.Inf(1), math.Inf(1), math.Inf(1)}, max: vec3{math.Inf(-1), math.Inf(-1), math.Inf(-1)}}
	err := src.triangles(ctx, func(t *triangle) error {
		if b.total++; b.total > limit {
			return fmt.Errorf("more than %d triangles, the most Options.MaxTriangles allows: %w", limit, ErrTooLarge)
		}
		if !t.usable() {
			return nil
		}
		b.usable++
		for c := range 3 {
			v := toView(&t[c])
			for i := range 3 { // usable: no NaN, so no need of math.Min
				if v[i] < b.min[i] {
					b.min[i] = v[i]
				}
				if v[i] > b.max[i] {
					b.max[i] = v[i]
				}
			}
		}
		return nil
	})
	return b, err
}

// canvas is the supersampled z-buffer: per sample the depth (0 farthest,
// 1 nearest, -1 empty) and the brightness of the triangle seen there.
type canvas struct {
	side  int
	depth []float32
	shade []uint16
	// project maps view coordinates to samples: x, y in samples (y down),
	// z to 0–1.
	scale, offX, offY, zMin, zScale float64
	drawn                           int // samples written
	work                            int // samples visited since the last context check
}

func newCanvas(side int, b bounds) (*canvas, error) {
	extent := math.Max(b.max[0]-b.min[0], b.max[1]-b.min[1])
	if !(extent > 0) || math.IsInf(extent, 0) {
		return nil, fmt.Errorf("%w: the %d usable triangles of %d have no extent", ErrEmpty, b.usable, b.total)
	}
	c := &canvas{side: side, depth: make([]float32, side*side), shade: make([]uint16, side*side)}
	for i := range c.depth {
		c.depth[i] = -1
	}
	c.scale = float64(side) * (1 - 2*frameMargin) / extent
	c.offX = float64(side)/2 - (b.min[0]+b.max[0])/2*c.scale
	c.offY = float64(side)/2 + (b.min[1]+b.max[1])/2*c.scale
	c.zMin = b.min[2]
	if dz := b.max[2] - b.min[2]; dz > 0 {
		c.zScale = 1 / dz
	}
	return c, nil
}

// brightness is the flat shade of a triangle with view-space corners v:
// lit on whichever side faces the camera, since models' windings are not
// to be trusted.
func brightness(v *triangle) float64 {
	n := v[1].sub(v[0]).cross(v[2].sub(v[0])).normalized()
	if n[2] < 0 {
		n = vec3{-n[0], -n[1], -n[2]}
	}
	s := ambient + keyStrength*math.Max(0, n.dot(keyLight)) + fillStrength*math.Max(0, n.dot(fillLight))
	return math.Min(s, 1)
}

// fill rasterises one triangle given in view coordinates: samples whose
// centre lies inside it (edges included) and that are nearer than what is
// there take its depth and shade.
func (c *canvas) fill(v *triangle) {
	var x, y, z [3]float64
	for i, p := range v {
		x[i] = p[0]*c.scale + c.offX
		y[i] = c.offY - p[1]*c.scale
		z[i] = (p[2] - c.zMin) * c.zScale
	}
	area := (x[1]-x[0])*(y[2]-y[0]) - (y[1]-y[0])*(x[2]-x[0])
	if !(math.Abs(area) > 1e-12) {
		return // degenerate, or not a number
	}
	if area < 0 { // make the corners counter-clockwise in sample space
		x[1], x[2], y[1], y[2], z[1], z[2] = x[2], x[1], y[2], y[1], z[2], z[1]
		area = -area
	}
	x0 := max(0, int(math.Ceil(min(x[0], x[1], x[2])-0.5)))
	x1 := min(c.side-1, int(math.Floor(max(x[0], x[1], x[2])-0.5)))
	y0 := max(0, int(math.Ceil(min(y[0], y[1], y[2])-0.5)))
	y1 := min(c.side-1, int(math.Floor(max(y[0], y[1], y[2])-0.5)))
	if x0 > x1 || y0 > y1 {
		return
	}
	c.work += (x1 - x0 + 1) * (y1 - y0 + 1)
	shade, shaded := uint16(0), false // most small triangles cover no sample: shade on demand
	inv := 1 / area
	for sy := y0; sy <= y1; sy++ {
		py := float64(sy) + 0.5
		row := sy * c.side
		for sx := x0; sx <= x1; sx++ {
			px := float64(sx) + 0.5
			w0 := (x[2]-x[1])*(py-y[1]) - (y[2]-y[1])*(px-x[1])
			w1 := (x[0]-x[2])*(py-y[2]) - (y[0]-y[2])*(px-x[2])
			w2 := (x[1]-x[0])*(py-y[0]) - (y[1]-y[0])*(px-x[0])
			if w0 < 0 || w1 < 0 || w2 < 0 {
				continue
			}
			d := float32((w0*z[0] + w1*z[1] + w2*z[2]) * inv)
			if i := row + sx; d > c.depth[i] {
				if c.depth[i] < 0 {
					c.drawn++
				}
				if !shaded {
					shade, shaded = uint16(brightness(v)*math.MaxUint16), true
				}
				c.depth[i], c.shade[i] = d, shade
			}
		}
	}
}

// resolve averages each pixel's samples into the image: the model's colour
// times its shade, dimmed with distance, or the background.
func (c *canvas) resolve(size, ss int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, size, size))
	n := float64(ss * ss)
	bg := [3]float64{float64(backgroundColor.R), float64(backgroundColor.G), float64(backgroundColor.B)}
	for py := range size {
		for px := range size {
			var sum [3]float64
			for sy := py * ss; sy < (py+1)*ss; sy++ {
				for sx := px * ss; sx < (px+1)*ss; sx++ {
					i := sy*c.side + sx
					if c.depth[i] < 0 {
						sum[0], sum[1], sum[2] = sum[0]+bg[0], sum[1]+bg[1], sum[2]+bg[2]
						continue
					}
					k := float64(c.shade[i]) / math.MaxUint16 * (depthShadeMin + (1-depthShadeMin)*float64(c.depth[i]))
					for ch := range 3 {
						sum[ch] += modelColor[ch] * k
					}
				}
			}
			o := img.PixOffset(px, py)
			for ch := range 3 {
				img.Pix[o+ch] = uint8(math.Min(255, sum[ch]/n+0.5))
			}
			img.Pix[o+3] = 0xff
		}
	}
	return img
}

// paint renders src: a first pass frames it (and refuses more than
// opts.MaxTriangles triangles), a second draws every usable triangle.
func paint(ctx context.Context, src source, opts Options) ([]byte, error) {
	side := opts.Size * opts.Supersample
	b, err := measure(ctx, src, opts.MaxTriangles)
	if err != nil {
		return nil, err
	}
	if b.total == 0 {
		return nil, fmt.Errorf("no triangles: %w", ErrEmpty)
	}
	if b.usable == 0 {
		return nil, fmt.Errorf("%w: none of the %d triangles has usable coordinates", ErrEmpty, b.total)
	}
	c, err := newCanvas(side, b)
	if err != nil {
		return nil, err
	}
	err = src.triangles(ctx, func(t *triangle) error {
		if !t.usable() {
			return nil
		}
		v := triangle{toView(&t[0]), toView(&t[1]), toView(&t[2])}
		c.fill(&v)
		if c.work > 1<<20 {
			c.work = 0
			return ctx.Err()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if c.drawn == 0 {
		return nil, fmt.Errorf("%w: the %d usable triangles are all degenerate", ErrEmpty, b.usable)
	}
	return encodeImage(c.resolve(opts.Size, opts.Supersample))
}

// jpegQuality is the quality of every image returned, as the archive
// thumbnails use. A shaded render is smooth gradients, which PNG compresses
// poorly: a 512-pixel render of a curved model is about 80 KB as PNG and
// 16 KB as JPEG, with no visible loss.
const jpegQuality = 85

func encodeImage(img image.Image) ([]byte, error) {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: jpegQuality}); err != nil {
		return nil, fmt.Errorf("encode jpeg: %w", err)
	}
	return buf.Bytes(), nil
}
