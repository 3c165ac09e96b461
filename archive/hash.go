package archive

import (
	"context"
	"crypto/sha256"
	"encoding"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"slices"
	"sync"
)

// DefaultHashWindow is how many bytes ahead of the hashed offset a
// HashingWriter keeps in memory by default.
const DefaultHashWindow = 32 << 20

// ErrClosed is returned by writes to, and waits in, a closed HashingWriter.
var ErrClosed = errors.New("hashing writer closed")

// HashState is the resumable state of a SHA-256 computed in order over a
// file: the hash of the bytes before Offset. Digest is the marshalled state
// of crypto/sha256 (encoding.BinaryMarshaler).
type HashState struct {
	Offset int64
	Digest []byte
}

// MarshalBinary encodes the state for storage: 8 bytes big-endian offset,
// then the digest state.
func (s HashState) MarshalBinary() ([]byte, error) {
	b := binary.BigEndian.AppendUint64(nil, uint64(s.Offset))
	return append(b, s.Digest...), nil
}

// UnmarshalBinary decodes a state written by MarshalBinary.
func (s *HashState) UnmarshalBinary(b []byte) error {
	if len(b) < 8 {
		return errors.New("hash state: too short")
	}
	s.Offset = int64(binary.BigEndian.Uint64(b))
	if s.Offset < 0 {
		return errors.New("hash state: negative offset")
	}
	s.Digest = slices.Clone(b[8:])
	return nil
}

// NextPart returns the state that continues this hash at offset 0 of the
// next part file of a set: a set is hashed as the concatenation of its parts.
func (s HashState) NextPart() HashState { return HashState{Digest: slices.Clone(s.Digest)} }

// NewHash returns a SHA-256 that resumes from state (a fresh one when Digest
// is empty).
func (s HashState) NewHash() (hash.Hash, error) {
	h := sha256.New()
	if len(s.Digest) == 0 {
		return h, nil
	}
	if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(s.Digest); err != nil {
		return nil, fmt.Errorf("hash state: %w", err)
	}
	return h, nil
}

// HashingWriter is an io.WriterAt that writes to a destination and computes
// the SHA-256 of the bytes in file order while parallel download chunks
// arrive out of order, without reading anything back from disk.
//
// Bytes at the next expected offset go straight into the hash. A chunk that
// arrives ahead is written to the destination and a copy is kept in memory
// until the gap before it fills; at most Window bytes are kept. A writer
// whose chunk would exceed the window blocks until the gap fills, its context
// is done, or Close is called. A chunk at (or overlapping) the expected
// offset never blocks, so downloaders that hand out chunks in order always
// progress. A chunk written twice must carry the same bytes; bytes before the
// hashed offset are not hashed again.
//
// HashingWriter is safe for concurrent use.
type HashingWriter struct {
	ctx    context.Context
	dst    io.WriterAt
	window int64

	mu       sync.Mutex
	h        hash.Hash
	next     int64
	pending  []chunk // sorted by off, each off > next
	buffered int64
	changed  chan struct{} // closed and replaced on progress
	closed   bool
	observer io.Writer // also sees the hashed bytes, in order
}

type chunk struct {
	off int64
	b   []byte
}

// NewHashingWriter returns a HashingWriter over dst that resumes from resume
// (the zero HashState starts at offset 0) and keeps at most window bytes
// ahead in memory (DefaultHashWindow when window <= 0). Writers blocked on
// the window give up when ctx is done.
func NewHashingWriter(ctx context.Context, dst io.WriterAt, resume HashState, window int64) (*HashingWriter, error) {
	h, err := resume.NewHash()
	if err != nil {
		return nil, err
	}
	if window <= 0 {
		window = DefaultHashWindow
	}
	return &HashingWriter{ctx: ctx, dst: dst, window: window, h: h, next: resume.Offset, changed: make(chan struct{})}, nil
}

// WriteAt writes p at off to the destination and feeds the hash.
func (w *HashingWriter) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("hashing writer: negative offset")
	}
	end := off + int64(len(p))
	w.mu.Lock()
	for {
		if w.closed {
			w.mu.Unlock()
			return 0, ErrClosed
		}
		if off <= w.next || end <= w.next || w.buffered+int64(len(p)) <= w.window {
			break
		}
		ch := w.changed
		w.mu.Unlock()
		select {
		case <-ch:
		case <-w.ctx.Done():
			return 0, fmt.Errorf("hashing writer: %w", w.ctx.Err())
		}
		w.mu.Lock()
	}
	// Reserve buffer space before the (unlocked) disk write so concurrent
	// writers cannot overshoot the window.
	ahead := off > w.next
	if ahead {
		w.buffered += int64(len(p))
	}
	w.mu.Unlock()

	n, err := w.dst.WriteAt(p, off)

	w.mu.Lock()
	defer w.mu.Unlock()
	if ahead {
		w.buffered -= int64(len(p))
	}
	if err != nil || w.closed {
		w.signal()
		if err == nil {
			err = ErrClosed
		}
		return n, err
	}
	switch {
	case end <= w.next:
		// Already hashed (a repeated chunk).
	case off <= w.next:
		w.feed(p[w.next-off:])
		w.next = end
		w.drain()
	default:
		w.insert(chunk{off: off, b: slices.Clone(p)})
		w.drain() // the gap may have filled while we wrote
	}
	w.signal()
	return n, nil
}

