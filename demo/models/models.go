// Package models makes small 3D models by code for the demo's world and for
// tests: a few recognisable shapes (a bust, a torus, a tower, a gem, …)
// encoded as binary or ASCII STL, OBJ and 3MF, so that the catalog shows
// rendered thumbnails of real geometry rather than of a single triangle.
//
// The package is pure: it imports only the standard library. The same
// arguments always give the same bytes.
package models

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"strings"
)

// Vertex is a point in model units (millimetres).
type Vertex [3]float64

// Mesh is an indexed triangle mesh: triangles name their vertices by index,
// counter-clockwise seen from outside.
type Mesh struct {
	Vertices  []Vertex
	Triangles [][3]int
}

// add appends other's vertices and triangles, moved by offset.
func (m *Mesh) add(other Mesh, offset Vertex) {
	base := len(m.Vertices)
	for _, v := range other.Vertices {
		m.Vertices = append(m.Vertices, Vertex{v[0] + offset[0], v[1] + offset[1], v[2] + offset[2]})
	}
	for _, t := range other.Triangles {
		m.Triangles = append(m.Triangles, [3]int{t[0] + base, t[1] + base, t[2] + base})
	}
}

// lathe turns a profile (radius, height) around the Z axis in segments
// steps: a closed solid of revolution when the profile starts and ends on
// the axis (radius 0).
func lathe(profile [][2]float64, segments int) Mesh {
	var m Mesh
	for _, p := range profile {
		for s := range segments {
			a := 2 * math.Pi * float64(s) / float64(segments)
			m.Vertices = append(m.Vertices, Vertex{p[0] * math.Cos(a), p[0] * math.Sin(a), p[1]})
		}
	}
	for i := 0; i+1 < len(profile); i++ {
		for s := range segments {
			a, b := i*segments+s, i*segments+(s+1)%segments
			c, d := a+segments, b+segments
			if profile[i][0] != 0 {
				m.Triangles = append(m.Triangles, [3]int{a, b, d})
			}
			if profile[i+1][0] != 0 {
				m.Triangles = append(m.Triangles, [3]int{a, d, c})
			}
		}
	}
	return m
}

// Torus is a ring of major radius major and tube radius minor.
func Torus(major, minor float64, around, tube int) Mesh {
	var m Mesh
	for i := range around {
		u := 2 * math.Pi * float64(i) / float64(around)
		for j := range tube {
			v := 2 * math.Pi * float64(j) / float64(tube)
			r := major + minor*math.Cos(v)
			m.Vertices = append(m.Vertices, Vertex{r * math.Cos(u), r * math.Sin(u), minor * math.Sin(v)})
		}
	}
	for i := range around {
		for j := range tube {
			a, b := i*tube+j, ((i+1)%around)*tube+j
			c, d := i*tube+(j+1)%tube, ((i+1)%around)*tube+(j+1)%tube
			m.Triangles = append(m.Triangles, [3]int{a, b, d}, [3]int{a, d, c})
		}
	}
	return m
}

// Sphere is a UV sphere of radius r centred at the origin.
func Sphere(r float64, rings, segments int) Mesh {
	profile := make([][2]float64, rings+1)
	for i := range profile {
		a := math.Pi * float64(i) / float64(rings)
		profile[i] = [2]float64{r * math.Sin(a), -r * math.Cos(a)}
	}
	profile[0][0], profile[rings][0] = 0, 0
	return lathe(profile, segments)
}

// Box is an axis-aligned box from the origin to size.
func Box(size Vertex) Mesh {
	x, y, z := size[0], size[1], size[2]
	m := Mesh{Vertices: []Vertex{{0, 0, 0}, {x, 0, 0}, {x, y, 0}, {0, y, 0}, {0, 0, z}, {x, 0, z}, {x, y, z}, {0, y, z}}}
	quads := [][4]int{{0, 3, 2, 1}, {4, 5, 6, 7}, {0, 1, 5, 4}, {1, 2, 6, 5}, {2, 3, 7, 6}, {3, 0, 4, 7}}
	for _, q := range quads {
		m.Triangles = append(m.Triangles, [3]int{q[0], q[1], q[2]}, [3]int{q[0], q[2], q[3]})
	}
	return m
}

