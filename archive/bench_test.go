package archive

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

func BenchmarkListZip10k(b *testing.B) {
	var files []testFile
	for i := range 10000 {
		files = append(files, testFile{fmt.Sprintf("dir%d/file%05d.stl", i%50, i), []byte("solid x\nendsolid x\n")})
	}
	p := writeTemp(b, "10k.zip", makeZip(b, files, zipOpts{}))
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		l, err := List(ctx, ZIP, []string{p}, ListOptions{})
		if err != nil || len(l.Entries) != 10000 {
			b.Fatal(err, len(l.Entries))
		}
	}
}

// BenchmarkHashingWriter writes 64 MiB in 1 MiB chunks from 4 goroutines
// that take chunks in order and finish out of order.
func BenchmarkHashingWriter(b *testing.B) {
	const chunk, total = 1 << 20, 64 << 20
	data := pseudoRandom(chunk, 5)
	b.SetBytes(total)
	for b.Loop() {
		w, _ := NewHashingWriter(context.Background(), discardWriterAt{}, HashState{}, 0)
		offs := make(chan int64, 4)
		go func() {
			for off := int64(0); off < total; off += chunk {
				offs <- off
			}
			close(offs)
		}()
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for off := range offs {
					if _, err := w.WriteAt(data, off); err != nil {
						b.Error(err)
					}
				}
			})
		}
		wg.Wait()
		if _, err := w.Sum(total); err != nil {
			b.Fatal(err)
		}
	}
}

type discardWriterAt struct{}

func (discardWriterAt) WriteAt(p []byte, _ int64) (int, error) { return len(p), nil }

func BenchmarkGroupSets10k(b *testing.B) {
	var msgs []Message
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 10000 {
		var name string
		switch i % 5 {
		case 0:
			name = fmt.Sprintf("Pack %d.zip", i)
		case 1, 2:
			name = fmt.Sprintf("Set %d.part%d.rar", i/5, i%5)
		case 3:
			name = fmt.Sprintf("Model %d.7z.001", i/5)
		default:
			name = fmt.Sprintf("figure %d.stl", i)
		}
		msgs = append(msgs, Message{ID: int64(i), Name: name, Size: int64(i * 100), Date: at.Add(time.Duration(i) * time.Second)})
	}
	for b.Loop() {
		if len(GroupSets(msgs)) == 0 {
			b.Fatal("no sets")
		}
	}
}
