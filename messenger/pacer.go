package messenger

import (
	"context"
	"sync"

	"github.com/hoard/hoard"
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

// WaitN implements Pacer: it takes each limit's n tokens one after the
// other, so it returns when the last of them is due. A key waited on with
// another rate or burst than before starts a new, full bucket with the new
// values.
func (p *MemoryPacer) WaitN(ctx context.Context, n int, limits ...hoard.RateLimit) error {
	for _, l := range limits {
		lim := p.limiter(l)
		for range max(n, 1) {
			if err := lim.Wait(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// limiter is the bucket of l's key, made on its first use or when its
// rate or burst changed.
func (p *MemoryPacer) limiter(l hoard.RateLimit) *Limiter {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := p.keys[l.Key]
	if k == nil || k.rate != l.Rate || k.burst != l.Burst {
		k = &pacedKey{rate: l.Rate, burst: l.Burst, lim: NewLimiter(l.Rate, l.Burst)}
		p.keys[l.Key] = k
	}
	return k.lim
}

var _ Pacer = (*MemoryPacer)(nil)
