package archive

import (
	"archive/zip"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/hoard/hoard/archive/rarwriter"
)

type testFile struct {
	name string
	data []byte
}

// pseudoRandom returns n deterministic incompressible-looking bytes.
func pseudoRandom(n int, seed uint32) []byte {
	b := make([]byte, n)
	x := seed | 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

type zipOpts struct {
	prefix    []byte
	encrypted map[string]bool // names with the encryption flag set
	store     bool
}

// makeZip builds a ZIP in memory with archive/zip.
func makeZip(t testing.TB, files []testFile, o zipOpts) []byte {
	t.Helper()
	var buf bytes.Buffer
	buf.Write(o.prefix)
	zw := zip.NewWriter(&buf)
	zw.SetOffset(int64(len(o.prefix)))
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)}
		if o.store {
			h.Method = zip.Store
		}
		if o.encrypted[f.name] {
			h.Flags |= 0x1
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeTemp writes data under a fresh temp dir and returns the path.
func writeTemp(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeParts writes volumes as name.partN files (names irrelevant to
// List: parts are passed in order) and returns their paths.
func writeParts(t testing.TB, dir, stem string, vols [][]byte) []string {
	t.Helper()
	var paths []string
	for i, v := range vols {
		p := filepath.Join(dir, stem+"."+string(rune('a'+i))+".bin")
		if err := os.WriteFile(p, v, 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

func makeRar(files []rarwriter.File, o rarwriter.Options) [][]byte { return rarwriter.Write(files, o) }

// need7zz returns the path of 7zz or fails the test: 7z fixtures are made
// at test time and must not be skipped silently.
func need7zz(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("7zz")
	if err != nil {
		t.Fatal("7zz not found: install Debian's 7zip package (apt-get install 7zip) to create 7z fixtures")
	}
	return p
}

// run7zz runs 7zz with args in dir.
func run7zz(t testing.TB, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(need7zz(t), args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("7zz %v: %v\n%s", args, err, out)
	}
}

// srcDir writes files into a new directory and returns it.
func srcDir(t testing.TB, files []testFile) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// make7z creates a 7z archive of files with extra 7zz switches and returns
// the archive's paths (several with -v).
func make7z(t testing.TB, files []testFile, switches ...string) []string {
	t.Helper()
	src := srcDir(t, files)
	out := t.TempDir()
	args := append([]string{"a", "-t7z", "-bd", "-y", filepath.Join(out, "a.7z")}, switches...)
	for _, f := range files {
		args = append(args, f.name)
	}
	run7zz(t, src, args...)
	m, _ := filepath.Glob(filepath.Join(out, "a.7z*"))
	if len(m) == 0 {
		t.Fatal("7zz wrote nothing")
	}
	return m
}
