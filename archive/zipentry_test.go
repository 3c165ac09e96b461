package archive

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// countingReaderAt counts the bytes read through it and remembers the
// ranges.
type countingReaderAt struct {
	r      io.ReaderAt
	mu     sync.Mutex
	read   int64
	ranges []Range
}

func (c *countingReaderAt) ReadAt(b []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(b, off)
	c.mu.Lock()
	c.read += int64(n)
	c.ranges = append(c.ranges, Range{Offset: off, Length: int64(len(b)), Source: -1})
	c.mu.Unlock()
	return n, err
}

func localHeader(nameLen, extraLen uint16) []byte {
	h := make([]byte, 30)
	binary.LittleEndian.PutUint32(h, 0x04034b50)
	binary.LittleEndian.PutUint16(h[26:], nameLen)
	binary.LittleEndian.PutUint16(h[28:], extraLen)
	return h
}

func TestZipEntryDataRange(t *testing.T) {
	badSig := localHeader(3, 0)
	badSig[0] = 'X'
	for _, tc := range []struct {
		name    string
		span    ZipEntrySpan
		hdr     []byte
		size    int64
		want    Range
		wantErr string
	}{
		{name: "plain", span: ZipEntrySpan{HeaderOffset: 100, CompressedSize: 50}, hdr: localHeader(8, 0), size: 1000,
			want: Range{Offset: 138, Length: 50, Source: -1}},
		{name: "extra field", span: ZipEntrySpan{HeaderOffset: 0, CompressedSize: 10}, hdr: localHeader(5, 36), size: 100,
			want: Range{Offset: 71, Length: 10, Source: -1}},
		{name: "empty entry at the end", span: ZipEntrySpan{HeaderOffset: 70, CompressedSize: 0}, hdr: localHeader(0, 0), size: 100,
			want: Range{Offset: 100, Length: 0, Source: -1}},
		{name: "data ends exactly at the end", span: ZipEntrySpan{HeaderOffset: 0, CompressedSize: 70}, hdr: localHeader(0, 0), size: 100,
			want: Range{Offset: 30, Length: 70, Source: -1}},
		{name: "data past the end", span: ZipEntrySpan{HeaderOffset: 0, CompressedSize: 71}, hdr: localHeader(0, 0), size: 100, wantErr: "outside the file"},
		{name: "header past the end", span: ZipEntrySpan{HeaderOffset: 90, CompressedSize: 0}, hdr: localHeader(20, 0), size: 100, wantErr: "outside the file"},
		{name: "huge lengths", span: ZipEntrySpan{HeaderOffset: 1 << 40, CompressedSize: 1 << 62}, hdr: localHeader(65535, 65535), size: 1 << 41, wantErr: "outside the file"},
		{name: "negative size", span: ZipEntrySpan{HeaderOffset: 0, CompressedSize: -1}, hdr: localHeader(0, 0), size: 100, wantErr: "outside the file"},
		{name: "short header", span: ZipEntrySpan{}, hdr: make([]byte, 29), size: 100, wantErr: "29 bytes"},
		{name: "bad signature", span: ZipEntrySpan{}, hdr: badSig, size: 100, wantErr: "bad signature"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.span.DataRange(tc.hdr, tc.size)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("DataRange = %+v, %v; want error %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("DataRange = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestFindZipEntry(t *testing.T) {
	big := pseudoRandom(300<<10, 7)
	files := []testFile{{"models/big.stl", big}, {"renders/cover.png", pngImage(t, 40, 30)}, {"readme.txt", []byte(strings.Repeat("hello ", 500))}}
	stub := []byte(strings.Repeat("MZ stub ", 1000))
	for _, tc := range []struct {
		name    string
		opts    zipOpts
		prepend []byte
	}{
		{name: "deflated", opts: zipOpts{}},
		{name: "stored", opts: zipOpts{store: true}},
		{name: "sfx, offsets from the file's start", opts: zipOpts{prefix: stub}},
		{name: "stub prepended, offsets from the archive's start", prepend: stub},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := append(bytes.Clone(tc.prepend), makeZip(t, files, tc.opts)...)
			zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range zr.File {
				span, err := FindZipEntry(bytes.NewReader(data), int64(len(data)), f.Name, 0)
				if err != nil {
					t.Fatalf("%s: %v", f.Name, err)
				}
				off, err := f.DataOffset()
				if err != nil {
					t.Fatal(err)
				}
				hdr := data[span.HeaderOffset : span.HeaderOffset+30]
				r, err := span.DataRange(hdr, int64(len(data)))
				if err != nil {
					t.Fatal(err)
				}
				type entry struct {
					Offset, Length, Size int64
					CRC32                uint32
					Method               uint16
				}
				want := entry{off, int64(f.CompressedSize64), int64(f.UncompressedSize64), f.CRC32, f.Method}
				if diff := cmp.Diff(want, entry{r.Offset, r.Length, span.Size, span.CRC32, span.Method}); diff != "" {
					t.Fatalf("%s: against archive/zip (-want +got):\n%s", f.Name, diff)
				}
			}
			if _, err := FindZipEntry(bytes.NewReader(data), int64(len(data)), "renders/", 0); !errors.Is(err, ErrEntryNotFound) {
				t.Fatalf("missing entry: %v", err)
			}
		})
	}
}

func TestFindZipEntryRefusals(t *testing.T) {
	data := makeZip(t, []testFile{{"a.png", []byte("x")}, {"b.png", []byte("y")}}, zipOpts{})
	if _, err := FindZipEntry(bytes.NewReader(data[:len(data)-30]), int64(len(data)-30), "a.png", 0); !errors.Is(err, ErrNoRange) {
		t.Fatalf("no EOCD: %v", err)
	}
	if _, err := FindZipEntry(bytes.NewReader(data), int64(len(data)), "a.png", 10); !errors.Is(err, ErrNoRange) {
		t.Fatalf("directory over budget: %v", err)
	}
	// A read failure is not "no range": the caller must not mistake a
	// failed download for an archive without an index.
	boom := errors.New("download failed")
	if _, err := FindZipEntry(failingReaderAt{boom}, 1<<20, "a.png", 0); !errors.Is(err, boom) || errors.Is(err, ErrNoRange) {
		t.Fatalf("read failure: %v", err)
	}
}

type failingReaderAt struct{ err error }

func (f failingReaderAt) ReadAt([]byte, int64) (int, error) { return 0, f.err }

func TestReadZipEntryReadsOnlyTheEntry(t *testing.T) {
	cover := pngImage(t, 64, 48)
	data := makeZip(t, []testFile{{"big1.bin", pseudoRandom(2<<20, 1)}, {"cover.png", cover}, {"big2.bin", pseudoRandom(2<<20, 2)},
		{"notes.txt", bytes.Repeat([]byte("compressible "), 10000)}}, zipOpts{})
	cr := &countingReaderAt{r: bytes.NewReader(data)}
	got, err := ReadZipEntry(context.Background(), cr, int64(len(data)), "cover.png", ExtractOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, cover) {
		t.Fatal("wrong bytes")
	}
	// Tail (≤ 64 KiB + 22) + directory + header + the entry.
	if cr.read > int64(len(cover))+70<<10 {
		t.Fatalf("read %d bytes of a %d-byte archive for a %d-byte entry: %+v", cr.read, len(data), len(cover), cr.ranges)
	}
	txt, err := ReadZipEntry(context.Background(), bytes.NewReader(data), int64(len(data)), "notes.txt", ExtractOptions{})
	if err != nil || len(txt) != 130000 {
		t.Fatalf("deflated text: %d bytes, %v", len(txt), err)
	}
}

func TestReadZipEntryRefusals(t *testing.T) {
	ctx := context.Background()
	img := pngImage(t, 8, 8)
	enc := makeZip(t, []testFile{{"a.png", img}}, zipOpts{encrypted: map[string]bool{"a.png": true}})
	if _, err := ReadZipEntry(ctx, bytes.NewReader(enc), int64(len(enc)), "a.png", ExtractOptions{}); !errors.Is(err, ErrEncrypted) {
		t.Fatalf("encrypted: %v", err)
	}
	plain := makeZip(t, []testFile{{"a.png", img}}, zipOpts{store: true})
	if _, err := ReadZipEntry(ctx, bytes.NewReader(plain), int64(len(plain)), "a.png", ExtractOptions{MaxSize: 10}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("too large: %v", err)
	}
	// A flipped data byte fails the checksum.
	bad := bytes.Clone(plain)
	span, err := FindZipEntry(bytes.NewReader(bad), int64(len(bad)), "a.png", 0)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := span.DataRange(bad[span.HeaderOffset:span.HeaderOffset+30], int64(len(bad)))
	bad[r.Offset+5] ^= 0xff
	if _, err := ReadZipEntry(ctx, bytes.NewReader(bad), int64(len(bad)), "a.png", ExtractOptions{}); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("corrupt data: %v", err)
	}
	// An unknown method (here: patched to 12, bzip2) is refused by name.
	m := bytes.Clone(plain)
	cd := bytes.LastIndex(m, []byte("PK\x01\x02"))
	binary.LittleEndian.PutUint16(m[cd+10:], 12)
	if _, err := ReadZipEntry(ctx, bytes.NewReader(m), int64(len(m)), "a.png", ExtractOptions{}); !errors.Is(err, ErrUnsupportedMethod) {
		t.Fatalf("bzip2: %v", err)
	}
	// A central directory that points the header beyond the file.
	o := bytes.Clone(plain)
	binary.LittleEndian.PutUint32(o[cd+42:], uint32(len(o)+10))
	if _, err := ReadZipEntry(ctx, bytes.NewReader(o), int64(len(o)), "a.png", ExtractOptions{}); err == nil {
		t.Fatal("header offset beyond the file accepted")
	}
}

// FuzzZipEntryRange parses untrusted bytes as a ZIP file: locating and
// reading an entry must never panic, read out of bounds, or return more
// than the size limit.
func FuzzZipEntryRange(f *testing.F) {
	f.Add(makeZip(f, []testFile{{"a.png", []byte("abc")}, {"dir/b.jpg", bytes.Repeat([]byte("b"), 3000)}}, zipOpts{}), "a.png")
	f.Add(makeZip(f, []testFile{{"a.png", []byte("abc")}}, zipOpts{store: true, prefix: []byte("MZ")}), "a.png")
	f.Add(makeZip(f, []testFile{{"x", nil}}, zipOpts{}), "x")
	f.Add([]byte("PK\x05\x06\x00\x00\x00\x00\x01\x00\x01\x00\xff\xff\xff\xff\x00\x00\x00\x00\x00\x00"), "a")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		size := int64(len(data))
		span, err := FindZipEntry(bytes.NewReader(data), size, name, 1<<20)
		if err == nil {
			if span.HeaderOffset < 0 || span.HeaderOffset > size || span.CompressedSize < 0 {
				t.Fatalf("span %+v outside a %d-byte file", span, size)
			}
			if span.HeaderOffset+30 <= size {
				if r, err := span.DataRange(data[span.HeaderOffset:span.HeaderOffset+30], size); err == nil && (r.Offset < 0 || r.Offset+r.Length > size) {
					t.Fatalf("range %+v outside a %d-byte file", r, size)
				}
			}
		}
		out, err := ReadZipEntry(context.Background(), bytes.NewReader(data), size, name, ExtractOptions{MaxSize: 1 << 16})
		if err == nil && len(out) > 1<<16 {
			t.Fatalf("%d bytes over the limit", len(out))
		}
	})
}

func pngImage(t testing.TB, w, h int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, color.NRGBA{uint8(x * 3), uint8(y * 5), 200, uint8(128 + x%128)})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func jpegImage(t testing.TB, w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 90, 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
