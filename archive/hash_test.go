package archive

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// memWriterAt is an in-memory io.WriterAt destination.
type memWriterAt struct {
	mu  sync.Mutex
	buf []byte
}

func (m *memWriterAt) WriteAt(p []byte, off int64) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if end := int(off) + len(p); end > len(m.buf) {
		m.buf = append(m.buf, make([]byte, end-len(m.buf))...)
	}
	copy(m.buf[off:], p)
	return len(p), nil
}

func TestHashingWriterConcurrent(t *testing.T) {
	data := pseudoRandom(3<<20+12345, 42)
	want := sha256.Sum256(data)
	const chunk = 64 << 10
	for _, window := range []int64{chunk, 4 * chunk, 64 << 20} {
		for _, workers := range []int{1, 4, 16} {
			dst := &memWriterAt{}
			w, err := NewHashingWriter(context.Background(), dst, HashState{}, window)
			if err != nil {
				t.Fatal(err)
			}
			var seen bytes.Buffer // must see the bytes in file order
			w.Observe(&seen)
			// Workers take chunks in order from a queue (like a
			// downloader) and finish them in random order.
			offs := make(chan int64)
			go func() {
				for off := int64(0); off < int64(len(data)); off += chunk {
					offs <- off
				}
				close(offs)
			}()
			var wg sync.WaitGroup
			for i := range workers {
				wg.Add(1)
				go func(seed uint64) {
					defer wg.Done()
					r := rand.New(rand.NewPCG(seed, 1))
					for off := range offs {
						time.Sleep(time.Duration(r.IntN(200)) * time.Microsecond)
						end := min(off+chunk, int64(len(data)))
						if _, err := w.WriteAt(data[off:end], off); err != nil {
							t.Error(err)
							return
						}
						if w.Buffered() > window {
							t.Errorf("buffered %d > window %d", w.Buffered(), window)
						}
					}
				}(uint64(i))
			}
			wg.Wait()
			sum, err := w.Sum(int64(len(data)))
			if err != nil || !bytes.Equal(sum, want[:]) {
				t.Fatalf("window %d workers %d: sum mismatch, %v", window, workers, err)
			}
			if !bytes.Equal(dst.buf, data) {
				t.Fatal("destination differs")
			}
			if !bytes.Equal(seen.Bytes(), data) {
				t.Fatalf("window %d workers %d: the observer saw %d bytes, not the file in order", window, workers, seen.Len())
			}
		}
	}
}

func TestHashingWriterResume(t *testing.T) {
	data := pseudoRandom(1<<20, 7)
	want := sha256.Sum256(data)
	dst := &memWriterAt{}
	w, _ := NewHashingWriter(context.Background(), dst, HashState{}, 0)
	w.WriteAt(data[:300000], 0)
	w.WriteAt(data[500000:600000], 500000) // ahead: lost on resume
	st, err := w.State()
	if err != nil || st.Offset != 300000 {
		t.Fatal(st.Offset, err)
	}
	blob, _ := st.MarshalBinary()
	var back HashState
	if err := back.UnmarshalBinary(blob); err != nil || back.Offset != 300000 {
		t.Fatal(err)
	}
	w2, err := NewHashingWriter(context.Background(), dst, back, 0)
	if err != nil {
		t.Fatal(err)
	}
	w2.WriteAt(data[200000:400000], 200000) // overlaps the hashed part
	w2.WriteAt(data[400000:], 400000)
	sum, err := w2.Sum(int64(len(data)))
	if err != nil || !bytes.Equal(sum, want[:]) {
		t.Fatal("resumed hash differs", err)
	}
	if err := (&HashState{}).UnmarshalBinary([]byte{1}); err == nil {
		t.Error("short state accepted")
	}
	if _, err := NewHashingWriter(context.Background(), dst, HashState{Digest: []byte("junk")}, 0); err == nil {
		t.Error("bad digest accepted")
	}
}

