package web

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hoard/hoard/store"
)

// countingSearch is a search function that counts its runs, answers with a
// result naming the run, and can be held until released.
type countingSearch struct {
	runs    atomic.Int64
	release chan struct{} // nil: answer at once
}

func (c *countingSearch) run(ctx context.Context, q store.SearchQuery) (*store.SearchResult, error) {
	n := c.runs.Add(1)
	if c.release != nil {
		<-c.release
	}
	return &store.SearchResult{Next: &store.SearchCursor{ID: n}}, nil
}

func TestSearchCache(t *testing.T) {
	ctx := context.Background()
	dragon := store.SearchQuery{Text: "dragon"}
	t.Run("each order and page is a search of its own", func(t *testing.T) {
		c, s := newSearchCache(time.Minute), &countingSearch{}
		queries := []store.SearchQuery{dragon, {Text: "dragon", Sort: store.SortName}, {Text: "dragon", Sort: store.SortSize},
			{Text: "dragon", Sort: store.SortSize, After: &store.SearchCursor{Sort: store.SortSize, Size: 10, ID: 3}},
			{Creator: "drag"}, {Creator: "drag", WholeNames: true}}
		for i, q := range queries {
			if _, _ = c.search(ctx, q, s.run); s.runs.Load() != int64(i+1) {
				t.Fatalf("%+v was served from another search's result", q)
			}
		}
	})
	t.Run("a repeated search is served from memory; an old one once more while it refreshes", func(t *testing.T) {
		const ttl = 60 * time.Millisecond
		c, s := newSearchCache(ttl), &countingSearch{}
		first, _ := c.search(ctx, dragon, s.run)
		again, _ := c.search(ctx, dragon, s.run)
		if again != first || s.runs.Load() != 1 {
			t.Fatalf("%d runs: the second search was not served from memory", s.runs.Load())
		}
		if _, _ = c.search(ctx, store.SearchQuery{Text: "dragon", Tags: []string{"x"}}, s.run); s.runs.Load() != 2 {
			t.Fatal("a search with another filter was served from the first one's result")
		}

		time.Sleep(ttl + 10*time.Millisecond)
		stale, _ := c.search(ctx, dragon, s.run)
		if stale != first {
			t.Fatal("a result older than the TTL (but within the stale window) was not answered at once")
		}
		deadline := time.Now().Add(time.Second)
		for s.runs.Load() < 3 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(5 * time.Millisecond) // the refresh stores its result
		if fresh, _ := c.search(ctx, dragon, s.run); fresh == first || s.runs.Load() != 3 {
			t.Fatalf("%d runs: the stale answer did not refresh the result in the background", s.runs.Load())
		}
		time.Sleep(staleFactor*ttl + 10*time.Millisecond)
		before := s.runs.Load()
		if late, _ := c.search(ctx, dragon, s.run); late.Next.ID != before+1 {
			t.Fatal("a result older than the stale window was answered")
		}
	})
	t.Run("concurrent misses share one query", func(t *testing.T) {
		c, s := newSearchCache(time.Minute), &countingSearch{release: make(chan struct{})}
		var wg sync.WaitGroup
		results := make([]*store.SearchResult, 20)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i], _ = c.search(ctx, dragon, s.run)
			}()
		}
		time.Sleep(50 * time.Millisecond)
		close(s.release)
		wg.Wait()
		for _, r := range results {
			if r != results[0] {
				t.Fatal("callers got different results")
			}
		}
		if s.runs.Load() != 1 {
			t.Fatalf("%d queries for 20 concurrent identical searches", s.runs.Load())
		}
	})
	t.Run("forget drops results, also of a search running across it", func(t *testing.T) {
		c, s := newSearchCache(time.Minute), &countingSearch{}
		c.search(ctx, dragon, s.run)
		c.forget()
		c.search(ctx, dragon, s.run)
		if s.runs.Load() != 2 {
			t.Fatal("a forgotten result was served")
		}
		s.release = make(chan struct{})
		other := store.SearchQuery{Text: "orc"}
		done := make(chan struct{})
		go func() { c.search(ctx, other, s.run); close(done) }()
		time.Sleep(20 * time.Millisecond)
		c.forget() // a write committed while the search ran
		close(s.release)
		<-done
		s.release = nil
		c.search(ctx, other, s.run)
		if s.runs.Load() != 4 {
			t.Fatalf("%d runs: a result that began before a write was kept after it", s.runs.Load())
		}
	})
	t.Run("a negative TTL caches nothing", func(t *testing.T) {
		c, s := newSearchCache(-1), &countingSearch{}
		c.search(ctx, dragon, s.run)
		c.search(ctx, dragon, s.run)
		if s.runs.Load() != 2 {
			t.Fatal("searches were cached with caching off")
		}
	})
	t.Run("the cache stays bounded", func(t *testing.T) {
		c, s := newSearchCache(time.Minute), &countingSearch{}
		for i := range 3 * searchCacheEntries {
			c.search(ctx, store.SearchQuery{Text: "w", ChannelID: int64(i)}, s.run)
		}
		if n := len(c.entries); n > searchCacheEntries {
			t.Fatalf("%d entries held, bound %d", n, searchCacheEntries)
		}
	})
}
