package archive

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Figures of the decode bomb of issue #26: eight small ZIPs, each with a
// 4,890 × 4,890 PNG cover (just under the 24-megapixel limit).
const (
	bombSide  = 4890
	bombCount = 8
)

// TestDecodeMemoryLarge processes bombCount such ZIPs concurrently, as the
// worker's preview jobs would (extract the cover, make its thumbnail), in a
// child process, and reports the child's idle, peak (VmHWM) and settled
// RSS. HOARD_LARGE_TESTS=1 runs it (a few seconds, ~100 MB per decode
// the budget lets through at once); it fails when the peak reaches 350 MiB.
func TestDecodeMemoryLarge(t *testing.T) {
	if dir := os.Getenv("HOARD_DECODE_CHILD"); dir != "" {
		decodeChild(t, dir)
		return
	}
	if os.Getenv("HOARD_LARGE_TESTS") == "" {
		t.Skip("HOARD_LARGE_TESTS=1 runs it")
	}
	dir := t.TempDir()
	for i := range bombCount {
		var zbuf bytes.Buffer
		zw := zip.NewWriter(&zbuf)
		w, err := zw.CreateHeader(&zip.FileHeader{Name: "cover.png", Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		if err := writeFlatPNG(w, bombSide, bombSide, byte(i)); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			t.Logf("each zip: %d bytes", zbuf.Len())
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("bomb%d.zip", i)), zbuf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDecodeMemoryLarge$", "-test.v")
	cmd.Env = append(os.Environ(), "HOARD_DECODE_CHILD="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var peak int64
	for line := range strings.Lines(string(out)) {
		if f, ok := strings.CutPrefix(strings.TrimSpace(line), "RESULT "); ok {
			t.Log(f)
			for kv := range strings.FieldsSeq(f) {
				if v, ok := strings.CutPrefix(kv, "peak_kb="); ok {
					peak, _ = strconv.ParseInt(v, 10, 64)
				}
			}
		}
	}
	if peak == 0 {
		t.Fatalf("child reported no peak:\n%s", out)
	}
	if peak >= 350<<10 {
		t.Errorf("peak RSS %d MiB, want under 350 MiB", peak>>10)
	}
}

// decodeChild is the child process of TestDecodeMemoryLarge.
func decodeChild(t *testing.T, dir string) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.zip"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no zips in %s: %v", dir, err)
	}
	runtime.GC()
	idle := procStatusKB(t, "VmRSS")
	start := time.Now()
	var wg sync.WaitGroup
	for _, p := range paths {
		wg.Go(func() {
			data, err := Extract(context.Background(), ZIP, []string{p}, "cover.png", ExtractOptions{})
			if err != nil {
				t.Error(err)
				return
			}
			thumb, err := MakeThumbnail(context.Background(), data, ThumbnailOptions{})
			if err != nil || len(thumb) == 0 {
				t.Errorf("thumbnail of %s: %d bytes, %v", p, len(thumb), err)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	after := procStatusKB(t, "VmRSS")
	time.Sleep(5 * time.Second)
	settled := procStatusKB(t, "VmRSS")
	fmt.Printf("RESULT decodes=%d idle_kb=%d peak_kb=%d after_kb=%d settled5s_kb=%d elapsed=%s\n",
		len(paths), idle, procStatusKB(t, "VmHWM"), after, settled, elapsed.Round(time.Millisecond))
}

// procStatusKB reads a kB field of /proc/self/status.
func procStatusKB(t *testing.T, field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// writeFlatPNG streams a w×h 8-bit RGBA PNG of one colour to out without
// holding the image: it compresses about 1000:1, a decompression bomb.
func writeFlatPNG(out io.Writer, w, h int, shade byte) error {
	chunk := func(typ string, data []byte) error {
		b := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
		b = append(append(b, typ...), data...)
		b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[4:]))
		_, err := out.Write(b)
		return err
	}
	if _, err := out.Write([]byte("\x89PNG\r\n\x1a\n")); err != nil {
		return err
	}
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(w))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(h))
	if err := chunk("IHDR", append(ihdr, 8, 6, 0, 0, 0)); err != nil {
		return err
	}
	var idat bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&idat, zlib.BestCompression)
	row := make([]byte, 1+4*w)
	for x := range w {
		copy(row[1+4*x:], []byte{200, shade * 20, 90, 255})
	}
	for range h {
		if _, err := zw.Write(row); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := chunk("IDAT", idat.Bytes()); err != nil {
		return err
	}
	return chunk("IEND", nil)
}
