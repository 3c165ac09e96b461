package mesh

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cubeVerts and cubeQuads are a 10 mm cube standing on the XY plane, its
// faces wound outwards.
var cubeVerts = []vec3{
	{0, 0, 0}, {10, 0, 0}, {10, 10, 0}, {0, 10, 0},
	{0, 0, 10}, {10, 0, 10}, {10, 10, 10}, {0, 10, 10},
}

var cubeQuads = [][4]int{
	{0, 3, 2, 1}, {4, 5, 6, 7}, // bottom, top
	{0, 1, 5, 4}, {1, 2, 6, 5}, {2, 3, 7, 6}, {3, 0, 4, 7},
}

// cube returns the cube's 12 triangles.
func cube() []triangle {
	var ts []triangle
	for _, q := range cubeQuads {
		ts = append(ts,
			triangle{cubeVerts[q[0]], cubeVerts[q[1]], cubeVerts[q[2]]},
			triangle{cubeVerts[q[0]], cubeVerts[q[2]], cubeVerts[q[3]]})
	}
	return ts
}

// tetrahedron returns a regular-ish tetrahedron's 4 triangles.
func tetrahedron() []triangle {
	a, b, c, d := vec3{0, 0, 0}, vec3{20, 0, 0}, vec3{10, 17, 0}, vec3{10, 6, 16}
	return []triangle{{a, c, b}, {a, b, d}, {b, c, d}, {c, a, d}}
}

// encodeBinarySTL encodes triangles as a binary STL (zero normals, as many
// writers leave them).
func encodeBinarySTL(ts []triangle) []byte {
	var buf bytes.Buffer
	buf.Write(make([]byte, 80))
	binary.Write(&buf, binary.LittleEndian, uint32(len(ts)))
	for _, t := range ts {
		var rec [50]byte
		for i := range 9 {
			binary.LittleEndian.PutUint32(rec[12+4*i:], math.Float32bits(float32(t[i/3][i%3])))
		}
		buf.Write(rec[:])
	}
	return buf.Bytes()
}

// encodeASCIISTL encodes triangles as an ASCII STL.
func encodeASCIISTL(ts []triangle) []byte {
	var b strings.Builder
	b.WriteString("solid test model\n")
	for _, t := range ts {
		b.WriteString("  facet normal 0 0 0\n    outer loop\n")
		for _, v := range t {
			fmt.Fprintf(&b, "      vertex %g %g %g\n", float32(v[0]), float32(v[1]), float32(v[2]))
		}
		b.WriteString("    endloop\n  endfacet\n")
	}
	b.WriteString("endsolid test model\n")
	return []byte(b.String())
}

// objCube writes the cube as an OBJ of quads (Y-up: the OBJ's y is the
// cube's z), with texture and normal references, comments and groups;
// negative uses relative references.
func objCube(negative bool) []byte {
	var b strings.Builder
	b.WriteString("# a cube\nmtllib cube.mtl\no Cube\n")
	for _, v := range cubeVerts {
		fmt.Fprintf(&b, "v %g %g %g\n", v[0], v[2], -v[1])
	}
	b.WriteString("vt 0 0\nvn 0 0 1\ng sides\nusemtl grey\ns off\n")
	for _, q := range cubeQuads {
		b.WriteString("f")
		for i, idx := range q {
			ref := idx + 1
			if negative {
				ref = idx - len(cubeVerts)
			}
			switch i % 3 {
			case 0:
				fmt.Fprintf(&b, " %d", ref)
			case 1:
				fmt.Fprintf(&b, " %d/1", ref)
			case 2:
				fmt.Fprintf(&b, " %d/1/1", ref)
			}
		}
		b.WriteString(" # a quad\n")
	}
	b.WriteString("l 1 2\n")
	return []byte(b.String())
}

