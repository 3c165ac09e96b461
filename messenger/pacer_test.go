package messenger

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestMemoryPacer(t *testing.T) {
	p := NewMemoryPacer()
	ctx := context.Background()
	// A rate this slow makes a third wait last about an hour: it can only
	// end by its context.
	const slow = 1.0 / 3600
	for i := range 2 {
		if err := p.Wait(ctx, "bot:1:chat:7", slow, 2); err != nil {
			t.Fatalf("wait %d within the burst: %v", i, err)
		}
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := p.Wait(short, "bot:1:chat:7", slow, 2); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait past the burst: %v, want the context's deadline", err)
	}
	if err := p.Wait(ctx, "bot:1:chat:8", slow, 2); err != nil {
		t.Fatalf("another key shares no bucket: %v", err)
	}
	if err := p.Wait(ctx, "bot:1:chat:7", 1000, 3); err != nil {
		t.Fatalf("new limits start a new bucket: %v", err)
	}
	if err := p.WaitN(ctx, "bot:1:chat:9", slow, 2, 2); err != nil {
		t.Fatalf("two at once within the burst: %v", err)
	}
	short2, cancel2 := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel2()
	if err := p.WaitN(short2, "bot:1:chat:10", slow, 2, 3); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("three at once past the burst: %v, want the context's deadline", err)
	}
}
