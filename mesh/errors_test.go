package mesh

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// outcome is what a test compares of a failed render: which sentinel the
// error wraps, and its message.
type outcome struct {
	Kind    error
	Message string
}

var sentinels = []error{ErrInvalidOptions, ErrNotModel, ErrMalformed, ErrEmpty, ErrTooLarge, ErrNoThumbnail, ErrInternal, context.Canceled, context.DeadlineExceeded}

func outcomeOf(err error) outcome {
	if err == nil {
		return outcome{}
	}
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return outcome{s, err.Error()}
		}
	}
	return outcome{nil, err.Error()}
}

// withCount returns a binary STL whose header's count is n.
func withCount(data []byte, n uint32) []byte {
	data = bytes.Clone(data)
	binary.LittleEndian.PutUint32(data[80:], n)
	return data
}

// nanCube is the cube with every coordinate of the given triangles NaN.
func nanCube(which ...int) []triangle {
	ts := cube()
	for _, i := range which {
		ts[i][0][0], ts[i][1][1], ts[i][2][2] = math.NaN(), math.Inf(1), math.NaN()
	}
	return ts
}

func TestRenderRefusesMalformedSTL(t *testing.T) {
	flat := []triangle{{{0, 0, 0}, {1, 1, 1}, {2, 2, 2}}, {{5, 5, 5}, {6, 6, 6}, {5, 5, 5}}}
	point := []triangle{{{1, 1, 1}, {1, 1, 1}, {1, 1, 1}}}
	cases := []struct {
		name string
		data []byte
		want outcome
	}{
		{"empty file", nil, outcome{ErrMalformed, `mesh: stl: 0 bytes, shorter than the 84-byte header of a binary STL, and not ASCII (no "solid"): malformed model`}},
		{"short binary", make([]byte, 60), outcome{ErrMalformed, `mesh: stl: 60 bytes, shorter than the 84-byte header of a binary STL, and not ASCII (no "solid"): malformed model`}},
		{"lying count", withCount(encodeBinarySTL(cube()), 4_000_000_000), outcome{ErrMalformed, "mesh: stl: header says 4000000000 triangles, file holds 12: malformed model"}},
		{"truncated", encodeBinarySTL(cube())[:84+50*12-7], outcome{ErrMalformed, "mesh: stl: header says 12 triangles, file holds 11: malformed model"}},
		{"zero triangles", encodeBinarySTL(nil), outcome{ErrEmpty, "mesh: stl: no triangles: model has nothing to draw"}},
		{"every coordinate bad", encodeBinarySTL(nanCube(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)), outcome{ErrEmpty, "mesh: stl: model has nothing to draw: none of the 12 triangles has usable coordinates"}},
		{"every corner the same point", encodeBinarySTL(point), outcome{ErrEmpty, "mesh: stl: model has nothing to draw: the 1 usable triangles of 1 have no extent"}},
		{"degenerate triangles", encodeBinarySTL(flat), outcome{ErrEmpty, "mesh: stl: model has nothing to draw: the 2 usable triangles are all degenerate"}},
		{"ascii ends in a facet", []byte("solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\n"), outcome{ErrMalformed, "mesh: stl: ascii, line 6: the file ends inside a facet: malformed model"}},
		{"ascii bad number", []byte("solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 zero\n"), outcome{ErrMalformed, `mesh: stl: ascii, line 4: vertex: "zero" is not a number: malformed model`}},
		{"ascii missing number", []byte("solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0"), outcome{ErrMalformed, "mesh: stl: ascii, line 4: vertex: want 3 numbers: EOF: malformed model"}},
		{"ascii unknown word", []byte("solid x\nfacet normal 0 0 1\nouter lop\n"), outcome{ErrMalformed, `mesh: stl: ascii, line 3: want "loop", got "lop": malformed model`}},
		{"ascii stray word", []byte("solid x\n\n\nbanana\n"), outcome{ErrMalformed, `mesh: stl: ascii, line 4: unexpected "banana": malformed model`}},
		{"ascii two-vertex loop", []byte("solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nendloop\n"), outcome{ErrMalformed, "mesh: stl: ascii, line 6: a loop of 2 vertices: malformed model"}},
		{"ascii word too long", []byte("solid x\nfacet normal 0 0 " + strings.Repeat("1", 300) + "\n"), outcome{ErrMalformed, "mesh: stl: ascii, line 2: facet normal: want 3 numbers: a word longer than 256 bytes: malformed model"}},
		{"ascii without facets", []byte("solid empty\nendsolid empty\n"), outcome{ErrEmpty, "mesh: stl: no triangles: model has nothing to draw"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := renderBytes(t, c.data, FormatSTL, Options{Size: 32})
			if got := outcomeOf(err); got != c.want {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestRenderRefusesMalformedOBJ(t *testing.T) {
	cases := []struct {
		name string
		data string
		opts Options
		want outcome
	}{
		{"reference past the end", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n", Options{}, outcome{ErrMalformed, "mesh: obj: line 4: face refers to vertex 9 of 3: malformed model"}},
		{"reference before the start", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf -1 -2 -4\n", Options{}, outcome{ErrMalformed, "mesh: obj: line 4: face refers to vertex -4 of 3: malformed model"}},
		{"reference zero", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n", Options{}, outcome{ErrMalformed, "mesh: obj: line 4: face refers to vertex 0 of 3: malformed model"}},
		{"reference not a number", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 x/1\n", Options{}, outcome{ErrMalformed, `mesh: obj: line 4: face: "x/1" is not a vertex reference: malformed model`}},
		{"two-vertex face", "v 0 0 0\nv 1 0 0\nf 1 2\n", Options{}, outcome{ErrMalformed, "mesh: obj: line 3: a face of 2 vertices: malformed model"}},
		{"vertex of two coordinates", "v 0 0\n", Options{}, outcome{ErrMalformed, "mesh: obj: line 1: a vertex with 2 coordinates: malformed model"}},
		{"vertex not a number", "v 0 0 nan0\n", Options{}, outcome{ErrMalformed, `mesh: obj: line 1: vertex: "nan0" is not a number: malformed model`}},
		{"no faces", "# only points\nv 0 0 0\nv 1 1 1\np 1 2\n", Options{}, outcome{ErrEmpty, "mesh: obj: no triangles: model has nothing to draw"}},
		{"more vertices than memory", strings.Repeat("v 1 2 3\n", 10), Options{MaxMeshBytes: 5 * vertexBytes}, outcome{ErrTooLarge, "mesh: obj: more than 5 vertices, the most Options.MaxMeshBytes holds: model over the limits"}},
		{"binary junk", "\x00\x01\x02 \xff\xfe\n\x7f", Options{}, outcome{ErrEmpty, "mesh: obj: no triangles: model has nothing to draw"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.opts.Size = 32
			_, err := renderBytes(t, []byte(c.data), FormatOBJ, c.opts)
			if got := outcomeOf(err); got != c.want {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// panicReader panics on every read, like a bug would.
type panicReader struct{}

func (panicReader) ReadAt([]byte, int64) (int, error) { panic("boom") }

// endlessASCII is an ASCII STL that never ends: it serves a facet forever.
type endlessASCII struct{}

func (endlessASCII) ReadAt(p []byte, off int64) (int, error) {
	const facet = "facet normal 0 0 1 outer loop vertex 0 0 0 vertex 1 0 0 vertex 0 1 0 endloop endfacet\n"
	if off == 0 {
		n := copy(p, "solid endless\n")
		return n + copy(p[n:], strings.Repeat(facet, len(p)/len(facet)+1)), nil
	}
	for i := range p {
		p[i] = facet[(int(off)+i-len("solid endless\n"))%len(facet)]
	}
	return len(p), nil
}

func TestRenderStopsAtItsBounds(t *testing.T) {
	cube := encodeBinarySTL(cube())
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name string
		ctx  context.Context
		r    interface {
			ReadAt([]byte, int64) (int, error)
		}
		size   int64
		format Format
		opts   Options
		want   outcome
	}{
		{"unknown format", context.Background(), bytes.NewReader(cube), int64(len(cube)), FormatUnknown, Options{}, outcome{ErrNotModel, "mesh: format 0: not a 3D model"}},
		{"over the input size", context.Background(), bytes.NewReader(cube), int64(len(cube)), FormatSTL, Options{MaxInputSize: 100}, outcome{ErrTooLarge, "mesh: stl: 684 bytes, over the limit of 100: model over the limits"}},
		{"size too small", context.Background(), bytes.NewReader(cube), int64(len(cube)), FormatSTL, Options{Size: 8}, outcome{ErrInvalidOptions, "mesh: render stl: size 8 outside 16–2048: invalid options"}},
		{"supersampling too fine", context.Background(), bytes.NewReader(cube), int64(len(cube)), FormatSTL, Options{Supersample: 9}, outcome{ErrInvalidOptions, "mesh: render stl: supersample 9 outside 1–4: invalid options"}},
		{"too many samples", context.Background(), bytes.NewReader(cube), int64(len(cube)), FormatSTL, Options{Size: 2048, Supersample: 4}, outcome{ErrInvalidOptions, "mesh: render stl: size 2048 × supersample 4 is over 4096 samples a side: invalid options"}},
		{"cancelled", cancelled, bytes.NewReader(cube), int64(len(cube)), FormatSTL, Options{}, outcome{context.Canceled, "mesh: stl: context canceled"}},
		{"a panic", context.Background(), panicReader{}, 1000, FormatSTL, Options{}, outcome{ErrInternal, "mesh: render stl: internal error of the mesh renderer: boom"}},
		{"endless input", context.Background(), endlessASCII{}, 1 << 30, FormatSTL, Options{MaxDuration: 50 * time.Millisecond}, outcome{context.DeadlineExceeded, "mesh: stl: context deadline exceeded"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Render(c.ctx, c.r, c.size, c.format, c.opts)
			got := outcomeOf(err)
			got.Message, _, _ = strings.Cut(got.Message, "\n") // a panic's stack follows
			if got != c.want {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestRenderSkipsBadVertices(t *testing.T) {
	ref, err := renderBytes(t, encodeBinarySTL(cube()), FormatSTL, Options{Size: 64})
	if err != nil {
		t.Fatal(err)
	}
	huge := append(cube(), triangle{{1e30, 0, 0}, {0, -1e12, 0}, {0, 0, 0}}, triangle{{5, 5, 5}, {5, 5, 5}, {5, 5, 5}})
	cases := []struct {
		name string
		ts   []triangle
	}{
		{"a triangle far out", huge},
		{"NaN and Inf corners", append(cube(), nanCube(0, 1, 2, 3)[:4]...)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img, err := renderBytes(t, encodeBinarySTL(c.ts), FormatSTL, Options{Size: 64})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(img, ref) {
				t.Errorf("looks %+v, the cube alone %+v", lookAt(t, img), lookAt(t, ref))
			}
		})
	}
}

func TestRenderRefusesMoreTrianglesThanTheBudget(t *testing.T) {
	cube := cube()
	cases := []struct {
		name   string
		data   []byte
		format Format
		want   outcome
	}{
		{"binary stl", encodeBinarySTL(cube), FormatSTL, outcome{ErrTooLarge, "mesh: stl: 12 triangles, more than Options.MaxTriangles (10): model over the limits"}},
		{"ascii stl", encodeASCIISTL(cube), FormatSTL, outcome{ErrTooLarge, "mesh: stl: more than 10 triangles, the most Options.MaxTriangles allows: model over the limits"}},
		{"obj", objCube(false), FormatOBJ, outcome{ErrTooLarge, "mesh: obj: more than 10 triangles, the most Options.MaxTriangles allows: model over the limits"}},
		{"3mf", make3MF(t, cubeModelXML()), Format3MF, outcome{ErrTooLarge, "mesh: 3mf: the build places more than 10 triangles and components: model over the limits"}},
		{"at the budget", encodeBinarySTL(cube[:10]), FormatSTL, outcome{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := renderBytes(t, c.data, c.format, Options{Size: 32, MaxTriangles: 10})
			if got := outcomeOf(err); got != c.want {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestDetect(t *testing.T) {
	cases := []struct {
		name string
		want Format
	}{
		{"Dragon Bust.STL", FormatSTL},
		{"dir/part.stl", FormatSTL},
		{`dir\model.OBJ`, FormatOBJ},
		{"plate.3mf", Format3MF},
		{"notes.stl.txt", FormatUnknown},
		{"archive.zip", FormatUnknown},
		{"stl", FormatUnknown},
		{"", FormatUnknown},
	}
	for _, c := range cases {
		if got := Detect(c.name); got != c.want {
			t.Errorf("Detect(%q) = %v, want %v", c.name, got, c.want)
		}
	}
}
