package emulator

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync"
	"unicode/utf8"
)

// A generated ZIP (Generate.Zip) is laid out as
//
//	[local header, data] per seed file entry (stored, CRC known up front)
//	local header of the bulk entry (stored, flag 0x08: CRC and sizes in the data descriptor)
//	bulk: GenerateBytes(seed, 0 …)
//	data descriptor, central directory, end of central directory
//
// Everything but the bulk is small and kept in memory; the seed files are
// read from disk when asked for. The bulk's CRC-32 is the one thing that
// needs a pass over its bytes: it is computed once, streaming through a
// small buffer, started by the first read of the file (a download) and
// waited for only by reads of the tail that holds it. The emulator's memory
// stays flat whatever Size is.

// zipDOSDate and zipDOSTime are the entries' modification time, 2024-01-01
// 12:00, in MS-DOS form.
const (
	zipDOSDate = (2024-1980)<<9 | 1<<5 | 1
	zipDOSTime = 12 << 11
	zipMaxSize = 1<<32 - 1
)

// genZipEntry is one entry of a generated ZIP.
type genZipEntry struct {
	name   string
	path   string // seed file; empty for the bulk
	size   int64
	crc    uint32
	offset int64 // of its local header
}

// genZip is the layout of a generated ZIP; ReadAt produces its bytes.
type genZip struct {
	seed      int64
	size      int64
	head      []segment // before the bulk
	bulkStart int64
	bulkSize  int64
	entries   []genZipEntry // the last is the bulk

	start sync.Once
	done  chan struct{} // closed when tail is built
	tail  []byte        // data descriptor … end of central directory
	err   error
}

// segment is a range of the head: bytes in memory or a seed file.
type segment struct {
	off  int64
	data []byte
	path string
	size int64
}

func (s segment) len() int64 {
	if s.path != "" {
		return s.size
	}
	return int64(len(s.data))
}

func zipFlags(name string) uint16 {
	if !utf8.ValidString(name) {
		return 0
	}
	for _, r := range name {
		if r >= 0x80 {
			return 0x800 // names in UTF-8
		}
	}
	return 0
}

// localHeader is a stored entry's local file header.
func localHeader(name string, flags uint16, crc uint32, size int64) []byte {
	b := make([]byte, 30, 30+len(name))
	le := binary.LittleEndian
	le.PutUint32(b[0:], 0x04034b50)
	le.PutUint16(b[4:], 20)
	le.PutUint16(b[6:], flags)
	le.PutUint16(b[8:], 0) // stored
	le.PutUint16(b[10:], zipDOSTime)
	le.PutUint16(b[12:], zipDOSDate)
	le.PutUint32(b[14:], crc)
	le.PutUint32(b[18:], uint32(size))
	le.PutUint32(b[22:], uint32(size))
	le.PutUint16(b[26:], uint16(len(name)))
	return append(b, name...)
}

// zipLayout lays a generated ZIP out and reads the seed files' CRCs; the
// bulk's CRC is left to genZip.
func zipLayout(g Generate) (*genZip, error) {
	z := &genZip{seed: g.Seed, size: g.Size, done: make(chan struct{})}
	if g.Zip.Bulk == "" {
		return nil, errors.New("bulk (the generated entry's name) is required")
	}
	if g.Size > zipMaxSize {
		return nil, fmt.Errorf("size %d is over 4 GiB, which needs ZIP64", g.Size)
	}
	var off, cdSize int64
	for _, e := range g.Zip.Entries {
		if len(e.Name) > 0xffff {
			return nil, fmt.Errorf("entry name %.40q… is too long", e.Name)
		}
		crc, size, err := fileCRC(e.File)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", e.Name, err)
		}
		h := localHeader(e.Name, zipFlags(e.Name), crc, size)
		z.entries = append(z.entries, genZipEntry{name: e.Name, path: e.File, size: size, crc: crc, offset: off})
		z.head = append(z.head, segment{off: off, data: h}, segment{off: off + int64(len(h)), path: e.File, size: size})
		off += int64(len(h)) + size
		cdSize += 46 + int64(len(e.Name))
	}
	bulk := g.Zip.Bulk
	h := localHeader(bulk, zipFlags(bulk)|0x08, 0, 0)
	z.head = append(z.head, segment{off: off, data: h})
	z.bulkStart = off + int64(len(h))
	cdSize += 46 + int64(len(bulk))
	overhead := z.bulkStart + 16 + cdSize + 22
	z.bulkSize = g.Size - overhead
	if z.bulkSize < 0 {
		return nil, fmt.Errorf("size %d is smaller than the archive's %d bytes of entries and headers", g.Size, overhead)
	}
	z.entries = append(z.entries, genZipEntry{name: bulk, size: z.bulkSize, offset: off})
	return z, nil
}

// newGenZip returns the generated ZIP of g (g.Zip set).
func newGenZip(g Generate) (*genZip, error) {
	z, err := zipLayout(g)
	if err != nil {
		return nil, fmt.Errorf("generated zip %s: %w", g.Name, err)
	}
	return z, nil
}

