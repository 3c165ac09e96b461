// Package zipstream lays out a ZIP archive of remote files and serves it as a
// seekable stream, so that an HTTP handler can answer a group download with
// http.ServeContent: the length is known before the first byte, a single
// Range request resumes a broken download, and no entry data is buffered.
//
// The archive is a pure function of its entries: entries are stored (method
// 0) with their CRC-32 and sizes in the local headers (no data descriptors),
// names are UTF-8 (flag bit 11), times are MS-DOS times in UTC plus the
// extended timestamp field (0x5455), and ZIP64 fields appear only where a
// size, an offset or the entry count needs them. Headers and the central
// directory are generated from the layout on demand; entry data is read
// through Entry.Open at the offset a Seek asks for.
package zipstream

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"time"
)

// Entry is one file of the archive.
type Entry struct {
	// Name is the file name as the catalog knows it. It is untrusted: New
	// makes it safe (SafeName) and unique.
	Name string
	// Size is the exact length of the entry's bytes.
	Size int64
	// CRC32 is the IEEE CRC-32 of the entry's bytes, known before streaming.
	CRC32 uint32
	// Modified is the entry's modification time; it is stored in UTC.
	Modified time.Time
	// Open returns the entry's bytes from offset off to the end. It is
	// called lazily, once per contiguous read, and never for an empty entry.
	Open func(ctx context.Context, off int64) (io.ReadCloser, error)
}

// ReadSeekCloser is the stream returned by Archive.Reader.
type ReadSeekCloser = io.ReadSeekCloser

// Errors reported by New and by the archive's readers; they are wrapped with
// the entry's index and name.
var (
	// ErrInvalidEntry reports an entry New cannot lay out.
	ErrInvalidEntry = errors.New("invalid zip entry")
	// ErrShortEntry reports an entry reader that ended before Entry.Size.
	ErrShortEntry = errors.New("zip entry shorter than its size")
	// ErrChecksum reports an entry read from start to end whose bytes do
	// not match Entry.CRC32.
	ErrChecksum = errors.New("zip entry checksum mismatch")
	// ErrClosed reports a read from a closed reader.
	ErrClosed = errors.New("zip stream closed")
)

// ZIP format constants (APPNOTE.TXT 6.3).
const (
	sigLocal     = 0x04034b50
	sigCentral   = 0x02014b50
	sigEnd       = 0x06054b50
	sigEnd64     = 0x06064b50
	sigLocator64 = 0x07064b50

	localLen     = 30
	centralLen   = 46
	endLen       = 22
	end64Len     = 56
	locator64Len = 20

	tagZip64   = 0x0001
	tagExtTime = 0x5455
	extTimeLen = 4 + 5 // tag, size, flags, mtime

	max16 = 0xFFFF
	max32 = 0xFFFFFFFF

	flagUTF8     = 1 << 11
	versionStore = 20
	versionZip64 = 45
	madeByUnix   = 3 << 8
	modeFile     = 0o100644 << 16 // regular file, rw-r--r--, in the Unix high half
)

// entry is an Entry placed in the archive.
type entry struct {
	name      string
	size      int64
	crc       uint32
	dosTime   uint16
	dosDate   uint16
	unixTime  uint32
	hasUnix   bool
	zip64Size bool // the size needs 8 bytes: ZIP64 fields in both headers
	zip64Off  bool // the local header offset needs 8 bytes: ZIP64 field in the central record
	open      func(ctx context.Context, off int64) (io.ReadCloser, error)
	local     int64 // offset of the local header
	data      int64 // offset of the data
	central   int64 // offset of the central directory record
}

// Archive is the immutable layout of a ZIP archive. It is safe for
// concurrent use; each Reader is not.
type Archive struct {
	entries []entry
	cdOff   int64 // offset of the central directory
	tailOff int64 // offset of the end records (ZIP64 end record when zip64)
	zip64   bool  // the ZIP64 end record and locator are present
	size    int64
	modTime time.Time
	etag    string
}