// modelXML is a 3MF model part holding one mesh object, with a build item
// placed by transform ("" for none).
func modelXML(verts []vec3, tris [][3]int, transform string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<model unit="millimeter" xml:lang="en-US" xmlns="http://schemas.microsoft.com/3dmanufacturing/core/2015/02">`)
	b.WriteString(`<metadata name="Title">cube &amp; co</metadata><resources><object id="1" type="model"><mesh><vertices>`)
	for _, v := range verts {
		fmt.Fprintf(&b, `<vertex x="%g" y="%g" z="%g"/>`, v[0], v[1], v[2])
	}
	b.WriteString(`</vertices><triangles>`)
	for _, t := range tris {
		fmt.Fprintf(&b, `<triangle v1="%d" v2="%d" v3="%d"/>`, t[0], t[1], t[2])
	}
	b.WriteString(`</triangles></mesh></object></resources><build><item objectid="1"`)
	if transform != "" {
		fmt.Fprintf(&b, ` transform="%s"`, transform)
	}
	b.WriteString(`/></build></model>`)
	return b.String()
}

// cubeModelXML is the cube as a 3MF model part.
func cubeModelXML() string {
	var tris [][3]int
	for _, q := range cubeQuads {
		tris = append(tris, [3]int{q[0], q[1], q[2]}, [3]int{q[0], q[2], q[3]})
	}
	return modelXML(cubeVerts, tris, "")
}

const rootRels = `<?xml version="1.0" encoding="UTF-8"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Target="/3D/3dmodel.model" Id="rel0" Type="http://schemas.microsoft.com/3dmanufacturing/2013/01/3dmodel"/>
</Relationships>`

const contentTypes = `<?xml version="1.0" encoding="UTF-8"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>
<Default Extension="model" ContentType="application/vnd.ms-package.3dmanufacturing-3dmodel+xml"/>
<Default Extension="png" ContentType="image/png"/></Types>`

// zipFile is one part of a ZIP built by makeZip.
type zipFile struct {
	name string
	data []byte
}

// makeZip builds a ZIP of the files, deflated, in the given order.
func makeZip(t testing.TB, files ...zipFile) []byte {
	return buildZip(t, zip.Deflate, files...)
}

// buildZip builds a ZIP of the files with a compression method (the fuzz
// targets store: a deflate writer costs more than the rest of a run).
func buildZip(t testing.TB, method uint16, files ...zipFile) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: f.name, Method: method})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// make3MF builds a 3MF package around a model part, with more parts after
// it.
func make3MF(t testing.TB, model string, more ...zipFile) []byte {
	return build3MF(t, zip.Deflate, model, more...)
}

func build3MF(t testing.TB, method uint16, model string, more ...zipFile) []byte {
	return buildZip(t, method, append([]zipFile{
		{"[Content_Types].xml", []byte(contentTypes)},
		{"_rels/.rels", []byte(rootRels)},
		{"3D/3dmodel.model", []byte(model)},
	}, more...)...)
}

// solidPNG is a w×h PNG of one colour, its left half transparent when
// halfClear.
func solidPNG(t testing.TB, w, h int, c color.NRGBA, halfClear bool) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			if halfClear && x < w/2 {
				continue
			}
			img.SetNRGBA(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// renderBytes renders data with small, test-sized options unless given.
func renderBytes(t testing.TB, data []byte, f Format, opts Options) ([]byte, error) {
	t.Helper()
	return Render(context.Background(), bytes.NewReader(data), int64(len(data)), f, opts)
}

// look is what a test checks of a render: robust to changes of colour,
// light or camera, not to the model missing.
type look struct {
	Width, Height int
	// Coverage is the share of pixels that are not background, in
	// hundredths.
	Coverage float64
	// CentreIsModel: the centre pixel shows the model.
	CentreIsModel bool
	// Shades counts the colours (to within 12 levels a channel) that
	// cover at least 3 % of the model: a shaded solid shows several faces.
	Shades int
}

// isBackground allows for JPEG's small colour errors.
func isBackground(c color.RGBA) bool {
	d := func(a, b uint8) int { return max(int(a)-int(b), int(b)-int(a)) }
	return d(c.R, backgroundColor.R) <= 10 && d(c.G, backgroundColor.G) <= 10 && d(c.B, backgroundColor.B) <= 10
}

// decodeJPEG decodes what the package returned, which must be a JPEG.
func decodeJPEG(t testing.TB, data []byte) image.Image {
	t.Helper()
	img, format, err := image.Decode(bytes.NewReader(data))
	if err != nil || format != "jpeg" {
		t.Fatalf("not a JPEG: %v %q", err, format)
	}
	return img
}

func lookAt(t testing.TB, data []byte) look {
	t.Helper()
	img := decodeJPEG(t, data)
	b := img.Bounds()
	var l look
	l.Width, l.Height = b.Dx(), b.Dy()
	buckets := map[[3]uint8]int{}
	covered := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			if !isBackground(c) {
				covered++
				buckets[[3]uint8{c.R / 12, c.G / 12, c.B / 12}]++
			}
		}
	}
	for _, n := range buckets {
		if n*100 >= covered*3 {
			l.Shades++
		}
	}
	l.Coverage = math.Round(float64(covered)/float64(l.Width*l.Height)*100) / 100
	l.CentreIsModel = !isBackground(color.RGBAModel.Convert(img.At(b.Min.X+l.Width/2, b.Min.Y+l.Height/2)).(color.RGBA))
	return l
}

// saveRender writes a render under $MESH_RENDER_DIR as a PNG (lossless,
// and what image viewers everywhere show), for a person to look at;
// nothing without it.
func saveRender(t testing.TB, name string, data []byte) {
	dir := os.Getenv("MESH_RENDER_DIR")
	if dir == "" {
		return
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
