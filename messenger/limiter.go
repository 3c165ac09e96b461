package messenger

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Limiter is a token bucket: rate tokens per second, up to burst saved. One
// Limiter per account is shared by everything that account does. It is safe
// for concurrent use.
type Limiter struct {
	waits  atomic.Int64
	mu     sync.Mutex
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
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

// Waits returns how many times Wait was called: with one Limiter per
// account and one Wait per request, the number of platform requests that
// account made (retries after a flood wait included).
func (l *Limiter) Waits() int64 {
	if l == nil {
		return 0
	}
	return l.waits.Load()
}
