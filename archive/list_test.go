package archive

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard/archive/rarwriter"
	"github.com/nwaples/rardecode/v2"
)

func entryNames(l Listing) string {
	var n []string
	for _, e := range l.Entries {
		n = append(n, e.Path)
	}
	return strings.Join(n, ",")
}

func TestListZip(t *testing.T) {
	ctx := context.Background()
	files := []testFile{{"dir/", nil}, {"dir/a.stl", pseudoRandom(3000, 1)}, {"cover.jpg", pseudoRandom(5000, 2)}}
	plain := makeZip(t, files, zipOpts{})
	prefixed := makeZip(t, files, zipOpts{prefix: bytes.Repeat([]byte("SFX"), 30000)})
	encrypted := makeZip(t, files, zipOpts{encrypted: map[string]bool{"dir/a.stl": true}})
	infoZip := bytes.Clone(plain)
	// An Info-ZIP split's last part: its EOCD says disk 1.
	i := bytes.LastIndex(infoZip, []byte("PK\x05\x06"))
	binary.LittleEndian.PutUint16(infoZip[i+4:], 1)
	binary.LittleEndian.PutUint16(infoZip[i+6:], 1)

	tests := []struct {
		name      string
		data      []byte
		entries   string
		encrypted bool
		note      string
	}{
		{"plain", plain, "dir/,dir/a.stl,cover.jpg", false, ""},
		{"prefixed", prefixed, "dir/,dir/a.stl,cover.jpg", false, ""},
		{"encrypted flag", encrypted, "dir/,dir/a.stl,cover.jpg", true, "encrypted"},
		{"info-zip span", infoZip, "", false, "multi-disk ZIP"},
		{"corrupt", plain[:len(plain)-30], "", false, "not listed"},
		{"not a zip", []byte("hello world"), "", false, "not listed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := List(ctx, ZIP, []string{writeTemp(t, "x.zip", tt.data)}, ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			type listing struct {
				Entries   string
				Encrypted bool
			}
			if diff := cmp.Diff(listing{tt.entries, tt.encrypted}, listing{entryNames(l), l.Encrypted}); diff != "" {
				t.Errorf("listing (-want +got):\n%s", diff)
			}
			if !strings.Contains(l.Note, tt.note) || (tt.note == "" && l.Note != "") {
				t.Errorf("note %q, want %q", l.Note, tt.note)
			}
		})
	}
	t.Run("entry fields", func(t *testing.T) {
		l, _ := List(ctx, ZIP, []string{writeTemp(t, "x.zip", plain)}, ListOptions{})
		e := l.Entries[1]
		if e.CompressedSize <= 0 {
			t.Errorf("compressed size %d", e.CompressedSize)
		}
		want := Entry{Path: e.Path, Size: 3000, CompressedSize: e.CompressedSize, CRC32: crc32.ChecksumIEEE(files[1].data), HasCRC: true, Block: -1}
		if diff := cmp.Diff(want, e); diff != "" {
			t.Errorf("entry (-want +got):\n%s", diff)
		}
		if !l.Entries[0].IsDir {
			t.Error("dir/ not a dir")
		}
	})
	t.Run("split across parts", func(t *testing.T) {
		dir := t.TempDir()
		paths := writeParts(t, dir, "x", [][]byte{plain[:100], plain[100:2000], plain[2000:]})
		l, err := List(ctx, ZIP, paths, ListOptions{})
		if err != nil || entryNames(l) != "dir/,dir/a.stl,cover.jpg" {
			t.Errorf("%q %q %v", entryNames(l), l.Note, err)
		}
	})
}

