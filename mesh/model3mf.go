package mesh

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// A 3MF model part: <resources> holds <object id> elements, each a <mesh>
// (<vertices><vertex x y z/>…</vertices><triangles><triangle v1 v2 v3/>…)
// or <components> (<component objectid transform p:path/>: other objects,
// perhaps in other model parts, placed by an affine transform); <build>
// holds the <item objectid transform/> elements that make the model.

// Bounds of a 3MF model's structure.
const (
	maxModelParts     = 256
	maxComponentDepth = 16
	triangleBytes     = 12 // a held 3MF triangle: three uint32
	// objectBytes and placementBytes are charged to Options.MaxMeshBytes
	// for each object and each component or build item held (what they
	// cost with their map entry and strings, rounded up), so that a part
	// of a million empty objects cannot exhaust memory either.
	objectBytes    = 256
	placementBytes = 160
)

// affine is a 3MF transform, "m00 m01 m02 m10 m11 m12 m20 m21 m22 m30 m31
// m32": a point (x, y, z) becomes x·row0 + y·row1 + z·row2 + row3.
type affine [12]float64

var identity = affine{1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}

func (m *affine) apply(p vec3) vec3 {
	var q vec3
	for i := range 3 {
		q[i] = p[0]*m[i] + p[1]*m[3+i] + p[2]*m[6+i] + m[9+i]
	}
	return q
}

// then returns the transform that applies m, then n.
func (m affine) then(n affine) affine {
	var c affine
	for row := range 4 {
		for i := range 3 {
			c[3*row+i] = m[3*row]*n[i] + m[3*row+1]*n[3+i] + m[3*row+2]*n[6+i]
		}
	}
	for i := range 3 {
		c[9+i] += n[9+i]
	}
	return c
}

func parseAffine(s string) (affine, error) {
	if s == "" {
		return identity, nil
	}
	f := strings.Fields(s)
	if len(f) != 12 {
		return affine{}, fmt.Errorf("a transform of %d numbers, not 12", len(f))
	}
	var m affine
	for i, w := range f {
		v, ok := parseNumber(w)
		if !ok {
			return affine{}, fmt.Errorf("transform: %q is not a number", w)
		}
		m[i] = v
	}
	return m, nil
}

// objectKey names an object: ids are unique within a model part.
type objectKey struct{ part, id string }

func (k objectKey) String() string { return k.part + "#" + k.id }

// placement puts an object into its parent (a component) or the build (an
// item).
type placement struct {
	object objectKey
	m      affine
}

type object3MF struct {
	verts      []float32
	tris       []uint32
	components []placement
	other      bool // type="other": not part of the printed model
}

// model3MF is a parsed 3MF: its objects and build.
type model3MF struct {
	pkg       *pkg3MF
	objects   map[objectKey]*object3MF
	order     []objectKey // objects of the root part in document order
	items     []placement
	memory    int64 // bytes held by meshes
	maxMemory int64
	instanced int64 // triangles the build draws, components expanded
}

func open3MF(ctx context.Context, r io.ReaderAt, size int64, opts Options) (source, error) {
	pkg, err := openPackage(r, size, opts)
	if err != nil {
		return nil, err
	}
	root, err := pkg.modelPart(ctx)
	if err != nil {
		return nil, err
	}
	m := &model3MF{pkg: pkg, objects: map[objectKey]*object3MF{}, maxMemory: opts.MaxMeshBytes}
	parsed := map[string]bool{root: true}
	queue := []string{root}
	for len(queue) > 0 {
		part := queue[0]
		queue = queue[1:]
		refs, err := m.parsePart(ctx, part, part == root)
		if err != nil {
			return nil, err
		}
		for _, ref := range refs {
			if parsed[ref] {
				continue
			}
			if len(parsed) == maxModelParts {
				return nil, fmt.Errorf("more than %d model parts: %w", maxModelParts, ErrTooLarge)
			}
			parsed[ref] = true
			queue = append(queue, ref)
		}
	}
	if len(m.items) == 0 { // no build: every object of the root part
		for _, k := range m.order {
			m.items = append(m.items, placement{k, identity})
		}
	}
	if err := m.countInstanced(int64(opts.MaxTriangles)); err != nil {
		return nil, err
	}
	return m, nil
}

// partParser is the state of one model part's parse.
type partParser struct {
	m    *model3MF
	part string
	root bool
	obj  *object3MF
	refs []string
}

// parsePart reads one model part; it returns the other parts its
// components refer to.
func (m *model3MF) parsePart(ctx context.Context, part string, root bool) ([]string, error) {
	p := &partParser{m: m, part: part, root: root}
	err := m.pkg.walkXML(ctx, part, p.start, func(name string) error {
		if name == "object" {
			p.obj = nil
		}
		return nil
	})
	return p.refs, err
}

func (p *partParser) start(e *xml.StartElement, parent string) error {
	switch {
	case e.Name.Local == "object" && parent == "resources":
		return p.object(e)
	case e.Name.Local == "vertex" && parent == "vertices" && p.obj != nil:
		return p.vertex(e)
	case e.Name.Local == "triangle" && parent == "triangles" && p.obj != nil:
		return p.triangle(e)
	case e.Name.Local == "component" && parent == "components" && p.obj != nil:
		pl, err := p.placement(e)
		p.obj.components = append(p.obj.components, pl)
		return err
	case e.Name.Local == "item" && parent == "build" && p.root:
		pl, err := p.placement(e)
		p.m.items = append(p.m.items, pl)
		return err
	}
	return nil
}

