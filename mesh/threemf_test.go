package mesh

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"strings"
	"testing"
)

// cubeParts is the cube's mesh without the model element around it.
func cubeMesh() string {
	m := cubeModelXML()
	return m[strings.Index(m, "<mesh>") : strings.Index(m, "</mesh>")+len("</mesh>")]
}

// wrapModel puts resources and a build into a model part.
func wrapModel(resources, build string) string {
	return `<?xml version="1.0" encoding="UTF-8"?><model unit="millimeter" xmlns="http://schemas.microsoft.com/3dmanufacturing/core/2015/02" xmlns:p="http://schemas.microsoft.com/3dmanufacturing/production/2015/06">` +
		"<resources>" + resources + "</resources>" + build + "</model>"
}

func TestRender3MFStructures(t *testing.T) {
	ref, err := renderBytes(t, encodeBinarySTL(cube()), FormatSTL, Options{Size: 64})
	if err != nil {
		t.Fatal(err)
	}
	bigTriangle := `<object id="9" type="other"><mesh><vertices><vertex x="-500" y="0" z="0"/><vertex x="500" y="0" z="0"/><vertex x="0" y="0" z="900"/></vertices><triangles><triangle v1="0" v2="1" v3="2"/></triangles></mesh></object>`
	cases := []struct {
		name string
		data []byte
	}{
		{"scaled and moved", make3MF(t, wrapModel(`<object id="1">`+cubeMesh()+`</object>`,
			`<build><item objectid="1" transform="2 0 0 0 2 0 0 0 2 100 -40 7.5"/></build>`))},
		{"no build", make3MF(t, wrapModel(`<object id="1">`+cubeMesh()+`</object>`, ""))},
		{"components in another part", make3MF(t,
			wrapModel(`<object id="2"><components><component p:path="/3D/Objects/object_1.model" objectid="1" transform="1 0 0 0 1 0 0 0 1 3 3 3"/></components></object>`,
				`<build><item objectid="2"/></build>`),
			zipFile{"3D/Objects/object_1.model", []byte(wrapModel(`<object id="1">`+cubeMesh()+`</object>`, ""))})},
		{"components nested", make3MF(t, wrapModel(`<object id="1">`+cubeMesh()+`</object>`+
			`<object id="2"><components><component objectid="1"/></components></object>`+
			`<object id="3"><components><component objectid="2" transform="0.5 0 0 0 0.5 0 0 0 0.5 0 0 0"/></components></object>`,
			`<build><item objectid="3"/></build>`))},
		{"an object of type other", make3MF(t, wrapModel(`<object id="1">`+cubeMesh()+`</object>`+bigTriangle,
			`<build><item objectid="1"/><item objectid="9"/></build>`))},
		{"model part named by the relationships", makeZip(t,
			zipFile{"_rels/.rels", []byte(strings.Replace(rootRels, "/3D/3dmodel.model", "/3D/Cube Model.model", 1))},
			zipFile{"3D/Cube Model.model", []byte(cubeModelXML())})},
		{"comments, CDATA and instructions", make3MF(t, strings.Replace(cubeModelXML(), "<resources>",
			`<!-- a comment > with -> arrows --><?pi data > more?><metadata name="x"><![CDATA[ a > b <c> ]]></metadata><resources>`, 1))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img, err := renderBytes(t, c.data, Format3MF, Options{Size: 64})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(img, ref) {
				t.Errorf("looks %+v, the cube %+v", lookAt(t, img), lookAt(t, ref))
			}
		})
	}
}

// nested returns a model whose objects each place the next one n times,
// depth deep, over one triangle.
func nested(n, depth int) string {
	var b strings.Builder
	b.WriteString(`<object id="1"><mesh><vertices><vertex x="0" y="0" z="0"/><vertex x="1" y="0" z="0"/><vertex x="0" y="1" z="1"/></vertices><triangles><triangle v1="0" v2="1" v3="2"/></triangles></mesh></object>`)
	for d := 2; d <= depth; d++ {
		fmt.Fprintf(&b, `<object id="%d"><components>`, d)
		for range n {
			fmt.Fprintf(&b, `<component objectid="%d"/>`, d-1)
		}
		b.WriteString(`</components></object>`)
	}
	return wrapModel(b.String(), fmt.Sprintf(`<build><item objectid="%d"/></build>`, depth))
}