// Bust is a head on shoulders on a round plinth.
func Bust() Mesh {
	m := lathe([][2]float64{{0, 0}, {14, 0}, {14, 4}, {11, 5}, {11, 8}, {0, 8}}, 32)
	m.add(lathe([][2]float64{{0, 0}, {12, 0}, {13, 4}, {9, 9}, {4, 11}, {4, 14}, {0, 14}}, 32), Vertex{0, 0, 8})
	m.add(Sphere(7, 12, 24), Vertex{0, 0, 28})
	return m
}

// Tower is a round tower with a battlement ring and a conical roof.
func Tower() Mesh {
	m := lathe([][2]float64{{0, 0}, {10, 0}, {9, 30}, {11, 30}, {11, 34}, {0, 34}}, 24)
	m.add(lathe([][2]float64{{0, 0}, {11, 0}, {0, 14}}, 24), Vertex{0, 0, 34})
	for i := range 8 {
		a := 2 * math.Pi * float64(i) / 8
		m.add(Box(Vertex{3, 3, 3}), Vertex{9.5*math.Cos(a) - 1.5, 9.5*math.Sin(a) - 1.5, 34})
	}
	return m
}

// Gem is a cut stone: a crown over a pavilion.
func Gem() Mesh {
	return lathe([][2]float64{{0, 0}, {10, 9}, {10, 10}, {6, 14}, {0, 14}}, 8)
}

// Vase is a turned vessel on a foot.
func Vase() Mesh {
	return lathe([][2]float64{{0, 0}, {6, 0}, {6, 1}, {4, 2}, {9, 10}, {10, 16}, {6, 24}, {5, 28}, {7, 30}, {0, 30}}, 32)
}

// Helmet is a dome with a brim and a crest.
func Helmet() Mesh {
	profile := [][2]float64{{0, 0}, {13, 0}, {13, 1.5}, {11, 2}}
	for i := 1; i <= 8; i++ {
		a := math.Pi / 2 * float64(i) / 8
		profile = append(profile, [2]float64{11 * math.Cos(a), 2 + 11*math.Sin(a)})
	}
	profile[len(profile)-1][0] = 0
	m := lathe(profile, 32)
	m.add(Box(Vertex{2, 22, 4}), Vertex{-1, -11, 10})
	return m
}

// mapped returns the mesh with every vertex moved by f (a scale, a turn).
func (m Mesh) mapped(f func(Vertex) Vertex) Mesh {
	out := Mesh{Vertices: make([]Vertex, len(m.Vertices)), Triangles: m.Triangles}
	for i, v := range m.Vertices {
		out.Vertices[i] = f(v)
	}
	return out
}

// Mammoth is a woolly mammoth standing on four legs: a long body, a domed
// head with a hanging trunk, and two tusks sweeping forwards and up.
func Mammoth() Mesh {
	var m Mesh
	m.add(Sphere(1, 12, 24).mapped(func(v Vertex) Vertex { return Vertex{18 * v[0], 11 * v[1], 12 * v[2]} }), Vertex{0, 0, 26})
	leg := lathe([][2]float64{{0, 0}, {4.5, 0}, {4, 18}, {0, 18}}, 16)
	for _, at := range []Vertex{{-10, -6, 0}, {-10, 6, 0}, {10, -6, 0}, {10, 6, 0}} {
		m.add(leg, at)
	}
	m.add(Sphere(9, 10, 20), Vertex{19, 0, 34})
	m.add(lathe([][2]float64{{0, 0}, {2, 0}, {3.5, 20}, {0, 20}}, 12), Vertex{26, 0, 10})
	// A tusk is a cone turned forwards, 50° from the vertical.
	tilt := 50 * math.Pi / 180
	tusk := lathe([][2]float64{{0, 0}, {1.8, 0}, {0, 16}}, 12).mapped(func(v Vertex) Vertex {
		return Vertex{v[0]*math.Cos(tilt) + v[2]*math.Sin(tilt), v[1], -v[0]*math.Sin(tilt) + v[2]*math.Cos(tilt)}
	})
	m.add(tusk, Vertex{24, -5, 24})
	m.add(tusk, Vertex{24, 5, 24})
	return m
}

