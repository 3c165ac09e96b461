package mesh

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"runtime/debug"
	"strings"
	"time"
)

// Format is the file format of a model.
type Format int

// Formats Detect knows. FormatUnknown is the zero value: not a model.
const (
	FormatUnknown Format = iota
	FormatSTL
	FormatOBJ
	Format3MF
)

// String returns the format's usual extension without the dot ("stl"), or
// "unknown".
func (f Format) String() string {
	switch f {
	case FormatSTL:
		return "stl"
	case FormatOBJ:
		return "obj"
	case Format3MF:
		return "3mf"
	}
	return "unknown"
}

// Detect returns the format of a file from its name's extension (case does
// not matter): .stl, .obj and .3mf; FormatUnknown for anything else. Whether
// an STL is binary or ASCII is decided from its bytes when it is read.
func Detect(name string) Format {
	switch strings.ToLower(path.Ext(strings.ReplaceAll(name, `\`, "/"))) {
	case ".stl":
		return FormatSTL
	case ".obj":
		return FormatOBJ
	case ".3mf":
		return Format3MF
	}
	return FormatUnknown
}

// ContentType is the media type of every image this package returns.
const ContentType = "image/jpeg"

// Errors of Render, Thumbnail and Thumbnail3MF; the returned errors wrap
// them and name the problem.
var (
	// ErrNotModel means the input is not a model of a format this package
	// reads (an unknown Format, a ZIP without a 3MF model part).
	ErrNotModel = errors.New("not a 3D model")
	// ErrMalformed means the model's bytes break its format's rules
	// (truncated, a lying triangle count, a face naming a vertex that does
	// not exist, bad XML).
	ErrMalformed = errors.New("malformed model")
	// ErrEmpty means the model has nothing to draw: no triangles, or only
	// degenerate ones or ones with coordinates that are not finite numbers.
	ErrEmpty = errors.New("model has nothing to draw")
	// ErrTooLarge means the model is over one of Options' bounds (input
	// size, memory for its vertices, instanced triangles, image size).
	ErrTooLarge = errors.New("model over the limits")
	// ErrNoThumbnail means a 3MF package holds no embedded thumbnail.
	ErrNoThumbnail = errors.New("no embedded thumbnail")
	// ErrInternal means a bug in this package (a recovered panic).
	ErrInternal = errors.New("internal error of the mesh renderer")
	// ErrInvalidOptions means Options out of their documented ranges: the
	// caller's mistake, whatever the model.
	ErrInvalidOptions = errors.New("invalid options")
)

// Defaults of Options.
const (
	DefaultSize         = 512
	DefaultSupersample  = 2
	DefaultMaxInputSize = 1 << 30
	DefaultMaxTriangles = 25_000_000
	DefaultMaxMeshBytes = 64 << 20
	DefaultMaxDuration  = 30 * time.Second
)

// Limits of Options. MaxSamplesSide bounds Size × Supersample, and so the
// z-buffer (6 bytes a sample: at most 96 MiB).
const (
	MinSize        = 16
	MaxSize        = 2048
	MaxSupersample = 4
	MaxSamplesSide = 4096
)

// Options bound and shape a render. The zero value selects every default.
type Options struct {
	// Size is the width and height of the image in pixels (DefaultSize,
	// MinSize–MaxSize).
	Size int
	// Supersample is the samples per pixel along each axis
	// (DefaultSupersample, 1–MaxSupersample, Size × Supersample at most
	// MaxSamplesSide): 2 draws 4 samples a pixel and averages them, which
	// smooths the edges.
	Supersample int
	// MaxInputSize is the largest file accepted, and for a 3MF the most
	// bytes its parts may decompress to (DefaultMaxInputSize).
	MaxInputSize int64
	// MaxTriangles is the most triangles a model may have, a 3MF's
	// components expanded (DefaultMaxTriangles, more than a binary STL of
	// DefaultMaxInputSize holds); a model with more is refused with
	// ErrTooLarge. A render costs about 0.2 s per million triangles.
	MaxTriangles int
	// MaxMeshBytes bounds the memory for the vertices of an OBJ and the
	// meshes of a 3MF (DefaultMaxMeshBytes; 12 bytes a vertex, 12 a 3MF
	// triangle, a few hundred a 3MF object or component). STL needs none:
	// it is streamed.
	MaxMeshBytes int64
	// MaxDuration is the render's own deadline (DefaultMaxDuration), on top
	// of the context's.
	MaxDuration time.Duration
}

func (o Options) withDefaults() (Options, error) {
	if o.Size == 0 {
		o.Size = DefaultSize
	}
	if o.Size < MinSize || o.Size > MaxSize {
		return o, fmt.Errorf("size %d outside %d–%d: %w", o.Size, MinSize, MaxSize, ErrInvalidOptions)
	}
	if o.Supersample == 0 {
		o.Supersample = DefaultSupersample
	}
	if o.Supersample < 1 || o.Supersample > MaxSupersample {
		return o, fmt.Errorf("supersample %d outside 1–%d: %w", o.Supersample, MaxSupersample, ErrInvalidOptions)
	}
	if side := o.Size * o.Supersample; side > MaxSamplesSide {
		return o, fmt.Errorf("size %d × supersample %d is over %d samples a side: %w", o.Size, o.Supersample, MaxSamplesSide, ErrInvalidOptions)
	}
	if o.MaxInputSize <= 0 {
		o.MaxInputSize = DefaultMaxInputSize
	}
	if o.MaxTriangles <= 0 {
		o.MaxTriangles = DefaultMaxTriangles
	}
	if o.MaxMeshBytes <= 0 {
		o.MaxMeshBytes = DefaultMaxMeshBytes
	}
	if o.MaxDuration <= 0 {
		o.MaxDuration = DefaultMaxDuration
	}
	return o, nil
}

// Render reads the model of the given format from r (size bytes) and
// returns a JPEG (ContentType) of Options.Size pixels square: the model in a
// neutral colour, lit from a fixed direction, seen from the front-right and
// above, centred and scaled to fill the frame, on a light background. The
// same bytes give the same image. A binary or ASCII STL is told apart by its
// bytes. Errors wrap ErrNotModel, ErrMalformed, ErrEmpty, ErrTooLarge,
// ErrInternal, ErrInvalidOptions or the context's error, and name the
// format and the problem. Render reads r with ReadAt only, holds no state
// between calls and may be called concurrently (on the same r too).
func Render(ctx context.Context, r io.ReaderAt, size int64, format Format, opts Options) ([]byte, error) {
	return guarded(ctx, "render "+format.String(), opts, func(ctx context.Context, opts Options) ([]byte, error) {
		return render(ctx, r, size, format, opts)
	})
}

// Thumbnail returns the picture a model file should show: a 3MF's embedded
// thumbnail when it has a readable one (see Thumbnail3MF), otherwise the
// model rendered (see Render). Errors are Render's.
func Thumbnail(ctx context.Context, r io.ReaderAt, size int64, format Format, opts Options) ([]byte, error) {
	return guarded(ctx, "thumbnail "+format.String(), opts, func(ctx context.Context, opts Options) ([]byte, error) {
		if format == Format3MF {
			if img, err := thumbnail3MF(ctx, r, size, opts); err == nil {
				return img, nil
			}
		}
		return render(ctx, r, size, format, opts)
	})
}

// Thumbnail3MF returns the thumbnail embedded in a 3MF package (the one its
// package relationships name, else one its model part's relationships
// name, else Metadata/thumbnail.png), decoded with bounds and re-encoded
// like a render: a JPEG of Options.Size pixels square, the picture scaled
// to fit and centred, transparency flattened onto the render background. A
// package without one gives ErrNoThumbnail; a thumbnail that is not a PNG
// or JPEG, or is over 8192 pixels a side, gives ErrMalformed or
// ErrTooLarge.
func Thumbnail3MF(ctx context.Context, r io.ReaderAt, size int64, opts Options) ([]byte, error) {
	return guarded(ctx, "3mf thumbnail", opts, func(ctx context.Context, opts Options) ([]byte, error) {
		return thumbnail3MF(ctx, r, size, opts)
	})
}

// guarded runs one call of the API: options defaulted and checked, the
// render's own deadline, and a panic turned into an error wrapping
// ErrInternal (with the stack), so that one hostile model cannot take the
// worker down.
func guarded(ctx context.Context, op string, opts Options, call func(context.Context, Options) ([]byte, error)) (img []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			img, err = nil, fmt.Errorf("mesh: %s: %w: %v\n%s", op, ErrInternal, p, debug.Stack())
		}
	}()
	opts, err = opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("mesh: %s: %w", op, err)
	}
	ctx, cancel := context.WithTimeout(ctx, opts.MaxDuration)
	defer cancel()
	return call(ctx, opts)
}

// render is Render without the panic guard, the defaults and the deadline:
// the fuzz targets call it so that a panic fails them.
func render(ctx context.Context, r io.ReaderAt, size int64, format Format, opts Options) ([]byte, error) {
	if size > opts.MaxInputSize {
		return nil, fmt.Errorf("mesh: %s: %d bytes, over the limit of %d: %w", format, size, opts.MaxInputSize, ErrTooLarge)
	}
	if size < 0 {
		return nil, fmt.Errorf("mesh: %s: negative size %d: %w", format, size, ErrMalformed)
	}
	var src source
	var err error
	switch format {
	case FormatSTL:
		src, err = openSTL(r, size, opts)
	case FormatOBJ:
		src, err = openOBJ(r, size, opts)
	case Format3MF:
		src, err = open3MF(ctx, r, size, opts)
	default:
		return nil, fmt.Errorf("mesh: format %d: %w", format, ErrNotModel)
	}
	if err != nil {
		return nil, fmt.Errorf("mesh: %s: %w", format, err)
	}
	img, err := paint(ctx, src, opts)
	if err != nil {
		return nil, fmt.Errorf("mesh: %s: %w", format, err)
	}
	return img, nil
}

// source is a model's triangles, which can be walked more than once.
type source interface {
	// triangles calls fn for every triangle of the model in a fixed order,
	// stopping at fn's first error. Triangles may have coordinates that are
	// not finite: the caller skips them.
	triangles(ctx context.Context, fn func(t *triangle) error) error
}
