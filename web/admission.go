package web

import (
	"context"
	"net/http"
	"runtime"
)

// admission bounds how many requests are served at once; the others wait
// in arrival order (Go wakes goroutines blocked on a channel send first in,
// first out) until a slot frees or their client goes away.
//
// Without it, every request in flight shares the CPUs with every other one
// and with PostgreSQL: under a burst, a search that needs 10 ms of CPU takes
// 25 times that while fifty others progress beside it, and the slowest
// requests stretch far beyond the average. With a few served at a time each
// one runs at nearly full speed and the wait is spread evenly over the
// queue: the same throughput, a tail close to the mean (make bench, README).
type admission struct{ slots chan struct{} }

// newAdmission returns a gate of n slots (2 per CPU when n is 0); nil, no
// gate, when n is negative.
func newAdmission(n int) *admission {
	if n < 0 {
		return nil
	}
	if n == 0 {
		n = 2 * runtime.GOMAXPROCS(0)
	}
	return &admission{slots: make(chan struct{}, n)}
}

// wrap serves h once a slot is free. A request whose client leaves while it
// waits is dropped unanswered.
func (a *admission) wrap(h http.HandlerFunc) http.HandlerFunc {
	if a == nil {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Context().Value(admittedKey{}) != nil {
			h(w, r) // a page served within an admitted request (showFormAgain)
			return
		}
		select {
		case a.slots <- struct{}{}:
		case <-r.Context().Done():
			return
		}
		defer func() { <-a.slots }()
		h(w, r.WithContext(context.WithValue(r.Context(), admittedKey{}, true)))
	}
}

// admittedKey marks a request's context once the gate admitted it: a page
// it serves within itself (a form shown again) holds the same slot.
type admittedKey struct{}
