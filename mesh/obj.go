package mesh

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
)

// Wavefront OBJ: lines of "v x y z [w]" (vertices, numbered from 1 in
// order) and "f a b c …" (faces; each reference "v", "v/vt", "v//vn" or
// "v/vt/vn", negative ones counting back from the last vertex so far).
// Everything else (vt, vn, groups, materials, lines, comments) is skipped.
// OBJ is Y-up; its vertices are turned to Z-up like STL and 3MF.

// vertexBytes is the memory of one held vertex (three float32).
const vertexBytes = 12

// objSource reads an OBJ. The first pass keeps the vertices; later passes
// only count "v" lines and read the faces again.
type objSource struct {
	r        io.ReaderAt
	size     int64
	maxVerts int
	verts    []float32 // x, y, z of every vertex, Z-up
	loaded   bool
}

func openOBJ(r io.ReaderAt, size int64, opts Options) (source, error) {
	return &objSource{r: r, size: size, maxVerts: int(min(opts.MaxMeshBytes/vertexBytes, 1<<31-1))}, nil
}

func (o *objSource) triangles(ctx context.Context, fn func(t *triangle) error) error {
	p := objParser{src: o, sc: newScanner(o.r, o.size), fn: fn}
	err := p.parse(ctx)
	switch {
	case err == nil:
		o.loaded = true
		return nil
	case ctx.Err() != nil || errors.Is(err, ErrTooLarge):
		return err
	}
	return fmt.Errorf("line %d: %w: %w", p.sc.line, err, ErrMalformed)
}

// objParser is one pass over an OBJ.
type objParser struct {
	src    *objSource
	sc     *scanner
	fn     func(t *triangle) error
	nverts int      // "v" lines so far
	tri    triangle // passed to fn: a field, so that it is not allocated per call
}

func (p *objParser) parse(ctx context.Context) error {
	for lines := 0; ; lines++ {
		if lines%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		more, err := p.sc.skipSpace(false)
		if err != nil || !more {
			return err
		}
		if p.sc.buf[p.sc.pos] == '#' { // a comment, however long its words
			if err := p.sc.skipLine(); err != nil {
				return err
			}
			continue
		}
		tok, err := p.sc.token()
		if err != nil {
			return err
		}
		switch string(tok) {
		case "v":
			err = p.vertex()
		case "f":
			err = p.face(ctx)
		}
		if err != nil {
			return err
		}
		if err := p.sc.skipLine(); err != nil {
			return err
		}
	}
}

func (p *objParser) vertex() error {
	p.nverts++
	if p.src.loaded {
		return nil
	}
	if p.nverts > p.src.maxVerts {
		return fmt.Errorf("more than %d vertices, the most Options.MaxMeshBytes holds: %w", p.src.maxVerts, ErrTooLarge)
	}
	var v vec3
	for i := range v {
		tok, err := p.sc.nextOnLine()
		if err != nil {
			return err
		}
		if tok == nil {
			return fmt.Errorf("a vertex with %d coordinates", i)
		}
		var ok bool
		if v[i], ok = parseNumber(tok); !ok {
			return fmt.Errorf("vertex: %q is not a number", tok)
		}
	}
	if len(p.src.verts) == cap(p.src.verts) {
		grown := make([]float32, len(p.src.verts), min(max(2*cap(p.src.verts), 3*1024), 3*p.src.maxVerts))
		copy(grown, p.src.verts)
		p.src.verts = grown
	}
	p.src.verts = append(p.src.verts, float32(v[0]), float32(-v[2]), float32(v[1])) // Y-up to Z-up
	return nil
}

// face fans a polygon into triangles as its references are read, so a
// polygon of any length needs no memory.
func (p *objParser) face(ctx context.Context) error {
	t := &p.tri
	n := 0
	for {
		tok, err := p.sc.nextOnLine()
		if err != nil {
			return err
		}
		if tok == nil || tok[0] == '#' {
			break
		}
		v, err := p.reference(tok)
		if err != nil {
			return err
		}
		switch n {
		case 0:
			t[0] = v
		case 1:
			t[2] = v
		default:
			t[1], t[2] = t[2], v
			if err := p.fn(t); err != nil {
				return err
			}
			if n%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
		}
		n++
	}
	if n < 3 {
		return fmt.Errorf("a face of %d vertices", n)
	}
	return nil
}

// reference resolves one vertex reference of a face.
func (p *objParser) reference(tok []byte) (vec3, error) {
	num := tok
	if i := bytes.IndexByte(tok, '/'); i >= 0 {
		num = tok[:i]
	}
	idx, ok := parseInt(num)
	if !ok {
		return vec3{}, fmt.Errorf("face: %q is not a vertex reference", tok)
	}
	i := idx - 1
	if idx < 0 {
		i = int64(p.nverts) + idx
	}
	if idx == 0 || i < 0 || i >= int64(p.nverts) {
		return vec3{}, fmt.Errorf("face refers to vertex %d of %d", idx, p.nverts)
	}
	v := p.src.verts[3*i : 3*i+3]
	return vec3{float64(v[0]), float64(v[1]), float64(v[2])}, nil
}
