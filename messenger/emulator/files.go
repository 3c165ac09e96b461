package emulator

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// GenerateBytes fills p with the bytes at offset off of the generated file
// with the given seed: word i (bytes 8i..8i+7, little endian) is
// splitmix64(seed, i). Any range can be produced without the rest.
func GenerateBytes(seed int64, off int64, p []byte) {
	base := uint64(seed)*0x9e3779b97f4a7c15 + 0x632be59bd9b4e019
	partial := func() {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], mix(base+uint64(off/8)))
		n := copy(p, b[off%8:])
		p = p[n:]
		off += int64(n)
	}
	if off%8 != 0 && len(p) > 0 {
		partial()
	}
	// Whole words straight into p: twice as fast as through a buffer,
	// which matters for the generated ZIP's streaming CRC pass.
	for len(p) >= 8 {
		binary.LittleEndian.PutUint64(p, mix(base+uint64(off/8)))
		p = p[8:]
		off += 8
	}
	if len(p) > 0 {
		partial()
	}
}

// GeneratedReader returns a reader of the whole generated file.
func GeneratedReader(seed, size int64) *io.SectionReader {
	return io.NewSectionReader(genReaderAt(seed), 0, size)
}

type genReaderAt int64

func (g genReaderAt) ReadAt(p []byte, off int64) (int, error) {
	GenerateBytes(int64(g), off, p)
	return len(p), nil
}

// readDoc reads up to len(p) bytes of a document at off.
func readDoc(d *document, p []byte, off int64) (int, error) {
	if off >= d.size {
		return 0, nil
	}
	if rest := d.size - off; int64(len(p)) > rest {
		p = p[:rest]
	}
	if d.zip != nil {
		return d.zip.ReadAt(p, off)
	}
	if d.gen != nil {
		GenerateBytes(d.gen.Seed, off, p)
		return len(p), nil
	}
	return readFileAt(d.path, p, off)
}

func readFileAt(path string, p []byte, off int64) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, err := f.ReadAt(p, off)
	if err == io.EOF {
		err = nil
	}
	return n, err
}

// upload is a file being uploaded in parts; parts live on disk.
type upload struct {
	dir      string
	big      bool
	total    int // declared total parts (big files)
	partSize int
	parts    map[int]int       // part → size
	stored   map[int]time.Time // part → when it was stored (it expires, see partGone)
}

// uploadKey names an upload: parts are stored by the DC they were sent
// to, per owner and file id, so parts sent to another DC than the one the
// file is posted from are missing there.
func uploadKey(owner int64, dc int, fileID int64) string {
	return strconv.FormatInt(owner, 10) + "-" + strconv.Itoa(dc) + "-" + strconv.FormatUint(uint64(fileID), 16)
}

func (u *upload) partPath(part int) string {
	return filepath.Join(u.dir, strconv.Itoa(part))
}

// assemble concatenates parts 0..n-1 into dst and returns the size.
func (u *upload) assemble(n int, dst string) (int64, error) {
	out, err := os.Create(dst)
	if err != nil {
		return 0, err
	}
	var size int64
	for i := range n {
		in, err := os.Open(u.partPath(i))
		if err != nil {
			out.Close()
			return 0, fmt.Errorf("part %d: %w", i, err)
		}
		k, err := io.Copy(out, in)
		in.Close()
		if err != nil {
			out.Close()
			return 0, err
		}
		size += k
	}
	if err := out.Close(); err != nil {
		return 0, err
	}
	return size, os.RemoveAll(u.dir)
}