// fileCRC reads a file's CRC-32 and size.
func fileCRC(path string) (uint32, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	h := crc32.NewIEEE()
	n, err := io.Copy(h, f)
	return h.Sum32(), n, err
}

// buildTail computes the bulk's CRC in one streaming pass and builds the
// data descriptor, central directory and end record.
func (z *genZip) buildTail() {
	defer close(z.done)
	buf := make([]byte, 1<<20)
	h := crc32.NewIEEE()
	for off := int64(0); off < z.bulkSize; {
		n := min(int64(len(buf)), z.bulkSize-off)
		GenerateBytes(z.seed, off, buf[:n])
		h.Write(buf[:n])
		off += n
	}
	bulk := &z.entries[len(z.entries)-1]
	bulk.crc = h.Sum32()
	le := binary.LittleEndian
	tail := make([]byte, 16, 1024)
	le.PutUint32(tail[0:], 0x08074b50)
	le.PutUint32(tail[4:], bulk.crc)
	le.PutUint32(tail[8:], uint32(bulk.size))
	le.PutUint32(tail[12:], uint32(bulk.size))
	cdStart := z.bulkStart + z.bulkSize + 16
	for i, e := range z.entries {
		flags := zipFlags(e.name)
		if i == len(z.entries)-1 {
			flags |= 0x08
		}
		c := make([]byte, 46)
		le.PutUint32(c[0:], 0x02014b50)
		le.PutUint16(c[4:], 3<<8|20) // made by Unix, 2.0
		le.PutUint16(c[6:], 20)
		le.PutUint16(c[8:], flags)
		le.PutUint16(c[10:], 0)
		le.PutUint16(c[12:], zipDOSTime)
		le.PutUint16(c[14:], zipDOSDate)
		le.PutUint32(c[16:], e.crc)
		le.PutUint32(c[20:], uint32(e.size))
		le.PutUint32(c[24:], uint32(e.size))
		le.PutUint16(c[28:], uint16(len(e.name)))
		le.PutUint32(c[38:], 0o100644<<16) // external attributes: a regular file
		le.PutUint32(c[42:], uint32(e.offset))
		tail = append(append(tail, c...), e.name...)
	}
	cdSize := z.bulkStart + z.bulkSize + int64(len(tail)) - cdStart
	end := make([]byte, 22)
	le.PutUint32(end[0:], 0x06054b50)
	le.PutUint16(end[8:], uint16(len(z.entries)))
	le.PutUint16(end[10:], uint16(len(z.entries)))
	le.PutUint32(end[12:], uint32(cdSize))
	le.PutUint32(end[16:], uint32(cdStart))
	tail = append(tail, end...)
	if got := z.bulkStart + z.bulkSize + int64(len(tail)); got != z.size {
		z.err = fmt.Errorf("generated zip: laid out %d bytes, not %d", got, z.size)
	}
	z.tail = tail
}

// ReadAt reads the generated ZIP's bytes at off. The first read starts the
// bulk's CRC pass in the background; reads of the tail wait for it.
func (z *genZip) ReadAt(p []byte, off int64) (int, error) {
	z.start.Do(func() { go z.buildTail() })
	if off >= z.size {
		return 0, io.EOF
	}
	want := len(p)
	if rest := z.size - off; int64(len(p)) > rest {
		p = p[:rest]
	}
	n := 0
	for len(p) > 0 {
		var k int
		switch {
		case off < z.bulkStart:
			seg := z.head[0]
			for _, s := range z.head {
				if s.off <= off {
					seg = s
				}
			}
			in := off - seg.off
			k = int(min(int64(len(p)), seg.len()-in))
			if seg.path == "" {
				copy(p[:k], seg.data[in:])
			} else if got, err := readFileAt(seg.path, p[:k], in); err != nil || got != k {
				return n, fmt.Errorf("generated zip: entry file %s: %d of %d bytes: %v", seg.path, got, k, err)
			}
		case off < z.bulkStart+z.bulkSize:
			k = int(min(int64(len(p)), z.bulkStart+z.bulkSize-off))
			GenerateBytes(z.seed, off-z.bulkStart, p[:k])
		default:
			<-z.done
			if z.err != nil {
				return n, z.err
			}
			k = copy(p, z.tail[off-z.bulkStart-z.bulkSize:])
		}
		p = p[k:]
		off += int64(k)
		n += k
	}
	if n < want {
		return n, io.EOF
	}
	return n, nil
}

// OpenGenerated returns a reader of the generated file g, exactly the bytes
// the emulator serves for it: a ZIP archive when g.Zip is set (its seed
// files' paths resolved, as LoadSeed leaves them), else GeneratedReader's.
func OpenGenerated(g Generate) (*io.SectionReader, error) {
	if g.Zip == nil {
		return GeneratedReader(g.Seed, g.Size), nil
	}
	z, err := newGenZip(g)
	if err != nil {
		return nil, err
	}
	return io.NewSectionReader(z, 0, z.size), nil
}
