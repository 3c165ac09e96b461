package messenger

import (
	"context"
	"sync"
)

// MemoryPacer is the in-process Pacer: one Limiter per key, created on the
// key's first Wait. It holds a limit only within one process; processes
// that share a bot need a Pacer backed by the database. It is safe for
// concurrent use.
type MemoryPacer struct {
	mu   sync.Mutex
	keys map[string]*pacedKey
}

type pacedKey struct {
	rate  float64
	burst int
	lim   *Limiter
}

// NewMemoryPacer returns an empty MemoryPacer.
func NewMemoryPacer() *MemoryPacer {
	return &MemoryPacer{keys: map[string]*pacedKey{}}
}

// Wait implements Pacer. A key waited on with another rate or burst than
// before starts a new, full bucket with the new values.
func (p *MemoryPacer) Wait(ctx context.Context, key string, rate float64, burst int) error {
	return p.WaitN(ctx, key, rate, burst, 1)
}

// WaitN implements Pacer: it takes n tokens one after the other, so it
// returns when the last of them is due.
func (p *MemoryPacer) WaitN(ctx context.Context, key string, rate float64, burst, n int) error {
	p.mu.Lock()
	k := p.keys[key]
	if k == nil || k.rate != rate || k.burst != burst {
		k = &pacedKey{rate: rate, burst: burst, lim: NewLimiter(rate, burst)}
		p.keys[key] = k
	}
	p.mu.Unlock()
	for range max(n, 1) {
		if err := k.lim.Wait(ctx); err != nil {
			return err
		}
	}
	return nil
}

var _ Pacer = (*MemoryPacer)(nil)
