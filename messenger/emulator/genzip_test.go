package emulator

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"strings"
	"testing"
)

// zipSeed is a seed with one generated ZIP of size bytes holding the files
// of writeFiles and a bulk entry.
func zipSeed(size int64) string {
	return fmt.Sprintf(`{"account": {"phone": "+15550000001"}, "channels": [{"title": "A", "username": "chan_a", "joined": true, "posts": [
		{"generate": {"name": "Big.zip", "size": %d, "seed": 7, "zip": {"entries": [
			{"name": "Big/cover.jpg", "file": "files/cover.jpg"}, {"name": "Big/Mammut ü.stl", "file": "files/a.zip"}],
			"bulk": "Big/sliced/scene.ctb"}}}]}]}`, size)
}

// TestGeneratedZip: a generated ZIP is a valid archive that lists its seed
// files and the bulk in order, every entry's CRC checks out (archive/zip
// verifies it while reading), it is exactly Size bytes, and the emulator
// serves the same bytes chunk by chunk as OpenGenerated's reader gives.
func TestGeneratedZip(t *testing.T) {
	dir := writeFiles(t)
	const size = 3<<20 + 4321
	s, err := ParseSeed([]byte(zipSeed(size)), dir)
	if err != nil {
		t.Fatal(err)
	}
	g := *s.Channels[0].Posts[0].Generate
	r, err := OpenGenerated(g)
	if err != nil {
		t.Fatal(err)
	}
	if r.Size() != size {
		t.Fatalf("size %d, want %d", r.Size(), size)
	}
	zr, err := zip.NewReader(r, r.Size())
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		Name string
		Size uint64
	}
	var got []entry
	for _, f := range zr.File {
		got = append(got, entry{f.Name, f.UncompressedSize64})
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, rc); err != nil {
			t.Errorf("%s: %v", f.Name, err)
		}
		rc.Close()
	}
	bulk := uint64(size) - uint64(30*3+len("Big/cover.jpg")+len("Big/Mammut ü.stl")+len("Big/sliced/scene.ctb")+4+4) -
		16 - uint64(46*3+len("Big/cover.jpg")+len("Big/Mammut ü.stl")+len("Big/sliced/scene.ctb")) - 22
	want := []entry{{"Big/cover.jpg", 4}, {"Big/Mammut ü.stl", 4}, {"Big/sliced/scene.ctb", bulk}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("entries:\n got  %v\n want %v", got, want)
	}

	e, err := New(Options{Seed: s, Key: sharedTestKey(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	var d *document
	for _, doc := range e.docs {
		d = doc
	}
	whole := sha256.New()
	buf := make([]byte, 512<<10)
	for off := int64(0); off < d.size; off += int64(len(buf)) {
		n, err := readDoc(d, buf, off)
		if err != nil {
			t.Fatal(err)
		}
		whole.Write(buf[:n])
	}
	ref := sha256.New()
	if _, err := io.Copy(ref, io.NewSectionReader(r, 0, r.Size())); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(whole.Sum(nil), ref.Sum(nil)) {
		t.Error("the emulator serves other bytes than OpenGenerated reads")
	}
}

// TestGeneratedZipSeedErrors: a generated ZIP that cannot be laid out is
// refused when the seed is read, naming the problem.
func TestGeneratedZipSeedErrors(t *testing.T) {
	dir := writeFiles(t)
	tests := []struct{ name, seed, want string }{
		{"too small", zipSeed(100), "smaller than the archive's"},
		{"zip64", zipSeed(5 << 30), "needs ZIP64"},
		{"no bulk", strings.Replace(zipSeed(1<<20), `"bulk": "Big/sliced/scene.ctb"`, `"bulk": ""`, 1), "bulk"},
		{"missing file", strings.Replace(zipSeed(1<<20), "files/cover.jpg", "files/nope.jpg", 1), "nope.jpg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSeed([]byte(tt.seed), dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want one naming %q", err, tt.want)
			}
		})
	}
}