func TestListZipManyEntries(t *testing.T) {
	// 70,000 entries: archive/zip writes zip64 records beyond 65,535.
	var files []testFile
	for i := range 70000 {
		files = append(files, testFile{fmt.Sprintf("d%d/f%05d.txt", i%7, i), nil})
	}
	data := makeZip(t, files, zipOpts{store: true})
	if !bytes.Contains(data, []byte("PK\x06\x06")) {
		t.Fatal("fixture has no zip64 end record")
	}
	p := writeTemp(t, "big.zip", data)
	ctx := context.Background()
	type listing struct {
		Entries, Total int
		Truncated      bool
		Note           string
	}
	l, err := List(ctx, ZIP, []string{p}, ListOptions{})
	if err != nil {
		t.Fatalf("zip64: %v", err)
	}
	if diff := cmp.Diff(listing{70000, 70000, false, ""}, listing{len(l.Entries), l.Total, l.Truncated, ""}); diff != "" {
		t.Fatalf("zip64 (-want +got):\n%s", diff)
	}
	lt, err := List(ctx, ZIP, []string{p}, ListOptions{MaxEntries: 1000})
	if err != nil {
		t.Fatalf("truncated: %v", err)
	}
	if !strings.Contains(lt.Note, "truncated to 1000 of 70000") {
		t.Fatalf("truncated: note %q", lt.Note)
	}
	if diff := cmp.Diff(listing{1000, 70000, true, ""}, listing{len(lt.Entries), lt.Total, lt.Truncated, ""}); diff != "" {
		t.Fatalf("truncated (-want +got):\n%s", diff)
	}
	for i := range lt.Entries {
		if lt.Entries[i] != l.Entries[i] {
			t.Fatalf("entry %d: %+v vs %+v", i, lt.Entries[i], l.Entries[i])
		}
	}
	// The truncating reader also handles a prefixed archive.
	pre := writeTemp(t, "sfx.zip", append(bytes.Repeat([]byte{'M'}, 1234), makeZip(t, files[:50], zipOpts{})...))
	lp, err := List(ctx, ZIP, []string{pre}, ListOptions{MaxEntries: 10})
	if err != nil || len(lp.Entries) != 10 || lp.Entries[3].Path != files[3].name {
		t.Fatalf("prefixed truncated: %+v %v", lp, err)
	}
}

