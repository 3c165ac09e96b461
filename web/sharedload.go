package web

import (
	"context"
	"errors"
	"sync"
)

// sharedLoad is a load under way (a search, a session's look-up, a
// package's file index) that the callers who miss the same key meanwhile
// wait for instead of making their own; done is closed once val and err
// are in.
type sharedLoad[V any] struct {
	done chan struct{}
	gen  uint64 // the holding cache's generation when the load began
	val  V
	err  error
}

// sharedLoads are the loads under way by key. The cache that holds them
// guards them with its own mutex: begin and lookups under it, run takes it
// to end a load.
type sharedLoads[K comparable, V any] map[K]*sharedLoad[V]

// errLoadUnfinished is what the callers waiting for a load get when it
// ended without a result (its function panicked).
var errLoadUnfinished = errors.New("web: a shared load did not finish")

// begin registers a load of key, begun at the holding cache's generation
// gen; the cache's mutex is held.
func (m sharedLoads[K, V]) begin(key K, gen uint64) *sharedLoad[V] {
	l := &sharedLoad[V]{done: make(chan struct{}), gen: gen, err: errLoadUnfinished}
	m[key] = l
	return l
}

// run performs l, the load of key that begin registered, with load:
// detached from ctx's cancellation (others may be waiting for it; it keeps
// ctx's values). Then, under mu, it lets the next miss of key begin
// another and hands a successful result to keep (nil: none), and it wakes
// the waiters — also when load panics, who then get errLoadUnfinished.
func (m sharedLoads[K, V]) run(ctx context.Context, mu *sync.Mutex, key K, l *sharedLoad[V],
	load func(context.Context) (V, error), keep func(V)) (V, error) {
	defer func() {
		mu.Lock()
		if m[key] == l {
			delete(m, key)
		}
		if l.err == nil && keep != nil {
			keep(l.val)
		}
		mu.Unlock()
		close(l.done)
	}()
	l.val, l.err = load(context.WithoutCancel(ctx))
	return l.val, l.err
}

// wait returns l's result once it is in, or ctx's error if ctx ends first.
func (l *sharedLoad[V]) wait(ctx context.Context) (V, error) {
	select {
	case <-l.done:
		return l.val, l.err
	case <-ctx.Done():
		var zero V
		return zero, ctx.Err()
	}
}
