package mesh

import (
	"bytes"
	"os"
	"testing"
)

func TestRenderLooksLikeTheModel(t *testing.T) {
	cases := []struct {
		name   string
		data   []byte
		format Format
	}{
		{"cube.stl binary", encodeBinarySTL(cube()), FormatSTL},
		{"cube.stl ascii", encodeASCIISTL(cube()), FormatSTL},
		{"tetrahedron.stl", encodeBinarySTL(tetrahedron()), FormatSTL},
		{"cube.obj", objCube(false), FormatOBJ},
		{"cube.3mf", make3MF(t, cubeModelXML()), Format3MF},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img, err := renderBytes(t, c.data, c.format, Options{Size: 128})
			if err != nil {
				t.Fatal(err)
			}
			saveRender(t, c.name, img)
			l := lookAt(t, img)
			if l.Width != 128 || l.Height != 128 || !l.CentreIsModel || l.Coverage < 0.3 || l.Coverage > 0.9 || l.Shades < 2 {
				t.Errorf("look %+v: want 128×128, the model at the centre, 30–90 %% covered, 2+ shades", l)
			}
		})
	}
}

func TestRenderSameModelSameImage(t *testing.T) {
	ref, err := renderBytes(t, encodeBinarySTL(cube()), FormatSTL, Options{Size: 96})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		data   []byte
		format Format
	}{
		{"binary stl again", encodeBinarySTL(cube()), FormatSTL},
		{"ascii stl", encodeASCIISTL(cube()), FormatSTL},
		{"obj quads", objCube(false), FormatOBJ},
		{"obj negative indices", objCube(true), FormatOBJ},
		{"3mf", make3MF(t, cubeModelXML()), Format3MF},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img, err := renderBytes(t, c.data, c.format, Options{Size: 96})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(img, ref) {
				t.Errorf("render differs from the binary STL's: %+v vs %+v", lookAt(t, img), lookAt(t, ref))
			}
		})
	}
}

func TestRenderTorusForAPerson(t *testing.T) {
	if testing.Short() {
		t.Skip()
	}
	dir := t.TempDir()
	p := dir + "/torus.stl"
	if err := writeBinarySTL(p, 300, 200); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	img, err := renderBytes(t, data, FormatSTL, Options{})
	if err != nil {
		t.Fatal(err)
	}
	saveRender(t, "torus", img)
	t.Logf("%d bytes", len(img))
}
