package zipstream

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// testTime is the modification time of the test entries.
var testTime = time.Date(2024, 5, 17, 13, 45, 31, 0, time.UTC)

// crc returns the IEEE CRC-32 of b.
func crc(b []byte) uint32 { return crc32.ChecksumIEEE(b) }

// openCall is one recorded call of Entry.Open.
type openCall struct {
	Entry int
	Off   int64
}

// recorder records Entry.Open calls across the entries of one archive.
type recorder struct {
	mu    sync.Mutex
	calls []openCall
}

// take returns the calls recorded since the last take.
func (r *recorder) take() []openCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.calls
	r.calls = nil
	return c
}

// memEntry returns an entry of data whose Open calls are recorded as entry
// idx (rec may be nil).
func memEntry(idx int, name string, data []byte, rec *recorder) Entry {
	return Entry{
		Name:     name,
		Size:     int64(len(data)),
		CRC32:    crc(data),
		Modified: testTime,
		Open: func(ctx context.Context, off int64) (io.ReadCloser, error) {
			if rec != nil {
				rec.mu.Lock()
				rec.calls = append(rec.calls, openCall{idx, off})
				rec.mu.Unlock()
			}
			return io.NopCloser(bytes.NewReader(data[off:])), nil
		},
	}
}

// randomBytes returns n bytes from rng.
func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// mustNew is New that fails the test on error.
func mustNew(t testing.TB, entries []Entry) *Archive {
	t.Helper()
	a, err := New(entries)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// readAll streams the whole archive.
func readAll(t testing.TB, a *Archive) []byte {
	t.Helper()
	r := a.Reader(context.Background())
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writeTemp writes b to a temporary file and returns its path.
func writeTemp(t testing.TB, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "test.zip")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// unzipTest runs Info-ZIP's `unzip -t` over the archive at path.
func unzipTest(t testing.TB, path string) {
	t.Helper()
	out, err := exec.Command("unzip", "-tq", path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "No errors detected") {
		t.Fatalf("unzip -t: %v\n%s", err, out)
	}
}

// pyScript lists an archive with Python's zipfile. With "test" it runs
// testzip and hashes every entry; otherwise it hashes the first n bytes
// (all when n < 0) of each entry named in argv[4:]. With "count" it lists
// only the last entry (its JSON for 70,000 entries is slow to make).
const pyScript = `
import hashlib, json, sys, zipfile
path, mode, n, names = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
out = {"bad": None, "files": [], "sha": {}}
with zipfile.ZipFile(path) as z:
    if mode == "test":
        out["bad"] = z.testzip()
    infos = z.infolist()
    out["count"] = len(infos)
    for i in infos:
        if mode != "count" or i is infos[-1]:
            out["files"].append({"name": i.filename, "size": i.file_size, "offset": i.header_offset,
                                 "method": i.compress_type, "time": list(i.date_time)})
        if mode == "test" or i.filename in names:
            with z.open(i) as f:
                out["sha"][i.filename] = hashlib.sha256(f.read(n) if n >= 0 else f.read()).hexdigest()
json.dump(out, sys.stdout)
`

// pyFile is one entry as Python's zipfile lists it.
type pyFile struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	Offset int64  `json:"offset"`
	Method int    `json:"method"`
	Time   []int  `json:"time"`
}

// pyReport is what pyScript prints.
type pyReport struct {
	Bad   *string           `json:"bad"`
	Count int               `json:"count"`
	Files []pyFile          `json:"files"`
	SHA   map[string]string `json:"sha"`
}

// pythonZip runs pyScript over the archive at path.
func pythonZip(t testing.TB, path, mode string, n int64, names ...string) pyReport {
	t.Helper()
	args := append([]string{"-c", pyScript, path, mode, itoa(n)}, names...)
	out, err := exec.Command("python3", args...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("python zipfile: %v\n%s", err, stderr)
	}
	var rep pyReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("python zipfile output: %v\n%s", err, out)
	}
	return rep
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// sha returns the hex SHA-256 of b.
func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// streamAt adapts a stream to io.ReaderAt for archive/zip, by seeking.
type streamAt struct {
	mu sync.Mutex
	r  io.ReadSeeker
}

// ReadAt implements io.ReaderAt.
func (s *streamAt) ReadAt(p []byte, off int64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.r.Seek(off, io.SeekStart); err != nil {
		return 0, err
	}
	n, err := io.ReadFull(s.r, p)
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	return n, err
}

// goZip opens the archive with Go's archive/zip through its stream.
func goZip(t testing.TB, a *Archive) *zip.Reader {
	t.Helper()
	r := a.Reader(context.Background())
	t.Cleanup(func() { r.Close() })
	z, err := zip.NewReader(&streamAt{r: r}, a.Size())
	if err != nil {
		t.Fatal(err)
	}
	return z
}
