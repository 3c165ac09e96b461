package messenger

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hoard/hoard"
)

func TestMemoryPacer(t *testing.T) {
	p := NewMemoryPacer()
	ctx := context.Background()
	// A rate this slow makes a wait past the burst last about an hour: it
	// can only end by its context.
	const slow = 1.0 / 3600
	chat := func(id int, burst int) hoard.RateLimit {
		return hoard.RateLimit{Key: fmt.Sprintf("bot:1:chat:%d", id), Rate: slow, Burst: burst}
	}
	for i, step := range []struct {
		name   string
		n      int
		limits []hoard.RateLimit
		due    bool // within 20 ms
	}{
		{"first of a burst of 2", 1, []hoard.RateLimit{chat(7, 2)}, true},
		{"second of the burst", 1, []hoard.RateLimit{chat(7, 2)}, true},
		{"past the burst", 1, []hoard.RateLimit{chat(7, 2)}, false},
		{"another key shares no bucket", 1, []hoard.RateLimit{chat(8, 2)}, true},
		{"new limits start a new bucket", 1, []hoard.RateLimit{{Key: "bot:1:chat:7", Rate: 1000, Burst: 3}}, true},
		{"two at once within the burst", 2, []hoard.RateLimit{chat(9, 2)}, true},
		{"three at once past the burst", 3, []hoard.RateLimit{chat(10, 2)}, false},
		{"no rate is no limit", 100, []hoard.RateLimit{{Key: "free"}}, true},
		{"every limit is waited for", 1, []hoard.RateLimit{chat(11, 2), chat(9, 2)}, false},
	} {
		short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		err := p.WaitN(short, step.n, step.limits...)
		cancel()
		if due := err == nil; due != step.due || (err != nil && !errors.Is(err, context.DeadlineExceeded)) {
			t.Fatalf("step %d, %s: WaitN = %v, want due %v", i, step.name, err, step.due)
		}
	}
}
