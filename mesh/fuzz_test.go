package mesh

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"image"
	"math"
	"strconv"
	"testing"
	"time"
)

// fuzzOptions keep each fuzzed render small.
var fuzzOptions = Options{Size: 24, Supersample: 1, MaxInputSize: 1 << 20, MaxTriangles: 20_000, MaxMeshBytes: 1 << 20, MaxDuration: 10 * time.Second}

// checkFuzzed calls the unguarded render (a panic fails the target) and
// checks its contract: an image of the asked size, or an error wrapping one
// of the package's sentinels. The deadline is generous: meeting it means
// some input made the reader hang.
func checkFuzzed(t *testing.T, what string, call func(ctx context.Context) ([]byte, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), fuzzOptions.MaxDuration)
	defer cancel()
	img, err := call(ctx)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s: took longer than %v: %v", what, fuzzOptions.MaxDuration, err)
		}
		if outcomeOf(err).Kind == nil {
			t.Fatalf("%s: an error that wraps none of the sentinels: %v", what, err)
		}
		return
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(img))
	if err != nil || format != "jpeg" || cfg.Width != fuzzOptions.Size || cfg.Height != fuzzOptions.Size {
		t.Fatalf("%s: not a %d-pixel JPEG: %v %q %+v", what, fuzzOptions.Size, err, format, cfg)
	}
}

func FuzzSTL(f *testing.F) {
	f.Add(encodeBinarySTL(cube()))
	f.Add(encodeASCIISTL(tetrahedron()))
	f.Add(withCount(encodeBinarySTL(cube()), 4_000_000_000))
	f.Add([]byte("solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 nan\nvertex 1 1 1\nendloop\nendfacet\nendsolid\n"))
	f.Add(encodeBinarySTL(nanCube(1, 3, 5)))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFuzzed(t, "stl", func(ctx context.Context) ([]byte, error) {
			return render(ctx, bytes.NewReader(data), int64(len(data)), FormatSTL, fuzzOptions)
		})
	})
}

func FuzzOBJ(f *testing.F) {
	f.Add(objCube(false))
	f.Add(objCube(true))
	f.Add([]byte("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1e300 1 1\nf 1 2 3 4 -1 -2\n#" + string(make([]byte, 300)) + "\nf 1/1/1 2//2 3/3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFuzzed(t, "obj", func(ctx context.Context) ([]byte, error) {
			return render(ctx, bytes.NewReader(data), int64(len(data)), FormatOBJ, fuzzOptions)
		})
	})
}

// Fuzz3MF fuzzes a 3MF three ways, by mode: the package's bytes (mode 0),
// the model part inside a well-formed package (1), and the thumbnail inside
// one (2).
func Fuzz3MF(f *testing.F) {
	f.Add(uint8(0), make3MF(f, cubeModelXML(), zipFile{"Metadata/thumbnail.png", solidPNG(f, 8, 4, red, true)}))
	f.Add(uint8(1), []byte(cubeModelXML()))
	f.Add(uint8(1), []byte(nested(3, 4)))
	f.Add(uint8(1), []byte(wrapModel(`<object id="2"><components><component p:path="/3D/3dmodel.model" objectid="1" transform="1 0 0 0 1 0 0 0 1 3 3 3"/></components></object><object id="1">`+cubeMesh()+`</object>`,
		`<build><item objectid="2" transform="0 1 0 -1 0 0 0 0 1 0 0 0"/></build>`)))
	f.Add(uint8(1), []byte(`<model><!-- > --><![CDATA[ ]]> ]]><?p ?></model>`))
	f.Add(uint8(2), solidPNG(f, 16, 8, red, true))
	f.Add(uint8(2), jpegOf(f, 8, 16, red))
	f.Fuzz(func(t *testing.T, mode uint8, data []byte) {
		pkg := data
		switch mode % 3 {
		case 1:
			pkg = build3MF(t, zip.Store, string(data))
		case 2:
			pkg = build3MF(t, zip.Store, cubeModelXML(), zipFile{"Metadata/thumbnail.png", data})
		}
		r, size := bytes.NewReader(pkg), int64(len(pkg))
		checkFuzzed(t, "3mf", func(ctx context.Context) ([]byte, error) {
			return render(ctx, r, size, Format3MF, fuzzOptions)
		})
		checkFuzzed(t, "3mf thumbnail", func(ctx context.Context) ([]byte, error) {
			return thumbnail3MF(ctx, r, size, fuzzOptions)
		})
	})
}

// FuzzParseNumber checks the fast number parser against strconv.
func FuzzParseNumber(f *testing.F) {
	for _, s := range []string{"0", "-1.5", "+2e10", "1.25E-3", ".5", "5.", "1e400", "nan", "-inf", "0x1p3", "1e", "--1", "123456789012345678901234567890"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseNumber(s)
		want, err := strconv.ParseFloat(s, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			if ok {
				t.Fatalf("parseNumber(%q) = %v, strconv refuses it: %v", s, got, err)
			}
			return
		}
		if !ok {
			t.Fatalf("parseNumber(%q) refused, strconv reads %v", s, want)
		}
		if math.IsNaN(want) != math.IsNaN(got) || !math.IsNaN(want) && math.Abs(got-want) > 1e-12*math.Abs(want) && !(math.IsInf(want, 0) && got == want) {
			t.Fatalf("parseNumber(%q) = %v, strconv %v", s, got, want)
		}
	})
}