// New lays out the archive of entries in the order given, with names made
// safe (SafeName) and unique (" (2)" before the extension, compared
// case-insensitively). It fails with ErrInvalidEntry for a negative size, a
// non-empty entry without Open, or an archive longer than an int64.
func New(entries []Entry) (*Archive, error) {
	names := make([]string, len(entries))
	for i, e := range entries {
		if e.Size < 0 || (e.Size > 0 && e.Open == nil) {
			return nil, fmt.Errorf("zipstream: new: entry %d (%q): size %d, open set %t: %w",
				i, e.Name, e.Size, e.Open != nil, ErrInvalidEntry)
		}
		names[i] = SafeName(e.Name)
	}
	names = uniqueNames(names)
	a := &Archive{entries: make([]entry, len(entries))}
	var off int64
	for i, e := range entries {
		p := place(e, names[i], off)
		if p.data > math.MaxInt64-p.size-1<<20 {
			return nil, fmt.Errorf("zipstream: new: entry %d (%q) ends past the largest offset: %w",
				i, e.Name, ErrInvalidEntry)
		}
		a.entries[i] = p
		off = p.data + p.size
		if t := e.Modified.UTC().Truncate(time.Second); t.After(a.modTime) {
			a.modTime = t
		}
	}
	a.cdOff = off
	for i := range a.entries {
		if off > math.MaxInt64-1<<20 {
			return nil, fmt.Errorf("zipstream: new: central directory ends past the largest offset: %w", ErrInvalidEntry)
		}
		a.entries[i].central = off
		off += centralRecordLen(&a.entries[i])
	}
	a.tailOff = off
	n := len(a.entries)
	a.zip64 = n >= max16 || a.tailOff-a.cdOff >= max32 || a.cdOff >= max32
	a.size = off + endLen
	if a.zip64 {
		a.size += end64Len + locator64Len
	}
	a.etag = a.computeETag()
	return a, nil
}

// place returns e laid out at offset off under the safe name.
func place(e Entry, name string, off int64) entry {
	p := entry{
		name: name, size: e.Size, crc: e.CRC32, open: e.Open, local: off,
		zip64Size: e.Size >= max32, zip64Off: off >= max32,
	}
	p.dosDate, p.dosTime = dosDateTime(e.Modified)
	if u := e.Modified.Unix(); !e.Modified.IsZero() && u >= 0 && u <= max32 {
		p.unixTime, p.hasUnix = uint32(u), true
	}
	p.data = off + localLen + int64(len(name)) + int64(localExtraLen(&p))
	return p
}

// dosDateTime returns t in UTC as an MS-DOS date and time (two-second
// resolution), clamped to the years 1980–2107 the format can hold.
func dosDateTime(t time.Time) (date, tm uint16) {
	t = t.UTC()
	switch {
	case t.Year() < 1980:
		t = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
	case t.Year() > 2107:
		t = time.Date(2107, 12, 31, 23, 59, 58, 0, time.UTC)
	}
	date = uint16((t.Year()-1980)<<9 | int(t.Month())<<5 | t.Day())
	tm = uint16(t.Hour()<<11 | t.Minute()<<5 | t.Second()/2)
	return date, tm
}

// localExtraLen is the length of e's local header extra fields.
func localExtraLen(e *entry) int {
	n := 0
	if e.zip64Size {
		n += 4 + 16
	}
	if e.hasUnix {
		n += extTimeLen
	}
	return n
}

// centralZip64Len is the length of the data of e's central ZIP64 field (0
// when it has none): the sizes, then the offset, each only when needed.
func centralZip64Len(e *entry) int {
	n := 0
	if e.zip64Size {
		n += 16
	}
	if e.zip64Off {
		n += 8
	}
	return n
}

// centralExtraLen is the length of e's central record extra fields.
func centralExtraLen(e *entry) int {
	n := 0
	if z := centralZip64Len(e); z > 0 {
		n += 4 + z
	}
	if e.hasUnix {
		n += extTimeLen
	}
	return n
}

// centralRecordLen is the length of e's central directory record.
func centralRecordLen(e *entry) int64 {
	return centralLen + int64(len(e.name)) + int64(centralExtraLen(e))
}

// version is the version needed to extract e: 4.5 when it uses ZIP64.
func (e *entry) version() uint16 {
	if e.zip64Size || e.zip64Off {
		return versionZip64
	}
	return versionStore
}

// Size returns the exact byte length of the archive.
func (a *Archive) Size() int64 { return a.size }

// Names returns the safe, unique entry names in order (a copy).
func (a *Archive) Names() []string {
	names := make([]string, len(a.entries))
	for i := range a.entries {
		names[i] = a.entries[i].name
	}
	return names
}

// ModTime returns the latest entry modification time in UTC, truncated to
// the second (zero when there are no entries), for Last-Modified.
func (a *Archive) ModTime() time.Time { return a.modTime }

// ETag returns a strong, quoted entity tag that changes whenever any byte of
// the archive would: a hash of the central directory and end records, which
// hold every name, size, CRC-32, time and offset. Setting it on the response
// lets http.ServeContent honour If-Range when a download resumes.
func (a *Archive) ETag() string { return a.etag }

// computeETag hashes the generated central directory and end records.
func (a *Archive) computeETag() string {
	h := sha256.New()
	h.Write([]byte("zipstream/1\x00"))
	buf := make([]byte, 0, 512)
	for i := range a.entries {
		buf = a.appendCentral(buf[:0], &a.entries[i])
		h.Write(buf)
	}
	h.Write(a.appendTail(buf[:0]))
	return `"` + hex.EncodeToString(h.Sum(nil)[:16]) + `"`
}

