package zipstream

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sort"
)

// Reader returns a stream over the archive's bytes for http.ServeContent.
// Headers, the central directory and the end records are generated from the
// layout; entry data is read through Entry.Open with ctx, lazily, at the
// offset the stream is at, and re-opened only when a Seek moves away from
// where the open entry reader is. An entry read from its first to its last
// byte without a Seek is checked against its CRC-32 (ErrChecksum). Close
// releases the open entry reader. The stream is not safe for concurrent use;
// open one per request.
func (a *Archive) Reader(ctx context.Context) ReadSeekCloser {
	return &reader{a: a, ctx: ctx, scratch: make([]byte, 0, 512)}
}

// reader is the stream of one Archive.
type reader struct {
	a       *Archive
	ctx     context.Context
	pos     int64
	scratch []byte // one generated header or record, reused
	closed  bool

	cur    io.ReadCloser // the open entry reader, or nil
	curIdx int           // its entry
	curOff int64         // the offset in the entry it reads next
	crc    uint32        // CRC-32 of the bytes it read so far
	crcOn  bool          // it was opened at offset 0 and read without gaps
}

// Read implements io.Reader. It fills p across headers and entries, and
// returns early only when an entry reader returns fewer bytes than asked,
// so a slow remote source is never waited on for more than one read.
func (r *reader) Read(p []byte) (int, error) {
	if r.closed {
		return 0, fmt.Errorf("zipstream: read: %w", ErrClosed)
	}
	n := 0
	for n < len(p) {
		if r.pos >= r.a.size {
			if n == 0 {
				return 0, io.EOF
			}
			break
		}
		m, short, err := r.readAt(p[n:])
		n += m
		r.pos += int64(m)
		if err != nil {
			return n, err
		}
		if short {
			break
		}
	}
	return n, nil
}

// readAt reads the part of the archive at r.pos into p, up to the end of the
// header, data or record r.pos is in. short reports an entry reader's short
// read.
func (r *reader) readAt(p []byte) (n int, short bool, err error) {
	a := r.a
	switch {
	case r.pos >= a.tailOff:
		r.scratch = a.appendTail(r.scratch[:0])
		return copy(p, r.scratch[r.pos-a.tailOff:]), false, nil
	case r.pos >= a.cdOff:
		i := sort.Search(len(a.entries), func(i int) bool { return a.entries[i].central > r.pos }) - 1
		e := &a.entries[i]
		r.scratch = a.appendCentral(r.scratch[:0], e)
		return copy(p, r.scratch[r.pos-e.central:]), false, nil
	}
	i := sort.Search(len(a.entries), func(i int) bool { return a.entries[i].local > r.pos }) - 1
	e := &a.entries[i]
	if r.pos < e.data {
		r.scratch = appendLocal(r.scratch[:0], e)
		return copy(p, r.scratch[r.pos-e.local:]), false, nil
	}
	want := min(int64(len(p)), e.size-(r.pos-e.data))
	n, err = r.readData(p[:want], i, r.pos-e.data)
	return n, n < int(want), err
}

// readData reads entry i's bytes from offset off into p, which does not go
// past the entry's end, opening the entry when no open reader is at off.
func (r *reader) readData(p []byte, i int, off int64) (int, error) {
	e := &r.a.entries[i]
	if r.cur == nil || r.curIdx != i || r.curOff != off {
		if err := r.openEntry(i, off); err != nil {
			return 0, err
		}
	}
	n, err := r.cur.Read(p)
	r.curOff += int64(n)
	if r.crcOn {
		r.crc = crc32.Update(r.crc, crc32.IEEETable, p[:n])
	}
	if r.curOff == e.size {
		return n, r.finishEntry(e)
	}
	switch {
	case errors.Is(err, io.EOF):
		r.closeCur()
		return n, fmt.Errorf("zipstream: read entry %d (%q): ended at %d of %d bytes: %w",
			i, e.name, r.curOff, e.size, ErrShortEntry)
	case err != nil:
		r.closeCur()
		return n, fmt.Errorf("zipstream: read entry %d (%q) at %d: %w", i, e.name, r.curOff, err)
	}
	return n, nil
}

// openEntry replaces the open entry reader by one of entry i at off.
func (r *reader) openEntry(i int, off int64) error {
	r.closeCur()
	e := &r.a.entries[i]
	if err := r.ctx.Err(); err != nil {
		return fmt.Errorf("zipstream: open entry %d (%q) at %d: %w", i, e.name, off, err)
	}
	rc, err := e.open(r.ctx, off)
	if err != nil {
		return fmt.Errorf("zipstream: open entry %d (%q) at %d: %w", i, e.name, off, err)
	}
	r.cur, r.curIdx, r.curOff = rc, i, off
	r.crc, r.crcOn = 0, off == 0
	return nil
}

// finishEntry closes the reader of e, which has delivered e's last byte,
// and checks its CRC-32 when it read all of e.
func (r *reader) finishEntry(e *entry) error {
	crc, crcOn := r.crc, r.crcOn
	if err := r.closeCur(); err != nil {
		return fmt.Errorf("zipstream: close entry %q: %w", e.name, err)
	}
	if crcOn && crc != e.crc {
		return fmt.Errorf("zipstream: read entry %q: crc32 %08x, want %08x: %w", e.name, crc, e.crc, ErrChecksum)
	}
	return nil
}

// closeCur closes the open entry reader, if any.
func (r *reader) closeCur() error {
	if r.cur == nil {
		return nil
	}
	err := r.cur.Close()
	r.cur, r.crcOn = nil, false
	return err
}

// Seek implements io.Seeker. Offsets past the end are allowed (reads there
// return io.EOF); negative ones are not. Seeking opens and closes nothing:
// the next Read does.
func (r *reader) Seek(offset int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = r.pos + offset
	case io.SeekEnd:
		abs = r.a.size + offset
	default:
		return r.pos, fmt.Errorf("zipstream: seek: invalid whence %d", whence)
	}
	if abs < 0 {
		return r.pos, fmt.Errorf("zipstream: seek: negative position %d", abs)
	}
	r.pos = abs
	return abs, nil
}

// Close releases the open entry reader; later reads fail with ErrClosed.
// Closing twice is allowed.
func (r *reader) Close() error {
	r.closed = true
	if err := r.closeCur(); err != nil {
		return fmt.Errorf("zipstream: close: %w", err)
	}
	return nil
}
