package mesh

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// Binary STL: an 80-byte header, a little-endian uint32 triangle count,
// then 50 bytes a triangle (normal, three corners as float32, a 2-byte
// attribute). ASCII STL: "solid name", facets of "facet normal n n n /
// outer loop / vertex x y z ×3 / endloop / endfacet", "endsolid name".
const (
	stlHeaderLen = 84
	stlRecordLen = 50
	// stlChunk is how many binary records one read takes (about 256 KiB).
	stlChunk = 5243
	// maxLoopVertices bounds an ASCII STL loop (3 by the format; some
	// writers put polygons there, which are fanned).
	maxLoopVertices = 64
)

// utf8BOM is the byte-order mark some editors put before "solid".
var utf8BOM = []byte("\xef\xbb\xbf")

// openSTL tells binary from ASCII STL: a binary file's size is exactly what
// its triangle count says (many binary headers start with "solid" too); a
// file of another size is ASCII if it starts with "solid", else a binary one
// whose count lies.
func openSTL(r io.ReaderAt, size int64, opts Options) (source, error) {
	head := make([]byte, min(size, stlHeaderLen))
	if _, err := r.ReadAt(head, 0); err != nil && !(errors.Is(err, io.EOF) && len(head) == int(size)) {
		return nil, fmt.Errorf("read header: %w", err)
	}
	ascii := bytes.HasPrefix(bytes.ToLower(bytes.TrimLeft(bytes.TrimPrefix(head, utf8BOM), " \t\r\n")), []byte("solid"))
	if size < stlHeaderLen {
		if ascii {
			return &asciiSTL{r: r, size: size}, nil
		}
		return nil, fmt.Errorf("%d bytes, shorter than the %d-byte header of a binary STL, and not ASCII (no \"solid\"): %w", size, stlHeaderLen, ErrMalformed)
	}
	count := int64(binary.LittleEndian.Uint32(head[80:84]))
	holds := (size - stlHeaderLen) / stlRecordLen
	switch {
	case stlHeaderLen+count*stlRecordLen != size && ascii:
		return &asciiSTL{r: r, size: size}, nil
	case count > holds:
		return nil, fmt.Errorf("header says %d triangles, file holds %d: %w", count, holds, ErrMalformed)
	case count > int64(opts.MaxTriangles):
		return nil, fmt.Errorf("%d triangles, more than Options.MaxTriangles (%d): %w", count, opts.MaxTriangles, ErrTooLarge)
	}
	// The size the count says, or bytes after the last triangle (some
	// writers pad): the count rules.
	return &binarySTL{r: r, count: count}, nil
}

// binarySTL streams the records of a binary STL.
type binarySTL struct {
	r     io.ReaderAt
	count int64
}

func (s *binarySTL) triangles(ctx context.Context, fn func(t *triangle) error) error {
	buf := make([]byte, stlChunk*stlRecordLen)
	var t triangle
	for done := int64(0); done < s.count; {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(s.count-done, stlChunk)
		chunk := buf[:n*stlRecordLen]
		off := stlHeaderLen + done*stlRecordLen
		if got, err := s.r.ReadAt(chunk, off); got < len(chunk) {
			return fmt.Errorf("read triangles at %d: %w", off, err)
		}
		for rec := chunk; len(rec) >= stlRecordLen; rec = rec[stlRecordLen:] {
			for i := range 9 {
				t[i/3][i%3] = float64(math.Float32frombits(binary.LittleEndian.Uint32(rec[12+4*i:])))
			}
			if err := fn(&t); err != nil {
				return err
			}
		}
		done += n
	}
	return nil
}

// asciiSTL streams the facets of an ASCII STL.
type asciiSTL struct {
	r    io.ReaderAt
	size int64
}

func (s *asciiSTL) triangles(ctx context.Context, fn func(t *triangle) error) error {
	p := stlParser{sc: newScanner(s.r, s.size), fn: fn}
	if err := p.parse(ctx); err != nil {
		if ctx.Err() != nil || errors.Is(err, ErrTooLarge) {
			return err
		}
		return fmt.Errorf("ascii, line %d: %w: %w", p.sc.line, err, ErrMalformed)
	}
	return nil
}

// stlParser is one pass over an ASCII STL.
type stlParser struct {
	sc   *scanner
	fn   func(t *triangle) error
	loop [maxLoopVertices]vec3
	n    int      // vertices in loop
	tri  triangle // passed to fn: a field, so that it is not allocated per call
}

func (p *stlParser) parse(ctx context.Context) error {
	first, err := p.sc.next()
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if !equalWord(bytes.TrimPrefix(first, utf8BOM), "solid") {
		return fmt.Errorf("not an ASCII STL: it does not start with \"solid\"")
	}
	if err := p.sc.skipLine(); err != nil { // the solid's name
		return err
	}
	for words := 0; ; words++ {
		if words%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		tok, err := p.sc.next()
		if errors.Is(err, io.EOF) {
			if p.n != 0 {
				return fmt.Errorf("the file ends inside a facet")
			}
			return nil // "endsolid" is often missing
		}
		if err != nil {
			return err
		}
		if err := p.keyword(tok); err != nil {
			return err
		}
	}
}

// keyword handles one statement of the facet grammar, leniently about
// order (writers differ) but strictly about every word.
func (p *stlParser) keyword(tok []byte) error {
	switch {
	case equalWord(tok, "vertex"):
		if p.n == maxLoopVertices {
			return fmt.Errorf("a loop of more than %d vertices", maxLoopVertices)
		}
		if err := p.numbers(p.loop[p.n][:], "vertex"); err != nil {
			return err
		}
		p.n++
	case equalWord(tok, "facet"):
		if err := p.expect("normal"); err != nil {
			return err
		}
		var n vec3
		return p.numbers(n[:], "facet normal")
	case equalWord(tok, "outer"):
		return p.expect("loop")
	case equalWord(tok, "endloop"):
		return p.emit()
	case equalWord(tok, "endfacet"):
	case equalWord(tok, "endsolid"), equalWord(tok, "solid"):
		if p.n != 0 {
			return fmt.Errorf("%q inside a facet", tok)
		}
		return p.sc.skipLine()
	default:
		return fmt.Errorf("unexpected %q", tok)
	}
	return nil
}

// emit fans the loop's vertices into triangles.
func (p *stlParser) emit() error {
	if p.n < 3 {
		return fmt.Errorf("a loop of %d vertices", p.n)
	}
	for i := 2; i < p.n; i++ {
		p.tri = triangle{p.loop[0], p.loop[i-1], p.loop[i]}
		if err := p.fn(&p.tri); err != nil {
			return err
		}
	}
	p.n = 0
	return nil
}

func (p *stlParser) expect(word string) error {
	tok, err := p.sc.next()
	if err != nil {
		return fmt.Errorf("want %q: %w", word, err)
	}
	if !equalWord(tok, word) {
		return fmt.Errorf("want %q, got %q", word, tok)
	}
	return nil
}

func (p *stlParser) numbers(dst []float64, what string) error {
	for i := range dst {
		tok, err := p.sc.next()
		if err != nil {
			return fmt.Errorf("%s: want %d numbers: %w", what, len(dst), err)
		}
		v, ok := parseNumber(tok)
		if !ok {
			return fmt.Errorf("%s: %q is not a number", what, tok)
		}
		dst[i] = v
	}
	return nil
}

// equalWord compares a token with a lower-case keyword, ignoring case.
func equalWord(tok []byte, word string) bool {
	return string(tok) == word || len(tok) == len(word) && bytes.EqualFold(tok, []byte(word))
}