// appendLocal appends e's local file header to b.
func appendLocal(b []byte, e *entry) []byte {
	le := binary.LittleEndian
	b = le.AppendUint32(b, sigLocal)
	b = le.AppendUint16(b, e.version())
	b = le.AppendUint16(b, flagUTF8)
	b = le.AppendUint16(b, 0) // stored
	b = le.AppendUint16(b, e.dosTime)
	b = le.AppendUint16(b, e.dosDate)
	b = le.AppendUint32(b, e.crc)
	size32 := uint32(min(e.size, max32))
	b = le.AppendUint32(b, size32) // compressed
	b = le.AppendUint32(b, size32) // uncompressed
	b = le.AppendUint16(b, uint16(len(e.name)))
	b = le.AppendUint16(b, uint16(localExtraLen(e)))
	b = append(b, e.name...)
	if e.zip64Size {
		b = le.AppendUint16(b, tagZip64)
		b = le.AppendUint16(b, 16)
		b = le.AppendUint64(b, uint64(e.size)) // uncompressed
		b = le.AppendUint64(b, uint64(e.size)) // compressed
	}
	return appendExtTime(b, e)
}

// appendCentral appends e's central directory record to b.
func (a *Archive) appendCentral(b []byte, e *entry) []byte {
	le := binary.LittleEndian
	b = le.AppendUint32(b, sigCentral)
	b = le.AppendUint16(b, madeByUnix|e.version())
	b = le.AppendUint16(b, e.version())
	b = le.AppendUint16(b, flagUTF8)
	b = le.AppendUint16(b, 0) // stored
	b = le.AppendUint16(b, e.dosTime)
	b = le.AppendUint16(b, e.dosDate)
	b = le.AppendUint32(b, e.crc)
	size32 := uint32(min(e.size, max32))
	b = le.AppendUint32(b, size32) // compressed
	b = le.AppendUint32(b, size32) // uncompressed
	b = le.AppendUint16(b, uint16(len(e.name)))
	b = le.AppendUint16(b, uint16(centralExtraLen(e)))
	b = le.AppendUint16(b, 0) // comment length
	b = le.AppendUint16(b, 0) // disk number start
	b = le.AppendUint16(b, 0) // internal attributes
	b = le.AppendUint32(b, modeFile)
	b = le.AppendUint32(b, uint32(min(e.local, max32)))
	b = append(b, e.name...)
	if z := centralZip64Len(e); z > 0 {
		b = le.AppendUint16(b, tagZip64)
		b = le.AppendUint16(b, uint16(z))
		if e.zip64Size {
			b = le.AppendUint64(b, uint64(e.size)) // uncompressed
			b = le.AppendUint64(b, uint64(e.size)) // compressed
		}
		if e.zip64Off {
			b = le.AppendUint64(b, uint64(e.local))
		}
	}
	return appendExtTime(b, e)
}

// appendExtTime appends e's extended timestamp field (modification time
// only, the same in both headers) when e has one.
func appendExtTime(b []byte, e *entry) []byte {
	if !e.hasUnix {
		return b
	}
	le := binary.LittleEndian
	b = le.AppendUint16(b, tagExtTime)
	b = le.AppendUint16(b, 5)
	b = append(b, 1) // modification time present
	return le.AppendUint32(b, e.unixTime)
}

// appendTail appends the end records to b: the ZIP64 end record and its
// locator when a count, size or offset overflows, then the end record whose
// overflowing fields hold the 0xFFFF… marker.
func (a *Archive) appendTail(b []byte) []byte {
	le := binary.LittleEndian
	n := uint64(len(a.entries))
	cdSize := uint64(a.tailOff - a.cdOff)
	cdOff := uint64(a.cdOff)
	if a.zip64 {
		b = le.AppendUint32(b, sigEnd64)
		b = le.AppendUint64(b, end64Len-12) // size of the rest of the record
		b = le.AppendUint16(b, madeByUnix|versionZip64)
		b = le.AppendUint16(b, versionZip64)
		b = le.AppendUint32(b, 0) // this disk
		b = le.AppendUint32(b, 0) // disk of the central directory
		b = le.AppendUint64(b, n) // entries on this disk
		b = le.AppendUint64(b, n) // entries
		b = le.AppendUint64(b, cdSize)
		b = le.AppendUint64(b, cdOff)
		b = le.AppendUint32(b, sigLocator64)
		b = le.AppendUint32(b, 0) // disk of the ZIP64 end record
		b = le.AppendUint64(b, uint64(a.tailOff))
		b = le.AppendUint32(b, 1) // disks
	}
	b = le.AppendUint32(b, sigEnd)
	b = le.AppendUint16(b, 0) // this disk
	b = le.AppendUint16(b, 0) // disk of the central directory
	b = le.AppendUint16(b, uint16(min(n, max16)))
	b = le.AppendUint16(b, uint16(min(n, max16)))
	b = le.AppendUint32(b, uint32(min(cdSize, max32)))
	b = le.AppendUint32(b, uint32(min(cdOff, max32)))
	return le.AppendUint16(b, 0) // comment length
}