// Diorama is a mammoth and its calf on a rocky base.
func Diorama() Mesh {
	m := lathe([][2]float64{{0, 0}, {40, 0}, {38, 4}, {30, 6}, {0, 6}}, 40).mapped(func(v Vertex) Vertex { return Vertex{1.4 * v[0], v[1], v[2]} })
	m.add(Mammoth(), Vertex{-14, -6, 6})
	m.add(Mammoth().mapped(func(v Vertex) Vertex { return Vertex{0.55 * v[0], 0.55 * v[1], 0.55 * v[2]} }), Vertex{24, 14, 6})
	m.add(lathe([][2]float64{{0, 0}, {6, 0}, {4, 5}, {0, 7}}, 7), Vertex{30, -18, 5})
	return m
}

// shapes are the shapes ForName chooses from, by a keyword of the name or
// else by the name's hash.
var shapes = []struct {
	words []string
	make  func() Mesh
}{
	{[]string{"bust", "head", "knight", "goblin", "orc"}, Bust},
	{[]string{"castle", "wall", "gate", "tower", "terrain"}, Tower},
	{[]string{"gem", "chest", "hoard", "treasure"}, Gem},
	{[]string{"helmet", "helm"}, Helmet},
	{[]string{"mammoth", "calf", "body"}, Mammoth},
	{[]string{"vase", "pot"}, Vase},
	{[]string{"ring", "wing", "tusk"}, func() Mesh { return Torus(12, 4, 32, 16) }},
}

// ForName returns a shape for a part's name: one whose keyword the name
// holds ("dragon bust" is a bust), else one chosen by the name's hash, so
// the parts of a demo look different from each other.
func ForName(name string) Mesh {
	lower := strings.ToLower(name)
	for _, s := range shapes {
		for _, w := range s.words {
			if strings.Contains(lower, w) {
				return s.make()
			}
		}
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	return shapes[int(h.Sum32()%uint32(len(shapes)))].make()
}

// normal is the unit normal of triangle t (zero for a degenerate one).
func (m Mesh) normal(t [3]int) Vertex {
	a, b, c := m.Vertices[t[0]], m.Vertices[t[1]], m.Vertices[t[2]]
	u := Vertex{b[0] - a[0], b[1] - a[1], b[2] - a[2]}
	v := Vertex{c[0] - a[0], c[1] - a[1], c[2] - a[2]}
	n := Vertex{u[1]*v[2] - u[2]*v[1], u[2]*v[0] - u[0]*v[2], u[0]*v[1] - u[1]*v[0]}
	l := math.Sqrt(n[0]*n[0] + n[1]*n[1] + n[2]*n[2])
	if l == 0 {
		return Vertex{}
	}
	return Vertex{n[0] / l, n[1] / l, n[2] / l}
}

// BinarySTL encodes the mesh as a binary STL.
func (m Mesh) BinarySTL() []byte {
	b := make([]byte, 84, 84+50*len(m.Triangles))
	copy(b, "binary STL made by hoard's demo")
	binary.LittleEndian.PutUint32(b[80:], uint32(len(m.Triangles)))
	var rec [50]byte
	for _, t := range m.Triangles {
		vals := []Vertex{m.normal(t), m.Vertices[t[0]], m.Vertices[t[1]], m.Vertices[t[2]]}
		for i, v := range vals {
			for j := range 3 {
				binary.LittleEndian.PutUint32(rec[12*i+4*j:], math.Float32bits(float32(v[j])))
			}
		}
		b = append(b, rec[:]...)
	}
	return b
}

// ASCIISTL encodes the mesh as an ASCII STL whose solid is called name.
func (m Mesh) ASCIISTL(name string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "solid %s\n", name)
	for _, t := range m.Triangles {
		n := m.normal(t)
		fmt.Fprintf(&b, "facet normal %g %g %g\n outer loop\n", n[0], n[1], n[2])
		for _, i := range t {
			v := m.Vertices[i]
			fmt.Fprintf(&b, "  vertex %.4g %.4g %.4g\n", v[0], v[1], v[2])
		}
		b.WriteString(" endloop\nendfacet\n")
	}
	fmt.Fprintf(&b, "endsolid %s\n", name)
	return b.Bytes()
}

