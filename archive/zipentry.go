package archive

import (
	"compress/flate"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// Ranged reads of one ZIP entry. A ZIP file says where each entry's bytes
// lie: the end-of-central-directory record (in the last 64 KiB) points at the
// central directory, whose record for the entry gives the offset of the
// entry's local header and its compressed size; the local header's own name
// and extra lengths then give where the compressed bytes start. So an entry
// can be read from a remote file with a few small ranged reads, without the
// rest of the archive: see FindZipEntry, ZipEntrySpan.DataRange and
// ReadZipEntry. Every offset comes from untrusted bytes and is checked
// against the file's size before it is used.

// Sizes of the fixed parts of ZIP records.
const (
	zipLocalHeaderLen   = 30
	zipCentralHeaderLen = 46
)

// DefaultMaxZipDirectory is the largest central directory FindZipEntry reads
// by default (about 150,000 entries of typical name length).
const DefaultMaxZipDirectory = 16 << 20

// ErrNoRange means that an entry's byte range cannot be determined from the
// archive's own index (no end-of-central-directory record, a multi-disk
// Info-ZIP split, a directory over the budget); reading the whole archive is
// the only way left.
var ErrNoRange = errors.New("the entry's byte range cannot be determined")

// ErrUnsupportedMethod means that an entry is compressed with a method other
// than stored (0) or deflated (8).
var ErrUnsupportedMethod = errors.New("unsupported compression method")

// ZipEntrySpan is where one entry of a ZIP file lies, as its central
// directory record says. Offsets are in the file as read (an SFX stub before
// the archive is accounted for).
type ZipEntrySpan struct {
	Name string
	// HeaderOffset is the offset of the entry's local file header.
	HeaderOffset int64
	// Method is the compression method: 0 stored, 8 deflated.
	Method uint16
	// Flags are the general purpose flags (bit 0: encrypted).
	Flags          uint16
	CompressedSize int64
	Size           int64
	CRC32          uint32
}

// HeaderRange is the fixed part of the local header, the first read of an
// entry's bytes.
func (s ZipEntrySpan) HeaderRange() Range {
	return Range{Name: s.Name, Offset: s.HeaderOffset, Length: zipLocalHeaderLen, Source: -1}
}

// ParseZipLocalHeader checks the fixed 30-byte part of a local file header
// and returns the header's whole length (30 + name + extra), after which the
// entry's compressed bytes start.
func ParseZipLocalHeader(hdr []byte) (int64, error) {
	if len(hdr) < zipLocalHeaderLen {
		return 0, fmt.Errorf("zip local header: %d bytes, want %d", len(hdr), zipLocalHeaderLen)
	}
	if binary.LittleEndian.Uint32(hdr) != 0x04034b50 {
		return 0, errors.New("zip local header: bad signature")
	}
	nameLen := int64(binary.LittleEndian.Uint16(hdr[26:]))
	extraLen := int64(binary.LittleEndian.Uint16(hdr[28:]))
	return zipLocalHeaderLen + nameLen + extraLen, nil
}

// DataRange returns the byte range of the entry's compressed data in a file
// of size bytes, given the fixed part of its local header (HeaderRange). The
// sizes come from the central directory, which is right even when the local
// header defers them to a data descriptor.
func (s ZipEntrySpan) DataRange(localHeader []byte, size int64) (Range, error) {
	hlen, err := ParseZipLocalHeader(localHeader)
	if err != nil {
		return Range{}, err
	}
	start := s.HeaderOffset + hlen
	if s.HeaderOffset < 0 || s.CompressedSize < 0 || start > size || s.CompressedSize > size-start {
		return Range{}, fmt.Errorf("zip entry %q: data [%d, +%d) lies outside the file (%d bytes)", s.Name, start, s.CompressedSize, size)
	}
	return Range{Name: s.Name, Offset: start, Length: s.CompressedSize, Source: -1}, nil
}

// FindZipEntry locates the entry called name in the ZIP file of size bytes
// read through r: it reads the end-of-central-directory record (and its
// zip64 form) from the tail and then the central directory, at most
// maxDirectory bytes of it (DefaultMaxZipDirectory when <= 0). It returns
// ErrNoRange when the archive's index cannot be used, ErrEntryNotFound when
// no file entry has that exact name. r is typically a remote file whose
// ReadAt costs a download, so nothing else is read.
func FindZipEntry(r io.ReaderAt, size int64, name string, maxDirectory int64) (ZipEntrySpan, error) {
	return findZipEntry(r, size, name, maxDirectory, ExtractOptions{})
}

// findZipEntry is FindZipEntry matching names with opts.NameKey.
func findZipEntry(r io.ReaderAt, size int64, name string, maxDirectory int64, opts ExtractOptions) (ZipEntrySpan, error) {
	if maxDirectory <= 0 {
		maxDirectory = DefaultMaxZipDirectory
	}
	// Most archives have no comment: look in the last KiB first, so that a
	// remote read of the tail costs one download chunk, not two.
	rec := &errRecorder{r: r}
	end, ok := readZipEndWithin(rec, size, 1<<10)
	if !ok && rec.err == nil {
		end, ok = readZipEnd(rec, size)
	}
	if rec.err != nil {
		return ZipEntrySpan{}, fmt.Errorf("read end of central directory: %w", rec.err)
	}
	if !ok {
		return ZipEntrySpan{}, fmt.Errorf("%w: no end of central directory", ErrNoRange)
	}
	if end.disk != 0 || end.cdDisk != 0 {
		return ZipEntrySpan{}, fmt.Errorf("%w: multi-disk ZIP", ErrNoRange)
	}
	if end.cdSize > uint64(maxDirectory) {
		return ZipEntrySpan{}, fmt.Errorf("%w: central directory of %d bytes is over the budget of %d", ErrNoRange, end.cdSize, maxDirectory)
	}
	if end.cdOffset > uint64(size) {
		return ZipEntrySpan{}, fmt.Errorf("%w: central directory offset %d is beyond the file", ErrNoRange, end.cdOffset)
	}
	// A prefixed (SFX) archive: offsets are relative to where the archive
	// starts, which is where the directory must end before the EOCD.
	base := max(end.eocdPos-int64(end.cdSize)-int64(end.cdOffset), 0)
	start := base + int64(end.cdOffset)
	if start > size || int64(end.cdSize) > size-start {
		return ZipEntrySpan{}, fmt.Errorf("%w: central directory [%d, +%d) is outside the file", ErrNoRange, start, end.cdSize)
	}
	dir := make([]byte, end.cdSize)
	if _, err := r.ReadAt(dir, start); err != nil && !(errors.Is(err, io.EOF) && len(dir) == 0) {
		return ZipEntrySpan{}, fmt.Errorf("read central directory: %w", err)
	}
	span, err := findZipEntryInDirectory(dir, name, opts)
	if err != nil {
		return ZipEntrySpan{}, err
	}
	if span.HeaderOffset > size-base {
		return ZipEntrySpan{}, fmt.Errorf("zip entry %q: local header offset %d is beyond the file", name, span.HeaderOffset)
	}
	span.HeaderOffset += base
	return span, nil
}

// FindZipEntryInDirectory scans the central directory records in dir for a
// file entry named name and returns its span with HeaderOffset relative to
// the archive's start. A truncated or corrupt directory ends the scan;
// ErrEntryNotFound when the name is not among the records read.
func FindZipEntryInDirectory(dir []byte, name string) (ZipEntrySpan, error) {
	return findZipEntryInDirectory(dir, name, ExtractOptions{})
}

// findZipEntryInDirectory is FindZipEntryInDirectory matching names with
// opts.NameKey.
func findZipEntryInDirectory(dir []byte, name string, opts ExtractOptions) (ZipEntrySpan, error) {
	for len(dir) >= zipCentralHeaderLen {
		hdr := dir[:zipCentralHeaderLen]
		if binary.LittleEndian.Uint32(hdr) != 0x02014b50 {
			break
		}
		nameLen := int(binary.LittleEndian.Uint16(hdr[28:]))
		extraLen := int(binary.LittleEndian.Uint16(hdr[30:]))
		commentLen := int(binary.LittleEndian.Uint16(hdr[32:]))
		recLen := zipCentralHeaderLen + nameLen + extraLen + commentLen
		if recLen > len(dir) {
			break
		}
		// Compared without a key as bytes: no string is allocated per record.
		raw := dir[zipCentralHeaderLen : zipCentralHeaderLen+nameLen]
		if opts.NameKey == nil && string(raw) != name || opts.NameKey != nil && opts.NameKey(string(raw)) != name {
			dir = dir[recLen:]
			continue
		}
		s := ZipEntrySpan{
			Name:           name,
			Flags:          binary.LittleEndian.Uint16(hdr[8:]),
			Method:         binary.LittleEndian.Uint16(hdr[10:]),
			CRC32:          binary.LittleEndian.Uint32(hdr[16:]),
			CompressedSize: int64(binary.LittleEndian.Uint32(hdr[20:])),
			Size:           int64(binary.LittleEndian.Uint32(hdr[24:])),
			HeaderOffset:   int64(binary.LittleEndian.Uint32(hdr[42:])),
		}
		applyZip64Extra(dir[zipCentralHeaderLen+nameLen:zipCentralHeaderLen+nameLen+extraLen],
			&s.Size, &s.CompressedSize, &s.HeaderOffset)
		if s.Size < 0 || s.CompressedSize < 0 || s.HeaderOffset < 0 {
			return ZipEntrySpan{}, fmt.Errorf("zip entry %q: sizes or offset overflow", name)
		}
		if len(name) > 0 && name[len(name)-1] == '/' {
			return ZipEntrySpan{}, fmt.Errorf("zip entry %q is a directory: %w", name, ErrEntryNotFound)
		}
		return s, nil
	}
	return ZipEntrySpan{}, ErrEntryNotFound
}

// ReadZipEntry returns the uncompressed bytes of the entry called name of the
// ZIP file of size bytes read through r, reading only the archive's tail,
// its central directory, the entry's local header and its compressed bytes.
// opts bounds the entry size (MaxSize), the bytes read from r (MaxInput) and
// the time (Timeout); the CRC-32 is checked. Encrypted entries are refused
// (ErrEncrypted), methods other than stored and deflated are
// ErrUnsupportedMethod, and an unusable index is ErrNoRange. Decoder panics
// become errors.
func ReadZipEntry(ctx context.Context, r io.ReaderAt, size int64, name string, opts ExtractOptions) (data []byte, err error) {
	opts = opts.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			data, err = nil, fmt.Errorf("read zip entry %q: decoder failure: %v", name, p)
		}
	}()
	ra := &ctxReaderAt{ctx: ctx, r: r, limit: opts.MaxInput}
	span, err := findZipEntry(ra, size, name, min(opts.MaxInput, DefaultMaxZipDirectory), opts)
	if err != nil {
		return nil, fmt.Errorf("read zip entry %q: %w", name, err)
	}
	if span.Flags&0x1 != 0 {
		return nil, fmt.Errorf("read zip entry %q: %w", name, ErrEncrypted)
	}
	if span.Size > opts.MaxSize {
		return nil, fmt.Errorf("read zip entry %q: %w", name, ErrTooLarge)
	}
	// Deflate never grows data by more than a few bytes per 16 KiB block.
	if span.CompressedSize > opts.MaxSize+opts.MaxSize/100+(64<<10) {
		return nil, fmt.Errorf("read zip entry %q: compressed size %d: %w", name, span.CompressedSize, ErrTooLarge)
	}
	if span.Method != 0 && span.Method != 8 {
		return nil, fmt.Errorf("read zip entry %q: method %d: %w", name, span.Method, ErrUnsupportedMethod)
	}
	hr := span.HeaderRange()
	hdr := make([]byte, hr.Length)
	if _, err := ra.ReadAt(hdr, hr.Offset); err != nil {
		return nil, fmt.Errorf("read zip entry %q: local header: %w", name, err)
	}
	dr, err := span.DataRange(hdr, size)
	if err != nil {
		return nil, fmt.Errorf("read zip entry %q: %w", name, err)
	}
	var src io.Reader = io.NewSectionReader(ra, dr.Offset, dr.Length)
	if span.Method == 8 {
		fr := flate.NewReader(src)
		defer fr.Close()
		src = fr
	}
	data, err = readLimited(src, opts.MaxSize)
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		return nil, fmt.Errorf("read zip entry %q: %w", name, err)
	}
	if int64(len(data)) != span.Size {
		return nil, fmt.Errorf("read zip entry %q: %d bytes, the directory says %d", name, len(data), span.Size)
	}
	if crc32.ChecksumIEEE(data) != span.CRC32 {
		return nil, fmt.Errorf("read zip entry %q: checksum mismatch", name)
	}
	return data, nil
}

// errRecorder keeps the first read error other than io.EOF: readZipEnd
// treats every failed read as "no record", which must not hide a failed
// download.
type errRecorder struct {
	r   io.ReaderAt
	err error
}

func (e *errRecorder) ReadAt(b []byte, off int64) (int, error) {
	n, err := e.r.ReadAt(b, off)
	if err != nil && !errors.Is(err, io.EOF) && e.err == nil {
		e.err = err
	}
	return n, err
}
