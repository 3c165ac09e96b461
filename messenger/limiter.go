package messenger

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Limiter is a token bucket: rate tokens per second, up to burst saved. One
// Limiter per account is shared by everything that account does. It is safe
// for concurrent use. A shared Limiter (NewSharedLimiter) takes its tokens
// from a Reserver, so that the rate holds across every process.
type Limiter struct {
	waits  atomic.Int64
	mu     sync.Mutex
	rate   float64
	burst  float64
	tokens float64
	last   time.Time

	// Of a shared Limiter: where tokens are reserved, under which key, how
	// many at a time, and the reserved ones not handed out yet (left, the
	// first of them allowed at next, the others 1/rate apart).
	shared Reserver
	key    string
	batch  int
	left   int
	next   time.Time
}

// Reserver reserves requests under a key for a rate limit that holds
// across processes; store.Pacer implements it on PostgreSQL.
type Reserver interface {
	// Reserve reserves n more requests under key at rate per second with
	// bursts of up to burst, and returns how long to wait before the first
	// of them; the others follow 1/rate apart.
	Reserve(ctx context.Context, key string, rate float64, burst, n int) (time.Duration, error)
}

// NewSharedLimiter returns a Limiter of rate requests per second with
// bursts of up to burst that holds across every process reserving under key
// from r (one messenger account's key in every worker process). To keep a
// request cheap it reserves a batch of up to a tenth of a second's tokens
// at once (at most burst) and hands them out at their reserved times;
// reserved tokens left unused for longer than 1/rate lapse rather than
// crowd into a later second. When a reservation fails (the database is
// unreachable), the request waits on this process's own bucket instead:
// the limit then holds per process only. rate ≤ 0 means unlimited.
func NewSharedLimiter(r Reserver, key string, rate float64, burst int) *Limiter {
	l := NewLimiter(rate, burst)
	l.shared, l.key = r, key
	l.batch = max(1, min(int(rate/10), int(l.burst)))
	return l
}

// NewLimiter returns a full bucket. rate ≤ 0 means unlimited.
func NewLimiter(rate float64, burst int) *Limiter {
	if burst < 1 {
		burst = 1
	}
	return &Limiter{rate: rate, burst: float64(burst), tokens: float64(burst), last: time.Now()}
}

// Wait blocks until a token is available or ctx ends. Every call counts
// in Waits, limited or not.
func (l *Limiter) Wait(ctx context.Context) error {
	if l == nil {
		return ctx.Err()
	}
	l.waits.Add(1)
	if l.rate <= 0 {
		return ctx.Err()
	}
	if l.shared != nil {
		if at, ok := l.reserved(ctx); ok {
			return sleepUntil(ctx, at)
		}
	}
	l.mu.Lock()
	now := time.Now()
	l.tokens += now.Sub(l.last).Seconds() * l.rate
	if l.tokens > l.burst {
		l.tokens = l.burst
	}
	l.last = now
	l.tokens--
	var wait time.Duration
	if l.tokens < 0 {
		wait = time.Duration(-l.tokens / l.rate * float64(time.Second))
	}
	l.mu.Unlock()
	if wait == 0 {
		return ctx.Err()
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		l.mu.Lock()
		l.tokens++ // give the reservation back
		l.mu.Unlock()
		return ctx.Err()
	}
}

// reserved hands out the next token of a shared Limiter: the time it may
// be used. ok is false when no token could be reserved.
func (l *Limiter) reserved(ctx context.Context) (at time.Time, ok bool) {
	interval := time.Duration(float64(time.Second) / l.rate)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.left > 0 && time.Since(l.next) > interval {
		l.left = 0 // lapsed
	}
	if l.left == 0 {
		wait, err := l.shared.Reserve(ctx, l.key, l.rate, int(l.burst), l.batch)
		if err != nil {
			return time.Time{}, false
		}
		l.next, l.left = time.Now().Add(wait), l.batch
	}
	at = l.next
	l.next = l.next.Add(interval)
	l.left--
	return at, true
}

// sleepUntil waits until at or until ctx ends.
func sleepUntil(ctx context.Context, at time.Time) error {
	wait := time.Until(at)
	if wait <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Waits returns how many times Wait was called: with one Limiter per
// account and one Wait per request, the number of platform requests that
// account made (retries after a flood wait included).
func (l *Limiter) Waits() int64 {
	if l == nil {
		return 0
	}
	return l.waits.Load()
}
