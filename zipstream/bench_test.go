package zipstream

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
)

// BenchmarkReader streams a 256 MiB archive of 16 in-memory entries the way
// http.ServeContent does (a 32 KiB copy buffer). Allocations are per entry
// opened, not per byte.
func BenchmarkReader(b *testing.B) {
	const entries, size = 16, 16 << 20
	data := randomBytes(rand.New(rand.NewPCG(11, 12)), size)
	sum := crc(data)
	es := make([]Entry, entries)
	for i := range es {
		es[i] = Entry{Name: fmt.Sprintf("part%02d.bin", i), Size: size, CRC32: sum, Modified: testTime,
			Open: func(_ context.Context, off int64) (io.ReadCloser, error) {
				return io.NopCloser(bytes.NewReader(data[off:])), nil
			}}
	}
	a := mustNew(b, es)
	buf := make([]byte, 32<<10)
	w := struct{ io.Writer }{io.Discard} // no ReaderFrom: copy through buf
	b.SetBytes(a.Size())
	b.ReportAllocs()
	for b.Loop() {
		r := a.Reader(context.Background())
		if n, err := io.CopyBuffer(w, r, buf); err != nil || n != a.Size() {
			b.Fatal(n, err)
		}
		r.Close()
	}
}