func (p *partParser) object(e *xml.StartElement) error {
	if err := p.hold(objectBytes); err != nil {
		return err
	}
	k := objectKey{p.part, attr(e, "id")}
	if _, dup := p.m.objects[k]; dup {
		return fmt.Errorf("object %s defined twice: %w", k.id, ErrMalformed)
	}
	p.obj = &object3MF{other: attr(e, "type") == "other"}
	p.m.objects[k] = p.obj
	if p.root {
		p.m.order = append(p.m.order, k)
	}
	return nil
}

// hold charges bytes of mesh to the memory bound.
func (p *partParser) hold(bytes int64) error {
	p.m.memory += bytes
	if p.m.memory > p.m.maxMemory {
		return fmt.Errorf("meshes over Options.MaxMeshBytes (%d bytes): %w", p.m.maxMemory, ErrTooLarge)
	}
	return nil
}

func (p *partParser) vertex(e *xml.StartElement) error {
	if err := p.hold(vertexBytes); err != nil {
		return err
	}
	for _, name := range [3]string{"x", "y", "z"} {
		v, ok := parseNumber(attr(e, name))
		if !ok {
			return fmt.Errorf("vertex %d: %s=%q is not a number: %w", len(p.obj.verts)/3, name, attr(e, name), ErrMalformed)
		}
		p.obj.verts = append(p.obj.verts, float32(v))
	}
	return nil
}

func (p *partParser) triangle(e *xml.StartElement) error {
	if err := p.hold(triangleBytes); err != nil {
		return err
	}
	n := int64(len(p.obj.verts) / 3)
	for _, name := range [3]string{"v1", "v2", "v3"} {
		v, ok := parseInt(attr(e, name))
		if !ok || v < 0 || v >= n {
			return fmt.Errorf("triangle %d: %s=%q is not one of the %d vertices: %w", len(p.obj.tris)/3, name, attr(e, name), n, ErrMalformed)
		}
		p.obj.tris = append(p.obj.tris, uint32(v))
	}
	return nil
}

func (p *partParser) placement(e *xml.StartElement) (placement, error) {
	if err := p.hold(placementBytes); err != nil {
		return placement{}, err
	}
	m, err := parseAffine(attr(e, "transform"))
	if err != nil {
		return placement{}, fmt.Errorf("<%s objectid=%q>: %w: %w", e.Name.Local, attr(e, "objectid"), err, ErrMalformed)
	}
	part := p.part
	if ref := attr(e, "path"); ref != "" {
		part = partName(ref)
		if part != p.part {
			p.refs = append(p.refs, part)
		}
	}
	return placement{objectKey{part, attr(e, "objectid")}, m}, nil
}

// countInstanced counts the triangles the build draws, components
// expanded, and refuses a build that names missing objects, nests
// components in a cycle or deeper than maxComponentDepth, or instances more
// than limit triangles and placements (a few objects placed in each other
// can multiply).
func (m *model3MF) countInstanced(limit int64) error {
	memo := map[objectKey]int64{}
	var count func(k objectKey, depth int) (int64, error)
	count = func(k objectKey, depth int) (int64, error) {
		o, ok := m.objects[k]
		if !ok {
			return 0, fmt.Errorf("a reference to object %s, which does not exist: %w", k, ErrMalformed)
		}
		if n, ok := memo[k]; ok {
			if n < 0 {
				return 0, fmt.Errorf("object %s contains itself: %w", k, ErrMalformed)
			}
			return n, nil
		}
		if depth > maxComponentDepth {
			return 0, fmt.Errorf("components nested deeper than %d: %w", maxComponentDepth, ErrMalformed)
		}
		memo[k] = -1
		// Every placement counts too, so that empty objects placed in
		// each other cannot make walk visit billions of them.
		n := int64(len(o.components))
		if !o.other {
			n += int64(len(o.tris) / 3)
		}
		for _, c := range o.components {
			cn, err := count(c.object, depth+1)
			if err != nil {
				return 0, err
			}
			n = min(n+cn, limit+1)
		}
		memo[k] = n
		return n, nil
	}
	for _, it := range m.items {
		n, err := count(it.object, 0)
		if err != nil {
			return err
		}
		m.instanced = min(m.instanced+n, limit+1)
	}
	if m.instanced > limit {
		return fmt.Errorf("the build places more than %d triangles and components: %w", limit, ErrTooLarge)
	}
	return nil
}

func (m *model3MF) triangles(ctx context.Context, fn func(t *triangle) error) error {
	for _, it := range m.items {
		if err := m.walk(ctx, it.object, it.m, fn); err != nil {
			return err
		}
	}
	return nil
}

// walk draws an object's mesh and components under transform at.
func (m *model3MF) walk(ctx context.Context, k objectKey, at affine, fn func(t *triangle) error) error {
	o := m.objects[k] // countInstanced checked every reference
	if !o.other {
		var t triangle
		for i := 0; i+3 <= len(o.tris); i += 3 {
			if i%(3*4096) == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			for c := range 3 {
				v := o.verts[3*o.tris[i+c]:]
				t[c] = at.apply(vec3{float64(v[0]), float64(v[1]), float64(v[2])})
			}
			if err := fn(&t); err != nil {
				return err
			}
		}
	}
	for _, c := range o.components {
		if err := m.walk(ctx, c.object, c.m.then(at), fn); err != nil {
			return err
		}
	}
	return nil
}
