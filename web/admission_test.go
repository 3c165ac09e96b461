package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestAdmissionGate(t *testing.T) {
	t.Run("at most n at once, the rest in arrival order", func(t *testing.T) {
		g := newAdmission(2)
		release := make(chan struct{})
		var running, most atomic.Int64
		var mu sync.Mutex
		var order []string
		h := g.wrap(func(w http.ResponseWriter, r *http.Request) {
			n := running.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			mu.Lock()
			order = append(order, r.Header.Get("X-N"))
			mu.Unlock()
			<-release
			running.Add(-1)
		})
		var wg sync.WaitGroup
		for i := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := httptest.NewRequest("GET", "/", nil)
				r.Header.Set("X-N", strconv.Itoa(i))
				h(httptest.NewRecorder(), r)
			}()
			for running.Load() < int64(min(i+1, 2)) { // the first two enter; the rest queue in order
				runtime.Gosched()
			}
			time.Sleep(5 * time.Millisecond)
		}
		if running.Load() != 2 {
			t.Fatalf("%d requests served at once by a gate of 2", running.Load())
		}
		served := func() int { mu.Lock(); defer mu.Unlock(); return len(order) }
		for k := range 6 { // one at a time: the next in line enters before the next release
			release <- struct{}{}
			for served() < min(k+3, 6) {
				runtime.Gosched()
			}
		}
		wg.Wait()
		if most.Load() != 2 || strings.Join(order, "") != "012345" {
			t.Fatalf("at most %d at once, served in order %v", most.Load(), order)
		}
	})
	t.Run("a client that leaves while waiting is dropped", func(t *testing.T) {
		g := newAdmission(1)
		release := make(chan struct{})
		var served atomic.Int64
		h := g.wrap(func(http.ResponseWriter, *http.Request) { served.Add(1); <-release })
		go h(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
		for served.Load() == 0 {
			runtime.Gosched()
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			h(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil).WithContext(ctx))
			close(done)
		}()
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("a request whose client left kept waiting")
		}
		close(release)
		if served.Load() != 1 {
			t.Fatalf("%d served: the request whose client left was served", served.Load())
		}
	})
	t.Run("sizes", func(t *testing.T) {
		if g := newAdmission(-1); g != nil {
			t.Fatal("a negative size must mean no gate")
		}
		if g := newAdmission(0); cap(g.slots) != 2*runtime.GOMAXPROCS(0) {
			t.Fatalf("default gate of %d slots", cap(g.slots))
		}
	})
}

// TestUngatedRoutes: what streams for long or must answer at once skips
// the gate, and nothing else does.
func TestUngatedRoutes(t *testing.T) {
	want := map[string]bool{"GET /healthz": true, "GET /readyz": true, "GET /static/*": true, "GET /favicon.ico": true, "POST /api/uploads": true,
		"GET /packages/{id}/download": true, "GET /packages/download": true, "GET /groups/{id}/download": true, "GET /crowdfunds/{id}/download": true}
	s := &Server{}
	for _, rt := range s.routes() {
		key := rt.Method + " " + rt.Pattern
		if rt.Ungated != want[key] {
			t.Errorf("%s: ungated %v, want %v", key, rt.Ungated, want[key])
		}
	}
}