func TestListRar(t *testing.T) {
	ctx := context.Background()
	files := []rarwriter.File{
		{Name: "models", Dir: true},
		{Name: "models/a.stl", Data: pseudoRandom(20000, 3), ModTime: time.Unix(1700000000, 0)},
		{Name: "preview.png", Data: pseudoRandom(6000, 4)},
	}
	want := "models,models/a.stl,preview.png"
	t.Run("single", func(t *testing.T) {
		p := writeParts(t, t.TempDir(), "x", makeRar(files, rarwriter.Options{}))
		l, err := List(ctx, RAR, p, ListOptions{})
		if err != nil || entryNames(l) != want || l.Note != "" || l.Solid {
			t.Fatalf("%q %q %v", entryNames(l), l.Note, err)
		}
		if !l.Entries[0].IsDir {
			t.Errorf("%+v is not a directory", l.Entries[0])
		}
		e := l.Entries[1]
		if diff := cmp.Diff(Entry{Path: e.Path, Size: 20000, CompressedSize: 20000, CRC32: e.CRC32, Block: e.Block}, e); diff != "" {
			t.Errorf("entry (-want +got):\n%s", diff)
		}
	})
	t.Run("volumes", func(t *testing.T) {
		vols := makeRar(files, rarwriter.Options{VolumeSize: 7000})
		if len(vols) < 3 {
			t.Fatalf("only %d volumes", len(vols))
		}
		p := writeParts(t, t.TempDir(), "x", vols)
		l, err := List(ctx, RAR, p, ListOptions{})
		if err != nil || entryNames(l) != want {
			t.Fatalf("%q %q %v", entryNames(l), l.Note, err)
		}
		// Without the middle volumes the listing fails with a note.
		l, err = List(ctx, RAR, []string{p[0], p[len(p)-1]}, ListOptions{})
		if err != nil || len(l.Entries) != 0 || !strings.Contains(l.Note, "not listed") {
			t.Fatalf("gap: %q %q %v", entryNames(l), l.Note, err)
		}
	})
	t.Run("byte split", func(t *testing.T) {
		data := makeRar(files, rarwriter.Options{})[0]
		p := writeParts(t, t.TempDir(), "x", [][]byte{data[:5000], data[5000:]})
		l, err := List(ctx, RAR, p, ListOptions{})
		if err != nil || entryNames(l) != want {
			t.Fatalf("%q %q %v", entryNames(l), l.Note, err)
		}
	})
	t.Run("sfx", func(t *testing.T) {
		p := writeParts(t, t.TempDir(), "x", makeRar(files, rarwriter.Options{Prefix: bytes.Repeat([]byte("MZ"), 40000)}))
		l, err := List(ctx, RAR, p, ListOptions{})
		if err != nil || entryNames(l) != want {
			t.Fatalf("%q %q %v", entryNames(l), l.Note, err)
		}
	})
	t.Run("solid", func(t *testing.T) {
		sf := []rarwriter.File{{Name: "a.bin", Data: []byte("aaaa")}, {Name: "b.bin", Data: []byte("bbbb"), Solid: true}}
		p := writeParts(t, t.TempDir(), "x", makeRar(sf, rarwriter.Options{Solid: true}))
		l, err := List(ctx, RAR, p, ListOptions{})
		if err != nil || entryNames(l) != "a.bin,b.bin" || !l.Solid {
			t.Fatalf("%q solid %v %q %v", entryNames(l), l.Solid, l.Note, err)
		}
	})
	t.Run("encrypted headers", func(t *testing.T) {
		p := writeParts(t, t.TempDir(), "x", makeRar(files, rarwriter.Options{EncryptedHeaders: true}))
		l, err := List(ctx, RAR, p, ListOptions{})
		if err != nil || len(l.Entries) != 0 || !l.Encrypted || !strings.Contains(l.Note, "encrypted") {
			t.Fatalf("%+v %v", l, err)
		}
	})
	t.Run("truncated", func(t *testing.T) {
		p := writeParts(t, t.TempDir(), "x", makeRar(files, rarwriter.Options{}))
		type listing struct {
			Entries, Total   int
			Truncated, Solid bool
			Note             string
		}
		l, err := List(ctx, RAR, p, ListOptions{MaxEntries: 2})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(listing{2, -1, true, false, "listing truncated to 2 entries"},
			listing{len(l.Entries), l.Total, l.Truncated, l.Solid, l.Note}); diff != "" {
			t.Fatalf("listing (-want +got):\n%s", diff)
		}
		sf := []rarwriter.File{{Name: "a.bin", Data: []byte("aaaa")}, {Name: "b.bin", Data: []byte("bbbb"), Solid: true}, {Name: "c.bin", Data: []byte("c"), Solid: true}}
		p = writeParts(t, t.TempDir(), "x", makeRar(sf, rarwriter.Options{Solid: true, Version4: true}))
		l, err = List(ctx, RAR, p, ListOptions{MaxEntries: 2})
		if err != nil {
			t.Fatalf("solid: %v", err)
		}
		if diff := cmp.Diff(listing{2, 3, true, true, ""}, listing{len(l.Entries), l.Total, l.Truncated, l.Solid, ""}); diff != "" {
			t.Fatalf("solid (-want +got):\n%s", diff)
		}
	})
}