func (w *HashingWriter) insert(c chunk) {
	i, found := slices.BinarySearchFunc(w.pending, c.off, func(a chunk, off int64) int {
		switch {
		case a.off < off:
			return -1
		case a.off > off:
			return 1
		}
		return 0
	})
	if found {
		if len(w.pending[i].b) >= len(c.b) {
			return
		}
		w.buffered -= int64(len(w.pending[i].b))
		w.pending[i] = c
	} else {
		w.pending = slices.Insert(w.pending, i, c)
	}
	w.buffered += int64(len(c.b))
}

// drain hashes pending chunks that now touch the hashed offset.
func (w *HashingWriter) drain() {
	for len(w.pending) > 0 && w.pending[0].off <= w.next {
		c := w.pending[0]
		w.pending = w.pending[1:]
		w.buffered -= int64(len(c.b))
		if end := c.off + int64(len(c.b)); end > w.next {
			w.feed(c.b[w.next-c.off:])
			w.next = end
		}
	}
}

// Observe makes o see every byte the hash sees, in file order, under the
// writer's lock (o need not be safe for concurrent use; its errors are
// ignored). Call it before the first write.
func (w *HashingWriter) Observe(o io.Writer) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.observer = o
}

func (w *HashingWriter) feed(b []byte) {
	w.h.Write(b)
	if w.observer != nil {
		_, _ = w.observer.Write(b)
	}
}

func (w *HashingWriter) signal() {
	close(w.changed)
	w.changed = make(chan struct{})
}

// Offset returns how many bytes from the start have been hashed.
func (w *HashingWriter) Offset() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.next
}

// Buffered returns how many bytes ahead of Offset are held in memory.
func (w *HashingWriter) Buffered() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buffered
}

// State returns the resumable state at Offset. Chunks held ahead of Offset
// are not part of it: a resumed download must fetch them again.
func (w *HashingWriter) State() (HashState, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	d, err := w.h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return HashState{}, fmt.Errorf("hash state: %w", err)
	}
	return HashState{Offset: w.next, Digest: d}, nil
}

// Sum returns the SHA-256 of the bytes written so far. It fails when chunks
// ahead of a gap are still pending (the file has a hole) or when size >= 0
// and the hashed length differs from size.
func (w *HashingWriter) Sum(size int64) ([]byte, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) > 0 {
		return nil, fmt.Errorf("hashing writer: gap at offset %d before %d pending bytes", w.next, w.buffered)
	}
	if size >= 0 && w.next != size {
		return nil, fmt.Errorf("hashing writer: hashed %d bytes, want %d", w.next, size)
	}
	return w.h.Sum(nil), nil
}

// Close unblocks waiting writers (they return ErrClosed) and refuses later
// writes. It does not close the destination.
func (w *HashingWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closed = true
		w.signal()
	}
	return nil
}

// HashFiles returns the SHA-256 of the concatenation of the files at paths,
// continuing from resume (use the zero HashState to start fresh). It is the
// hash of a set over all its parts in order.
func HashFiles(ctx context.Context, resume HashState, paths ...string) ([]byte, error) {
	return HashFilesObserved(ctx, resume, nil, paths...)
}

// HashFilesObserved is HashFiles that also writes the bytes it hashes to
// observer (when not nil), in the same single pass: a Sniffer there types
// the files without another read.
func HashFilesObserved(ctx context.Context, resume HashState, observer io.Writer, paths ...string) ([]byte, error) {
	h, err := resume.NewHash()
	if err != nil {
		return nil, err
	}
	var dst io.Writer = h
	if observer != nil {
		dst = io.MultiWriter(h, observer)
	}
	buf := make([]byte, 128<<10)
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("hash files: %w", err)
		}
		_, err = io.CopyBuffer(dst, &ctxReader{ctx: ctx, r: f}, buf)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("hash files: %s: %w", p, err)
		}
	}
	return h.Sum(nil), nil
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
