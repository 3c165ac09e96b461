package archive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync/atomic"
)

// filesRead counts the bytes read from files opened by OpenParts.
var filesRead atomic.Int64

// FilesBytesRead returns how many bytes this process has read from part
// files opened by OpenParts: every read of a spooled download (type
// detection, listing, preview extraction, upload, verification) goes
// through them, so it measures how often the spool is read back.
func FilesBytesRead() int64 { return filesRead.Load() }

// countingFile counts the bytes read from an opened part file.
type countingFile struct{ f *os.File }

func (c countingFile) ReadAt(b []byte, off int64) (int, error) {
	n, err := c.f.ReadAt(b, off)
	filesRead.Add(int64(n))
	return n, err
}

// Parts is a read-only view of several part files as one logical file, the
// concatenation of the parts in order. It implements io.ReaderAt and is safe
// for concurrent ReadAt calls. No bytes are copied to disk.
type Parts struct {
	files  []io.ReaderAt
	closer []io.Closer
	starts []int64 // logical offset of each part; len = len(files)+1
}

// newMemParts returns Parts over in-memory parts (tests and fuzzing).
func newMemParts(bs ...[]byte) *Parts {
	p := &Parts{starts: []int64{0}}
	for _, b := range bs {
		p.files = append(p.files, bytes.NewReader(b))
		p.starts = append(p.starts, p.starts[len(p.starts)-1]+int64(len(b)))
	}
	return p
}

// OpenParts opens the part files at paths (one path for a single file) as
// one logical file. Close releases them.
func OpenParts(paths ...string) (*Parts, error) {
	if len(paths) == 0 {
		return nil, errors.New("open parts: no paths")
	}
	p := &Parts{starts: []int64{0}}
	for _, name := range paths {
		f, err := os.Open(name)
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("open parts: %w", err)
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			p.Close()
			return nil, fmt.Errorf("open parts: %w", err)
		}
		p.files = append(p.files, countingFile{f})
		p.closer = append(p.closer, f)
		p.starts = append(p.starts, p.starts[len(p.starts)-1]+st.Size())
	}
	return p, nil
}

// Size is the total size of the parts.
func (p *Parts) Size() int64 { return p.starts[len(p.starts)-1] }

// Len is the number of parts.
func (p *Parts) Len() int { return len(p.files) }

// Part returns the i-th part and its size.
func (p *Parts) Part(i int) (io.ReaderAt, int64) { return p.files[i], p.starts[i+1] - p.starts[i] }

// ReadAt reads from the concatenation of the parts.
func (p *Parts) ReadAt(b []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("parts: negative offset")
	}
	total := 0
	for len(b) > 0 {
		if off >= p.Size() {
			return total, io.EOF
		}
		// Index of the part holding off.
		i := sort.Search(len(p.files), func(i int) bool { return p.starts[i+1] > off })
		in := off - p.starts[i]
		n := int64(len(b))
		if rem := p.starts[i+1] - off; n > rem {
			n = rem
		}
		m, err := p.files[i].ReadAt(b[:n], in)
		total += m
		off += int64(m)
		b = b[m:]
		if err != nil && !(errors.Is(err, io.EOF) && int64(m) == n) {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF // a part shrank after OpenParts
			}
			return total, err
		}
	}
	return total, nil
}

// Section returns a reader over the byte range r of the concatenation.
func (p *Parts) Section(r Range) *io.SectionReader {
	return io.NewSectionReader(p, r.Offset, r.Length)
}

// Close closes all part files.
func (p *Parts) Close() error {
	var errs []error
	for _, f := range p.closer {
		errs = append(errs, f.Close())
	}
	p.closer = nil
	return errors.Join(errs...)
}

// ctxReaderAt fails reads once ctx is done, so that a decoder reading from an
// archive stops at its next read when a deadline passes. It also counts the
// bytes read, for input budgets.
type ctxReaderAt struct {
	ctx   context.Context
	r     io.ReaderAt
	read  int64 // not atomic: decoders read from one goroutine
	limit int64 // > 0: fail reads beyond this many bytes in total
}

var errInputBudget = errors.New("input byte budget exceeded")

func (c *ctxReaderAt) ReadAt(b []byte, off int64) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	if c.limit > 0 && c.read+int64(len(b)) > c.limit {
		return 0, errInputBudget
	}
	n, err := c.r.ReadAt(b, off)
	c.read += int64(n)
	return n, err
}