// TestRarWriter checks the test-only writer against rardecode itself,
// including the stored bytes and their CRC across volumes.
func TestRarWriter(t *testing.T) {
	files := []rarwriter.File{{Name: "a.bin", Data: pseudoRandom(10000, 9)}, {Name: "d", Dir: true}, {Name: "d/b.bin", Data: pseudoRandom(3, 8)}}
	formats := []struct {
		name string
		opts rarwriter.Options
		vol  func(i int) string
	}{
		{"rar5", rarwriter.Options{}, func(i int) string { return fmt.Sprintf("x.part%d.rar", i+1) }},
		{"rar4", rarwriter.Options{Version4: true}, func(i int) string { return fmt.Sprintf("x.part%d.rar", i+1) }},
		{"rar4 old naming", rarwriter.Options{Version4: true, OldNaming: true}, func(i int) string {
			if i == 0 {
				return "x.rar"
			}
			return fmt.Sprintf("x.r%02d", i-1)
		}},
	}
	for _, format := range formats {
		for _, vs := range []int{0, 1000, 4096} {
			dir := t.TempDir()
			o := format.opts
			o.VolumeSize = vs
			vols := rarwriter.Write(files, o)
			for i, v := range vols {
				if err := os.WriteFile(filepath.Join(dir, format.vol(i)), v, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			rc, err := rardecode.OpenReader(filepath.Join(dir, format.vol(0)))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				h, err := rc.Next()
				if err != nil {
					t.Fatalf("%s volume size %d: %v", format.name, vs, err)
				}
				var buf bytes.Buffer
				if _, err := buf.ReadFrom(&rc.Reader); err != nil {
					t.Fatalf("%s volume size %d: %s: %v", format.name, vs, h.Name, err)
				}
				if h.Name != f.Name || h.IsDir != f.Dir || !bytes.Equal(buf.Bytes(), f.Data) {
					t.Fatalf("%s volume size %d: %s differs", format.name, vs, h.Name)
				}
			}
			if _, err := rc.Next(); err != io.EOF {
				t.Fatalf("%s volume size %d: after last: %v", format.name, vs, err)
			}
			rc.Close()
			// List maps the parts, whatever their names, to volumes.
			var paths []string
			for i := range vols {
				paths = append(paths, filepath.Join(dir, format.vol(i)))
			}
			l, err := List(context.Background(), RAR, paths, ListOptions{})
			if err != nil || entryNames(l) != "a.bin,d,d/b.bin" {
				t.Fatalf("%s volume size %d: List %q %q %v", format.name, vs, entryNames(l), l.Note, err)
			}
			data, err := Extract(context.Background(), RAR, paths, "d/b.bin", ExtractOptions{})
			if err != nil || !bytes.Equal(data, files[2].Data) {
				t.Fatalf("%s volume size %d: Extract %v", format.name, vs, err)
			}
		}
	}
}

func TestVolumeIndex(t *testing.T) {
	for name, want := range map[string]int{"v1.rar": 0, "v2.rar": 1, "v10.rar": 9, "v1.r00": 1, "v1.r99": 100, "v1.s00": 101,
		"V1.R05": 6, "v0.rar": -1, "x.rar": -1, "v1.rxx": -1, "v1.zip": -1, "va.rar": -1} {
		if got := volumeIndex(name); got != want {
			t.Errorf("volumeIndex(%q) = %d, want %d", name, got, want)
		}
	}
}

func TestList7z(t *testing.T) {
	ctx := context.Background()
	files := []testFile{{"models/a.stl", bytes.Repeat([]byte("solid facet normal 0 0 1\n"), 4000)}, {"render.png", pseudoRandom(8000, 5)}}
	want := "models/a.stl,render.png"
	cases := []struct {
		name      string
		switches  []string
		solid     bool
		encrypted bool
		entries   string
	}{
		{"solid", []string{"-mx=1", "-ms=on"}, true, false, want},
		{"not solid", []string{"-mx=1", "-ms=off"}, false, false, want},
		{"volumes", []string{"-mx=0", "-v30k"}, false, false, want},
		{"encrypted data", []string{"-mx=1", "-psecret", "-mhe=off"}, true, true, want},
		{"encrypted headers", []string{"-mx=1", "-psecret", "-mhe=on"}, false, true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			paths := make7z(t, files, c.switches...)
			l, err := List(ctx, SevenZ, paths, ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if entryNames(l) != c.entries || l.Solid != c.solid || l.Encrypted != c.encrypted {
				t.Fatalf("%d paths: %q solid %v enc %v note %q", len(paths), entryNames(l), l.Solid, l.Encrypted, l.Note)
			}
			if c.entries != "" {
				e := l.Entries[0]
				if e.Size != int64(len(files[0].data)) || !e.HasCRC || e.CRC32 != crc32.ChecksumIEEE(files[0].data) || e.CompressedSize != -1 {
					t.Errorf("%+v", e)
				}
			}
			pf := PackageFiles("pack.7z", 1234, l)
			if len(pf) != 1 || pf[0].Path != "pack.7z" || pf[0].Size != 1234 {
				t.Errorf("package files %+v", pf)
			}
		})
	}
	t.Run("volumes need 2 or more paths", func(t *testing.T) {
		paths := make7z(t, files, "-mx=0", "-v30k")
		if len(paths) < 2 {
			t.Fatalf("%d volumes", len(paths))
		}
		l, err := List(ctx, SevenZ, paths[1:], ListOptions{})
		if err != nil || len(l.Entries) != 0 || l.Note == "" {
			t.Fatalf("%+v %v", l, err)
		}
	})
}

func TestList7zZipSplit(t *testing.T) {
	// 7-Zip's split of a ZIP: x.zip.001, x.zip.002, … (a byte split).
	files := []testFile{{"a.bin", pseudoRandom(50000, 6)}, {"b.jpg", pseudoRandom(9000, 7)}}
	src := srcDir(t, files)
	out := t.TempDir()
	run7zz(t, src, "a", "-tzip", "-bd", "-mx=0", "-v20k", filepath.Join(out, "x.zip"), "a.bin", "b.jpg")
	paths, _ := filepath.Glob(filepath.Join(out, "x.zip.*"))
	if len(paths) < 3 {
		t.Fatalf("%v", paths)
	}
	l, err := List(context.Background(), ZIP, paths, ListOptions{})
	if err != nil || entryNames(l) != "a.bin,b.jpg" {
		t.Fatalf("%q %q %v", entryNames(l), l.Note, err)
	}
	data, err := Extract(context.Background(), ZIP, paths, "b.jpg", ExtractOptions{})
	if err != nil || !bytes.Equal(data, files[1].data) {
		t.Fatalf("extract: %v", err)
	}
}

func TestListMisc(t *testing.T) {
	ctx := context.Background()
	t.Run("document", func(t *testing.T) {
		l, err := List(ctx, Document, []string{"/nonexistent"}, ListOptions{})
		if err != nil || len(l.Entries) != 0 {
			t.Fatal(l, err)
		}
		pf := PackageFiles("m.stl", 99, l)
		if len(pf) != 1 || pf[0].Path != "m.stl" || pf[0].Size != 99 {
			t.Fatal(pf)
		}
	})
	t.Run("package files of a zip leave out dirs", func(t *testing.T) {
		p := writeTemp(t, "x.zip", makeZip(t, []testFile{{"d/", nil}, {"d/a", []byte("a")}}, zipOpts{}))
		l, _ := List(ctx, ZIP, []string{p}, ListOptions{})
		if pf := PackageFiles("x.zip", 1, l); len(pf) != 1 || pf[0].Path != "d/a" {
			t.Fatal(pf)
		}
	})
	t.Run("missing file is an error", func(t *testing.T) {
		if _, err := List(ctx, ZIP, []string{filepath.Join(t.TempDir(), "nope")}, ListOptions{}); err == nil {
			t.Fatal("no error")
		}
	})
	t.Run("cancelled context", func(t *testing.T) {
		p := writeTemp(t, "x.zip", makeZip(t, []testFile{{"a", []byte("a")}}, zipOpts{}))
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := List(cctx, ZIP, []string{p}, ListOptions{}); err == nil {
			t.Fatal("no error")
		}
	})
	t.Run("unknown type", func(t *testing.T) {
		p := writeTemp(t, "x.bin", []byte("data"))
		l, err := List(ctx, Unknown, []string{p}, ListOptions{})
		if err != nil || l.Note == "" {
			t.Fatal(l, err)
		}
	})
}

var _ = zip.Store

// panicReaderAt stands in for a decoder that panics (like the PPMd
// divide-by-zero found by fuzzing): the panic happens on the reading
// goroutine and must become a note or an error.
type panicReaderAt struct{ data []byte }

func (p panicReaderAt) ReadAt(b []byte, off int64) (int, error) {
	if off > 0 {
		panic("integer divide by zero")
	}
	return copy(b, p.data[off:]), nil
}

func TestDecoderPanicIsRecovered(t *testing.T) {
	data := makeZip(t, []testFile{{"cover.jpg", pseudoRandom(9000, 1)}}, zipOpts{})
	parts := &Parts{files: []io.ReaderAt{panicReaderAt{data}}, starts: []int64{0, int64(len(data))}}
	for _, typ := range []Type{ZIP, RAR, SevenZ} {
		l, err := listParts(context.Background(), typ, parts, ListOptions{})
		if err != nil || len(l.Entries) != 0 || !strings.Contains(l.Note, "decoder failure") {
			t.Errorf("%s: list %+v %v", typ, l, err)
		}
		if _, err := extractParts(context.Background(), typ, parts, "cover.jpg", ExtractOptions{}); err == nil || !strings.Contains(err.Error(), "decoder failure") {
			t.Errorf("%s: extract %v", typ, err)
		}
	}
}
