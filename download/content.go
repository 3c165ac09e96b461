package download

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// Content is one file served to a browser, a download manager or a
// WebDAV client: a package (its parts joined back when hoard split it),
// one volume of a multi-volume set, or an archive made of several. Its
// bytes are read from Open's offset on, so a single Range costs only the
// chunks it covers.
type Content struct {
	// Name is the file's name as the catalog knows it (untrusted text:
	// callers make it safe for their headers or paths).
	Name string
	// Size is the exact byte length.
	Size int64
	// ETag is a strong entity tag, quoted ("…"), that changes whenever
	// the bytes could.
	ETag string
	// Modified is when the file was published.
	Modified time.Time
	open     func(ctx context.Context, off int64) (io.ReadCloser, error)
}

// NewContent returns a Content whose bytes from off on are open(ctx, off).
func NewContent(name string, size int64, etag string, modified time.Time, open func(ctx context.Context, off int64) (io.ReadCloser, error)) *Content {
	return &Content{Name: name, Size: size, ETag: etag, Modified: modified, open: open}
}

// Open returns the bytes from off to the end.
func (c *Content) Open(ctx context.Context, off int64) (io.ReadCloser, error) {
	if off < 0 || off > c.Size {
		return nil, fmt.Errorf("open %q at %d: outside its %d bytes", c.Name, off, c.Size)
	}
	if off == c.Size {
		return io.NopCloser(eofReader{}), nil
	}
	return c.open(ctx, off)
}

// ReadSeeker returns a reader over the bytes that may seek (http.ServeContent
// answers Range requests with it; a WebDAV file reads through it). The
// bytes are opened lazily at the position of the first Read after a Seek;
// Close releases what is open.
func (c *Content) ReadSeeker(ctx context.Context) io.ReadSeekCloser {
	return &seeker{ctx: ctx, c: c}
}

// seeker is Content.ReadSeeker.
type seeker struct {
	ctx  context.Context
	c    *Content
	pos  int64
	r    io.ReadCloser // open at rpos, or nil
	rpos int64
}

func (s *seeker) Read(p []byte) (int, error) {
	if s.pos >= s.c.Size {
		return 0, io.EOF
	}
	if s.r != nil && s.rpos != s.pos {
		_ = s.r.Close()
		s.r = nil
	}
	if s.r == nil {
		r, err := s.c.Open(s.ctx, s.pos)
		if err != nil {
			return 0, err
		}
		s.r, s.rpos = r, s.pos
	}
	if rest := s.c.Size - s.pos; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := s.r.Read(p)
	s.pos += int64(n)
	s.rpos += int64(n)
	if errors.Is(err, io.EOF) && s.pos < s.c.Size {
		err = fmt.Errorf("read %q: %w at %d of %d bytes", s.c.Name, io.ErrUnexpectedEOF, s.pos, s.c.Size)
	}
	return n, err
}

func (s *seeker) Seek(offset int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = s.pos + offset
	case io.SeekEnd:
		abs = s.c.Size + offset
	default:
		return s.pos, fmt.Errorf("seek %q: whence %d", s.c.Name, whence)
	}
	if abs < 0 {
		return s.pos, fmt.Errorf("seek %q: negative position %d", s.c.Name, abs)
	}
	s.pos = abs
	return abs, nil
}

func (s *seeker) Close() error {
	if s.r == nil {
		return nil
	}
	err := s.r.Close()
	s.r = nil
	return err
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
