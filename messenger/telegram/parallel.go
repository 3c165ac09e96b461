package telegram

import (
	"context"
	"sync"
)

// forEachInOrder runs work for every item in [from, to) on threads
// goroutines, each with a buffer of its own from newBuf (none when newBuf is
// nil), and calls advanced(next) each time the contiguous prefix of
// finished items grows to next (items from..next-1 are all done), so a
// resume point never skips an unfinished item. Calls of advanced are
// serialised. The first error of work cancels the items not yet started and
// is returned; when ctx ends first, its error is.
func forEachInOrder(ctx context.Context, from, to int64, threads int, newBuf func() []byte,
	work func(ctx context.Context, item int64, buf []byte) error, advanced func(next int64)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	items := make(chan int64)
	go func() {
		defer close(items)
		for i := from; i < to; i++ {
			select {
			case items <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	var (
		mu       sync.Mutex
		finished = map[int64]bool{}
		next     = from
		firstErr error
		wg       sync.WaitGroup
	)
	for range max(threads, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			if newBuf != nil {
				buf = newBuf()
			}
			for i := range items {
				err := work(ctx, i, buf)
				mu.Lock()
				if err != nil {
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					cancel()
					return
				}
				finished[i] = true
				grew := false
				for finished[next] {
					delete(finished, next)
					next++
					grew = true
				}
				if grew && advanced != nil {
					advanced(next)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}