// OBJ encodes the mesh as a Wavefront OBJ.
func (m Mesh) OBJ() []byte {
	var b bytes.Buffer
	b.WriteString("# made by hoard's demo\no model\n")
	for _, v := range m.Vertices {
		fmt.Fprintf(&b, "v %.4g %.4g %.4g\n", v[0], v[1], v[2])
	}
	for _, t := range m.Triangles {
		fmt.Fprintf(&b, "f %d %d %d\n", t[0]+1, t[1]+1, t[2]+1)
	}
	return b.Bytes()
}

// 3MF package parts.
const (
	contentTypes = `<?xml version="1.0" encoding="UTF-8"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>
<Default Extension="model" ContentType="application/vnd.ms-package.3dmanufacturing-3dmodel+xml"/>
<Default Extension="png" ContentType="image/png"/>
<Default Extension="jpg" ContentType="image/jpeg"/></Types>`
	relsHead = `<?xml version="1.0" encoding="UTF-8"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Target="/3D/3dmodel.model" Id="rel0" Type="http://schemas.microsoft.com/3dmanufacturing/2013/01/3dmodel"/>
`
	relThumbnail = `<Relationship Target="/Metadata/thumbnail.jpg" Id="rel1" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/thumbnail"/>
`
)

// ThreeMF encodes the mesh as a 3MF package. A non-empty thumbnail (a JPEG)
// is embedded as the package's thumbnail, as slicers save it.
func (m Mesh) ThreeMF(title string, thumbnail []byte) ([]byte, error) {
	var model strings.Builder
	model.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	model.WriteString(`<model unit="millimeter" xml:lang="en-US" xmlns="http://schemas.microsoft.com/3dmanufacturing/core/2015/02">`)
	fmt.Fprintf(&model, `<metadata name="Title">%s</metadata><resources><object id="1" type="model"><mesh><vertices>`, xmlText(title))
	for _, v := range m.Vertices {
		fmt.Fprintf(&model, `<vertex x="%.4g" y="%.4g" z="%.4g"/>`, v[0], v[1], v[2])
	}
	model.WriteString(`</vertices><triangles>`)
	for _, t := range m.Triangles {
		fmt.Fprintf(&model, `<triangle v1="%d" v2="%d" v3="%d"/>`, t[0], t[1], t[2])
	}
	model.WriteString(`</triangles></mesh></object></resources><build><item objectid="1"/></build></model>`)
	rels := relsHead
	parts := []struct {
		name string
		data []byte
	}{{"[Content_Types].xml", []byte(contentTypes)}, {"3D/3dmodel.model", []byte(model.String())}}
	if len(thumbnail) > 0 {
		rels += relThumbnail
		parts = append(parts, struct {
			name string
			data []byte
		}{"Metadata/thumbnail.jpg", thumbnail})
	}
	parts = append(parts, struct {
		name string
		data []byte
	}{"_rels/.rels", []byte(rels + "</Relationships>")})
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, p := range parts {
		w, err := zw.Create(p.name)
		if err != nil {
			return nil, fmt.Errorf("3mf %s: %w", p.name, err)
		}
		if _, err := w.Write(p.data); err != nil {
			return nil, fmt.Errorf("3mf %s: %w", p.name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("3mf: %w", err)
	}
	return b.Bytes(), nil
}

// xmlText escapes s for XML character data.
func xmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
