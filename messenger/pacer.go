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
	p.mu.Lock()
	k := p.keys[key]
	if k == nil || k.rate != rate || k.burst != burst {
		k = &pacedKey{rate: rate, burst: burst, lim: NewLimiter(rate, burst)}
		p.keys[key] = k
	}
	p.mu.Unlock()
	return k.lim.Wait(ctx)
}

var _ Pacer = (*MemoryPacer)(nil)
