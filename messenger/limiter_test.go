package messenger

import (
	"context"
	"testing"
	"time"
)

func TestLimiter(t *testing.T) {
	l := NewLimiter(50, 2)
	ctx := context.Background()
	start := time.Now()
	for range 7 { // 2 from the burst, 5 at 20 ms each
		if err := l.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d < 80*time.Millisecond || d > 2*time.Second {
		t.Fatalf("7 waits took %s, want ≈ 100ms", d)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	slow := NewLimiter(0.001, 1)
	_ = slow.Wait(ctx)
	if err := slow.Wait(cctx); err == nil {
		t.Fatal("Wait on a cancelled context succeeded")
	}
	if err := (*Limiter)(nil).Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if l.Waits() != 7 || slow.Waits() != 2 || (*Limiter)(nil).Waits() != 0 {
		t.Fatalf("waits counted: %d, %d", l.Waits(), slow.Waits())
	}
	free := NewLimiter(0, 1) // unlimited requests count too
	for range 3 {
		_ = free.Wait(ctx)
	}
	if free.Waits() != 3 {
		t.Fatalf("unlimited waits counted: %d", free.Waits())
	}
}

// failingReserver is a Reserver whose store is unreachable.
type failingReserver struct{ calls int }

func (f *failingReserver) Reserve(context.Context, string, float64, int, int) (time.Duration, error) {
	f.calls++
	return 0, context.DeadlineExceeded
}

// TestSharedLimiterFallsBackToItsOwnBucket: when no token can be reserved,
// a shared Limiter still paces its own process (never unlimited), and
// every request counts in Waits.
func TestSharedLimiterFallsBackToItsOwnBucket(t *testing.T) {
	r := &failingReserver{}
	l := NewSharedLimiter(r, "account:1", 50, 2)
	ctx := context.Background()
	start := time.Now()
	for range 7 { // 2 from the burst, 5 at 20 ms each
		if err := l.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d < 80*time.Millisecond || d > 2*time.Second {
		t.Fatalf("7 waits took %s, want ≈ 100ms", d)
	}
	if r.calls != 7 || l.Waits() != 7 {
		t.Fatalf("reservations tried %d, waits %d; want 7 and 7", r.calls, l.Waits())
	}
}
