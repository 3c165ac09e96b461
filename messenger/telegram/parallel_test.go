package telegram

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

func TestForEachInOrder(t *testing.T) {
	boom := errors.New("boom")
	type want struct {
		Err      error
		Advanced []int64 // values passed to advanced, in order
		Last     int64   // the resume point reached
	}
	for _, c := range []struct {
		name     string
		from, to int64
		threads  int
		failAt   int64 // item whose work fails; -1: none
		want     want
	}{
		{name: "all items, one thread", from: 0, to: 5, threads: 1, failAt: -1,
			want: want{Advanced: []int64{1, 2, 3, 4, 5}, Last: 5}},
		{name: "from a resume point", from: 3, to: 6, threads: 1, failAt: -1,
			want: want{Advanced: []int64{4, 5, 6}, Last: 6}},
		{name: "nothing left", from: 4, to: 4, threads: 3, failAt: -1, want: want{}},
		{name: "a failure stops the prefix before it", from: 0, to: 6, threads: 1, failAt: 2,
			want: want{Err: boom, Advanced: []int64{1, 2}, Last: 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got want
			err := forEachInOrder(context.Background(), c.from, c.to, c.threads, func() []byte { return nil },
				func(_ context.Context, item int64, _ []byte) error {
					if item == c.failAt {
						return boom
					}
					return nil
				}, func(next int64) { got.Advanced = append(got.Advanced, next); got.Last = next })
			got.Err = err
			if !errors.Is(got.Err, c.want.Err) || !slices.Equal(got.Advanced, c.want.Advanced) || got.Last != c.want.Last {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestForEachInOrderOutOfOrder finishes items in reverse: the resume point
// moves only over a contiguous prefix, never past an unfinished item, and
// every worker keeps its own buffer.
func TestForEachInOrderOutOfOrder(t *testing.T) {
	const n = 8
	var bufs atomic.Int64
	var advanced []int64
	err := forEachInOrder(context.Background(), 0, n, n, func() []byte { bufs.Add(1); return make([]byte, 1) },
		func(_ context.Context, item int64, _ []byte) error {
			time.Sleep(time.Duration(n-item) * 5 * time.Millisecond) // later items finish first
			return nil
		}, func(next int64) { advanced = append(advanced, next) })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.IsSorted(advanced) || advanced[len(advanced)-1] != n {
		t.Fatalf("advanced %v, want increasing up to %d", advanced, n)
	}
	if bufs.Load() != n {
		t.Fatalf("%d buffers for %d workers", bufs.Load(), n)
	}
}

// TestForEachInOrderCancelled returns the context's error when it ends
// before the items do.
func TestForEachInOrderCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	err := forEachInOrder(ctx, 0, 1000, 2, func() []byte { return nil },
		func(ctx context.Context, item int64, _ []byte) error {
			if item == 10 {
				cancel()
			}
			return nil
		}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestForEachInOrderNoBuffer hands work a nil buffer when newBuf is nil
// (a download keeps the answer's own bytes).
func TestForEachInOrderNoBuffer(t *testing.T) {
	var items atomic.Int64
	err := forEachInOrder(context.Background(), 0, 6, 3, nil, func(_ context.Context, _ int64, buf []byte) error {
		if buf != nil {
			return errors.New("a buffer without newBuf")
		}
		items.Add(1)
		return nil
	}, nil)
	if err != nil || items.Load() != 6 {
		t.Fatalf("err %v after %d items, want 6", err, items.Load())
	}
}