// manyObjects returns n empty objects.
func manyObjects(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `<object id="%d"/>`, i+1)
	}
	return b.String()
}

func TestRender3MFRefusesMalformed(t *testing.T) {
	withModel := func(model string) []byte { return make3MF(t, model) }
	cube := `<object id="1">` + cubeMesh() + `</object>`
	cases := []struct {
		name string
		data []byte
		opts Options
		want outcome
	}{
		{"not a ZIP", []byte("solid cube\n"), Options{}, outcome{ErrMalformed, "mesh: 3mf: not a readable ZIP package: zip: not a valid zip file: malformed model"}},
		{"a ZIP without a model", makeZip(t, zipFile{"readme.txt", []byte("hi")}), Options{}, outcome{ErrNotModel, "mesh: 3mf: a ZIP without a 3MF model part (3d/3dmodel.model): not a 3D model"}},
		{"nested too deep", withModel(strings.Repeat("<a>", 100) + strings.Repeat("</a>", 100)), Options{}, outcome{ErrMalformed, "mesh: 3mf: 3d/3dmodel.model: xml: elements nested deeper than 32: malformed model"}},
		{"an attribute of 2 MiB", withModel(`<model><resources><object id="` + strings.Repeat("1", 2<<20) + `"/></resources></model>`), Options{}, outcome{ErrTooLarge, "mesh: 3mf: 3d/3dmodel.model: xml: a tag, text, comment or CDATA section longer than 1048576 bytes: model over the limits"}},
		{"an attribute hiding '>'", withModel(`<model><resources><object id="` + strings.Repeat("1>", 1<<20) + `"/></resources></model>`), Options{}, outcome{ErrTooLarge, "mesh: 3mf: 3d/3dmodel.model: xml: a tag, text, comment or CDATA section longer than 1048576 bytes: model over the limits"}},
		{"a comment of 2 MiB", withModel(`<model><!--` + strings.Repeat("<>", 1<<20) + `--></model>`), Options{}, outcome{ErrTooLarge, "mesh: 3mf: 3d/3dmodel.model: xml: a tag, text, comment or CDATA section longer than 1048576 bytes: model over the limits"}},
		{"entity expansion", withModel(`<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]><model>&lol2;</model>`), Options{}, outcome{ErrMalformed, `mesh: 3mf: 3d/3dmodel.model: xml: a DTD or other declaration ("<!D"), which 3MF does not allow: malformed model`}},
		{"parts larger than allowed", withModel(strings.Replace(cubeModelXML(), "<resources>", "<resources>"+strings.Repeat(" ", 100_000), 1)), Options{MaxInputSize: 10_000}, outcome{ErrTooLarge, "mesh: 3mf: 3d/3dmodel.model: the package's parts decompress to more than Options.MaxInputSize: model over the limits"}},
		{"unclosed element", withModel(`<model><resources>`), Options{}, outcome{ErrMalformed, "mesh: 3mf: 3d/3dmodel.model: xml: <resources> not closed: malformed model"}},
		{"mismatched end", withModel(`<model><resources></model>`), Options{}, outcome{ErrMalformed, "mesh: 3mf: 3d/3dmodel.model: xml: unexpected </model>: malformed model"}},
		{"triangle past the vertices", withModel(wrapModel(`<object id="1"><mesh><vertices><vertex x="0" y="0" z="0"/></vertices><triangles><triangle v1="0" v2="0" v3="7"/></triangles></mesh></object>`, "")), Options{}, outcome{ErrMalformed, `mesh: 3mf: 3d/3dmodel.model: triangle 0: v3="7" is not one of the 1 vertices: malformed model`}},
		{"vertex not a number", withModel(wrapModel(`<object id="1"><mesh><vertices><vertex x="0" y="one" z="0"/></vertices></mesh></object>`, "")), Options{}, outcome{ErrMalformed, `mesh: 3mf: 3d/3dmodel.model: vertex 0: y="one" is not a number: malformed model`}},
		{"item of a missing object", withModel(wrapModel(cube, `<build><item objectid="7"/></build>`)), Options{}, outcome{ErrMalformed, "mesh: 3mf: a reference to object 3d/3dmodel.model#7, which does not exist: malformed model"}},
		{"object twice", withModel(wrapModel(cube+cube, "")), Options{}, outcome{ErrMalformed, "mesh: 3mf: 3d/3dmodel.model: object 1 defined twice: malformed model"}},
		{"a cycle of components", withModel(wrapModel(`<object id="1"><components><component objectid="2"/></components></object><object id="2"><components><component objectid="1"/></components></object>`, "")), Options{}, outcome{ErrMalformed, "mesh: 3mf: object 3d/3dmodel.model#1 contains itself: malformed model"}},
		{"components nested too deep", withModel(nested(1, 20)), Options{}, outcome{ErrMalformed, "mesh: 3mf: components nested deeper than 16: malformed model"}},
		{"components multiplying", withModel(nested(10, 9)), Options{MaxTriangles: 1000}, outcome{ErrTooLarge, "mesh: 3mf: the build places more than 1000 triangles and components: model over the limits"}},
		{"a transform of 11 numbers", withModel(wrapModel(cube, `<build><item objectid="1" transform="1 0 0 0 1 0 0 0 1 0 0"/></build>`)), Options{}, outcome{ErrMalformed, `mesh: 3mf: 3d/3dmodel.model: <item objectid="1">: a transform of 11 numbers, not 12: malformed model`}},
		{"meshes over the memory bound", withModel(cubeModelXML()), Options{MaxMeshBytes: 300}, outcome{ErrTooLarge, "mesh: 3mf: 3d/3dmodel.model: meshes over Options.MaxMeshBytes (300 bytes): model over the limits"}},
		{"many empty objects", withModel(wrapModel(manyObjects(5000), "")), Options{MaxMeshBytes: 1 << 20}, outcome{ErrTooLarge, "mesh: 3mf: 3d/3dmodel.model: meshes over Options.MaxMeshBytes (1048576 bytes): model over the limits"}},
		{"no objects", withModel(wrapModel("", "")), Options{}, outcome{ErrEmpty, "mesh: 3mf: no triangles: model has nothing to draw"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.opts.Size = 32
			_, err := renderBytes(t, c.data, Format3MF, c.opts)
			if got := outcomeOf(err); got != c.want {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

var red = color.NRGBA{0xd0, 0x20, 0x20, 0xff}

func jpegOf(t testing.TB, w, h int, c color.NRGBA) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// thumbnailLook is what a test checks of a re-encoded thumbnail.
type thumbnailLook struct {
	Width, Height               int
	CentreRed, LeftRed, TopRed  bool
	CentreBg, LeftBg, TopLeftBg bool
}

func lookAtThumbnail(t testing.TB, data []byte) thumbnailLook {
	t.Helper()
	img := decodeJPEG(t, data)
	b := img.Bounds()
	at := func(x, y int) color.RGBA { return color.RGBAModel.Convert(img.At(x, y)).(color.RGBA) }
	isRed := func(c color.RGBA) bool { return c.R > 0xb0 && c.G < 0x50 && c.B < 0x50 }
	w, h := b.Dx(), b.Dy()
	return thumbnailLook{
		Width: w, Height: h,
		CentreRed: isRed(at(w/2, h/2)), LeftRed: isRed(at(w/8, h/2)), TopRed: isRed(at(w/2, h/8)),
		CentreBg: isBackground(at(w/2, h/2)), LeftBg: isBackground(at(w/8, h/2)), TopLeftBg: isBackground(at(2, 2)),
	}
}

func TestThumbnail3MF(t *testing.T) {
	square := solidPNG(t, 64, 64, red, false)
	plateRels := strings.Replace(rootRels, "</Relationships>",
		`<Relationship Target="/Metadata/plate_1.png" Id="rel1" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/thumbnail"/></Relationships>`, 1)
	modelRels := `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Target="../Metadata/top.jpg" Id="t" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/thumbnail"/></Relationships>`
	full := thumbnailLook{Width: 96, Height: 96, CentreRed: true, LeftRed: true, TopRed: true}
	cases := []struct {
		name string
		data []byte
		want thumbnailLook
	}{
		{"at Metadata/thumbnail.png", make3MF(t, cubeModelXML(), zipFile{"Metadata/thumbnail.png", square}), full},
		{"named by the package", makeZip(t, zipFile{"_rels/.rels", []byte(plateRels)}, zipFile{"3D/3dmodel.model", []byte(cubeModelXML())}, zipFile{"Metadata/plate_1.png", square}), full},
		{"named by the model part, JPEG", make3MF(t, cubeModelXML(), zipFile{"3D/_rels/3dmodel.model.rels", []byte(modelRels)}, zipFile{"Metadata/top.jpg", jpegOf(t, 300, 300, red)}), full},
		{"wide: bands above and below", make3MF(t, cubeModelXML(), zipFile{"Metadata/thumbnail.png", solidPNG(t, 80, 40, red, false)}),
			thumbnailLook{Width: 96, Height: 96, CentreRed: true, LeftRed: true, TopLeftBg: true, LeftBg: false}},
		{"transparent half on the background", make3MF(t, cubeModelXML(), zipFile{"Metadata/thumbnail.png", solidPNG(t, 512, 512, red, true)}),
			thumbnailLook{Width: 96, Height: 96, TopRed: true, LeftBg: true, TopLeftBg: true, CentreRed: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img, err := Thumbnail3MF(context.Background(), bytes.NewReader(c.data), int64(len(c.data)), Options{Size: 96})
			if err != nil {
				t.Fatal(err)
			}
			if got := lookAtThumbnail(t, img); got != c.want {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
			viaThumbnail, err := Thumbnail(context.Background(), bytes.NewReader(c.data), int64(len(c.data)), Format3MF, Options{Size: 96})
			if err != nil || !bytes.Equal(viaThumbnail, img) {
				t.Errorf("Thumbnail did not use the embedded thumbnail (err %v)", err)
			}
		})
	}
}

func TestThumbnail3MFWithoutAUsableOne(t *testing.T) {
	cases := []struct {
		name string
		data []byte
		want outcome
	}{
		{"none", make3MF(t, cubeModelXML()), outcome{ErrNoThumbnail, "mesh: 3mf: no embedded thumbnail"}},
		{"not an image", make3MF(t, cubeModelXML(), zipFile{"Metadata/thumbnail.png", []byte("not a png")}), outcome{ErrMalformed, "mesh: 3mf: thumbnail metadata/thumbnail.png: not a PNG or JPEG image (image: unknown format): malformed model"}},
		{"too wide", make3MF(t, cubeModelXML(), zipFile{"Metadata/thumbnail.png", solidPNG(t, 9000, 1, red, false)}), outcome{ErrTooLarge, "mesh: 3mf: thumbnail metadata/thumbnail.png: a png of 9000×1 pixels, outside 1–8192 a side and 4194304 in all: model over the limits"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, size := bytes.NewReader(c.data), int64(len(c.data))
			_, err := Thumbnail3MF(context.Background(), r, size, Options{Size: 48})
			if got := outcomeOf(err); got != c.want {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
			rendered, err := Render(context.Background(), r, size, Format3MF, Options{Size: 48})
			if err != nil {
				t.Fatal(err)
			}
			thumb, err := Thumbnail(context.Background(), r, size, Format3MF, Options{Size: 48})
			if err != nil || !bytes.Equal(thumb, rendered) {
				t.Errorf("Thumbnail did not fall back to the render (err %v)", err)
			}
		})
	}
}