func TestHashingWriterBlocksAndUnblocks(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	w, _ := NewHashingWriter(ctx, &memWriterAt{}, HashState{}, 10)
	if _, err := w.WriteAt(make([]byte, 10), 100); err != nil { // fills the window
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := w.WriteAt(make([]byte, 5), 200); done <- err }()
	select {
	case err := <-done:
		t.Fatalf("write ahead of a full window did not block: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	// The write at the expected offset never blocks.
	if _, err := w.WriteAt(make([]byte, 50), 0); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("blocked writer: %v", err)
	}
	if _, err := w.Sum(-1); err == nil {
		t.Error("Sum with a gap succeeded")
	}

	w2, _ := NewHashingWriter(context.Background(), &memWriterAt{}, HashState{}, 10)
	w2.WriteAt(make([]byte, 10), 100)
	go func() { _, err := w2.WriteAt(make([]byte, 5), 200); done <- err }()
	time.Sleep(10 * time.Millisecond)
	w2.Close()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	if _, err := w2.WriteAt([]byte{1}, 0); !errors.Is(err, ErrClosed) {
		t.Fatal(err)
	}
	if _, err := w2.Sum(110); err == nil {
		t.Error("size mismatch accepted")
	}
}

func TestHashingWriterFile(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "dl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data := pseudoRandom(100000, 3)
	w, _ := NewHashingWriter(context.Background(), f, HashState{}, 0)
	w.WriteAt(data[50000:], 50000)
	w.WriteAt(data[:50000], 0)
	sum, err := w.Sum(100000)
	want := sha256.Sum256(data)
	if err != nil || !bytes.Equal(sum, want[:]) {
		t.Fatal(err)
	}
	disk, _ := os.ReadFile(f.Name())
	if !bytes.Equal(disk, data) {
		t.Fatal("file differs")
	}
}

func TestHashAcrossParts(t *testing.T) {
	parts := [][]byte{pseudoRandom(70000, 1), pseudoRandom(1, 2), pseudoRandom(123456, 3)}
	want := sha256.Sum256(bytes.Join(parts, nil))
	paths := writeParts(t, t.TempDir(), "p", parts)
	sum, err := HashFiles(context.Background(), HashState{}, paths...)
	if err != nil || !bytes.Equal(sum, want[:]) {
		t.Fatal("HashFiles", err)
	}
	// Streaming: one writer per part, the state carried over.
	st := HashState{}
	for i, p := range parts {
		w, err := NewHashingWriter(context.Background(), &memWriterAt{}, st, 0)
		if err != nil {
			t.Fatal(err)
		}
		w.WriteAt(p, 0)
		s, _ := w.State()
		if i == len(parts)-1 {
			got, err := w.Sum(int64(len(p)))
			if err != nil || !bytes.Equal(got, want[:]) {
				t.Fatal("streamed hash differs", err)
			}
		}
		st = s.NextPart()
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := HashFiles(ctx, HashState{}, paths...); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}

func TestHashingWriterRepeatedChunks(t *testing.T) {
	data := pseudoRandom(1000, 5)
	want := sha256.Sum256(data)
	w, _ := NewHashingWriter(context.Background(), &memWriterAt{}, HashState{}, 0)
	w.WriteAt(data[500:600], 500)
	w.WriteAt(data[500:600], 500) // retried chunk
	w.WriteAt(data[500:800], 500) // longer chunk at the same offset
	w.WriteAt(data[700:1000], 700)
	if w.Offset() != 0 || w.Buffered() != 600 {
		t.Fatalf("offset %d buffered %d", w.Offset(), w.Buffered())
	}
	w.WriteAt(data[:500], 0)
	w.WriteAt(data[:100], 0) // repeat of hashed bytes
	if w.Offset() != 1000 || w.Buffered() != 0 {
		t.Fatalf("offset %d buffered %d", w.Offset(), w.Buffered())
	}
	if sum, err := w.Sum(1000); err != nil || !bytes.Equal(sum, want[:]) {
		t.Fatal("hash differs", err)
	}
}
