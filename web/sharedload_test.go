package web

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
)

// TestSharedLoads: a load's outcome reaches its waiters, a success also
// its cache (keep), and its key is free for the next load however it ended
// — a load that panics too, whose waiters get an error rather than waiting
// for ever (with the key held, every later miss would have).
func TestSharedLoads(t *testing.T) {
	type outcome struct {
		Val      int
		Err      string
		Kept     []int
		StillRun bool
	}
	for _, tc := range []struct {
		name string
		load func(context.Context) (int, error)
		want outcome
	}{
		{"a result", func(context.Context) (int, error) { return 7, nil }, outcome{Val: 7, Kept: []int{7}}},
		{"a failure, not kept", func(context.Context) (int, error) { return 0, errors.New("boom") }, outcome{Err: "boom"}},
		{"a panic", func(context.Context) (int, error) { panic("load failed") }, outcome{Err: errLoadUnfinished.Error()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			loads := sharedLoads[string, int]{}
			mu.Lock()
			l := loads.begin("k", 0)
			mu.Unlock()
			var got outcome
			func() {
				defer func() { _ = recover() }() // the panic reaches the caller that ran the load
				_, _ = loads.run(context.Background(), &mu, "k", l, tc.load, func(v int) { got.Kept = append(got.Kept, v) })
			}()
			val, err := l.wait(context.Background())
			got.Val = val
			if err != nil {
				got.Err = err.Error()
			}
			mu.Lock()
			_, got.StillRun = loads["k"]
			mu.Unlock()
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
