package archive

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// DefaultScanWindow is how far into a file Detect looks for an archive
// signature behind a prefix (self-extracting stubs are well below 1 MiB; 7-Zip
// and RAR SFX modules are about 200–600 KiB).
const DefaultScanWindow = 4 << 20

var (
	sigZipLocal = []byte("PK\x03\x04")
	sigZipEmpty = []byte("PK\x05\x06")
	sigZipSpan  = []byte("PK\x07\x08")
	sigZipEOCD  = []byte("PK\x05\x06")
	sigRar4     = []byte("Rar!\x1a\x07\x00")
	sigRar5     = []byte("Rar!\x1a\x07\x01\x00")
	sig7z       = []byte{'7', 'z', 0xbc, 0xaf, 0x27, 0x1c}
)

// Detection is the outcome of Detect.
type Detection struct {
	// Type is the decided type; Unknown when neither content nor name
	// says.
	Type Type
	// Offset is where the archive signature was found: 0 for magic at the
	// start, > 0 for a prefixed or self-extracting archive, -1 when the type
	// came from the name or the EOCD record alone.
	Offset int64
	// ByName is true when the content was not recognised and the name
	// decided (or confirmed a document).
	ByName bool
}

// Detect decides the type of a candidate file. Documents are decided by
// their extension and their content is not read (a .3mf is a ZIP inside but
// stays a DOCUMENT). Archives are decided by content: magic at offset 0, then
// a signature scan of the first window bytes (DefaultScanWindow when window
// <= 0) for prefixed and self-extracting archives, then a ZIP end-of-central-
// directory record at the end; the name is the fallback when the content is
// not recognised. The error is only an I/O error of r.
func Detect(r io.ReaderAt, size int64, name string, window int64) (Detection, error) {
	info, _ := ParseName(name)
	if info.Type == Document {
		return Detection{Type: Document, Offset: -1, ByName: true}, nil
	}
	t, off, err := detectContent(r, size, window)
	if err != nil {
		return Detection{}, err
	}
	if t != Unknown {
		return Detection{Type: t, Offset: off}, nil
	}
	return Detection{Type: info.Type, Offset: -1, ByName: info.Type != Unknown}, nil
}

// DetectFile is Detect over the file at filePath; name is the candidate's
// original file name (the spool file may be named differently).
func DetectFile(filePath, name string) (Detection, error) {
	f, err := os.Open(filePath)
	if err != nil {
		return Detection{}, fmt.Errorf("detect: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Detection{}, fmt.Errorf("detect: %w", err)
	}
	return Detect(f, st.Size(), name, 0)
}

// magicType returns the type whose signature starts b, if any.
func magicType(b []byte) Type {
	switch {
	case bytes.HasPrefix(b, sigRar5), bytes.HasPrefix(b, sigRar4):
		return RAR
	case bytes.HasPrefix(b, sig7z) && len(b) >= 8 && b[6] == 0:
		return SevenZ
	case bytes.HasPrefix(b, sigZipLocal), bytes.HasPrefix(b, sigZipEmpty), bytes.HasPrefix(b, sigZipSpan):
		return ZIP
	}
	return Unknown
}

func detectContent(r io.ReaderAt, size, window int64) (Type, int64, error) {
	if window <= 0 {
		window = DefaultScanWindow
	}
	n := min(size, window)
	if n <= 0 {
		return Unknown, 0, nil
	}
	// Magic at offset 0 (the common case) needs only the first bytes.
	head := make([]byte, min(n, 16))
	if _, err := r.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
		return Unknown, 0, fmt.Errorf("detect: %w", err)
	}
	if t := magicType(head); t != Unknown {
		return t, 0, nil
	}
	buf := make([]byte, n)
	if _, err := r.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
		return Unknown, 0, fmt.Errorf("detect: %w", err)
	}
	tb := make([]byte, min(size, eocdSearch))
	if _, err := r.ReadAt(tb, size-int64(len(tb))); err != nil && !errors.Is(err, io.EOF) {
		return Unknown, 0, fmt.Errorf("detect: %w", err)
	}
	t, off := decideContent(buf, tb)
	return t, off, nil
}

// eocdSearch is how far from the end a ZIP end-of-central-directory record
// may start: its 22 bytes plus a comment of at most 65535.
const eocdSearch = 65535 + 22

// decideContent decides a type from the first bytes of a file (its scan
// window) and its last bytes (at most eocdSearch): magic at offset 0, then
// the earliest plausible signature in the window (a prefixed or
// self-extracting archive), then a ZIP end-of-central-directory record in
// the tail (offset -1).
func decideContent(buf, tail []byte) (Type, int64) {
	if t := magicType(buf); t != Unknown {
		return t, 0
	}
	if t, at := scanSignatures(buf, len(buf)); t != Unknown {
		return t, int64(at)
	}
	if eocdIn(tail) {
		return ZIP, -1
	}
	return Unknown, 0
}

// scanLookahead is how many bytes from a signature's start magicType and
// plausible look at: a position of the scan window is decided once that
// many bytes from it are known (or the window or file ends before).
const scanLookahead = 30

// scanSignatures returns the earliest plausible archive signature that
// starts before limit in buf, and where; buf beyond limit is only looked
// at as what follows a signature. Unknown when there is none.
func scanSignatures(buf []byte, limit int) (Type, int) {
	best, bestAt := Unknown, -1
	for _, sig := range [][]byte{sigRar5, sigRar4, sig7z, sigZipLocal} {
		from := 0
		for from < limit {
			i := bytes.Index(buf[from:], sig)
			if i < 0 || from+i >= limit {
				break
			}
			at := from + i
			if t := magicType(buf[at:]); t != Unknown && plausible(t, buf[at:]) {
				if bestAt < 0 || at < bestAt {
					best, bestAt = t, at
				}
				break
			}
			from = at + 1
		}
	}
	return best, bestAt
}

// eocdIn reports whether tail, the last bytes of a file (at most
// eocdSearch), holds a ZIP end-of-central-directory record whose comment
// fits: a ZIP whose local headers are beyond the scan window (or absent
// from it).
func eocdIn(tail []byte) bool {
	for i := len(tail) - 22; i >= 0; i-- {
		if bytes.Equal(tail[i:i+4], sigZipEOCD) {
			commentLen := int(binary.LittleEndian.Uint16(tail[i+20:]))
			if i+22+commentLen <= len(tail) {
				return true
			}
		}
	}
	return false
}

// plausible checks a few header bytes after a signature found by scanning,
// so that random data containing "PK\x03\x04" is not taken for a ZIP.
func plausible(t Type, b []byte) bool {
	switch t {
	case ZIP:
		if len(b) < 30 {
			return false
		}
		version := binary.LittleEndian.Uint16(b[4:])
		method := binary.LittleEndian.Uint16(b[8:])
		nameLen := binary.LittleEndian.Uint16(b[26:])
		return version < 100 && (method <= 20 || method == 93 || method == 95 || method == 98 || method == 99) && nameLen > 0
	case SevenZ:
		return len(b) >= 8 && b[6] == 0 && b[7] < 10
	}
	return true
}
