package web

import (
	"context"
	"encoding/json"
	"html/template"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

// defaultSearchCacheTTL is how long a catalog search result is served
// from memory when Deps.SearchCacheTTL is zero. Results are dropped as soon
// as the catalog changes: a curator's or administrator's action in this
// process drops them before it answers (forgetSearchesAfter), every other
// change through the catalog_changed notification (migration 011,
// watchChanges). The TTL only bounds what a lost notification could leave
// behind.
const defaultSearchCacheTTL = time.Minute

// staleFactor is how many TTLs old a result may be and still be answered
// (once, while a refresh runs in the background), so that a popular search
// never waits for PostgreSQL when its result merely aged.
const staleFactor = 2

// searchCacheEntries bounds the results held: a result is a page of rows
// without preview bytes, typically 24 of about 1 KB with their rendering,
// so some 50 MB at most in all.
const searchCacheEntries = 2048

// searchCache keeps recent catalog search results. The catalog is read far
// more often than it changes, and the same searches (the newest packages,
// popular words, the next page of either) come back from many users within
// seconds: each costs PostgreSQL milliseconds of CPU that a map lookup
// saves. Concurrent misses of one search share one query. Results are
// shared between requests and must not be modified.
type searchCache struct {
	ttl time.Duration // <= 0: no caching

	mu       sync.Mutex
	gen      uint64 // bumped by forget: older results are not stored
	entries  map[string]searchEntry
	inflight sharedLoads[string, *store.SearchResult]

	hits, misses atomic.Int64 // searches answered from memory, and not

	// fragments holds the rendered rows of cached results (hitsHTML).
	fragments map[fragmentKey]template.HTML

	// newest is the newest package's id (newestPackageID), known since
	// newestAt; zero when unknown.
	newest   int64
	newestAt time.Time
}

// fragmentKey names the rendering of one cached result in one view.
type fragmentKey struct {
	res  *store.SearchResult
	view string
	text string // the search's text, which the rows highlight
}

type searchEntry struct {
	res *store.SearchResult
	at  time.Time
}

func newSearchCache(ttl time.Duration) *searchCache {
	return &searchCache{ttl: ttl, entries: map[string]searchEntry{}, inflight: sharedLoads[string, *store.SearchResult]{},
		fragments: map[fragmentKey]template.HTML{}}
}

// search returns the result of q: from memory when a result younger than
// the TTL is there; when the result there is older but younger than
// staleFactor TTLs, that result at once while one refresh runs in the
// background (so a popular search never waits for PostgreSQL); else from
// run, once for concurrent callers.
func (c *searchCache) search(ctx context.Context, q store.SearchQuery,
	run func(context.Context, store.SearchQuery) (*store.SearchResult, error)) (*store.SearchResult, error) {
	res, _, err := c.lookup(ctx, q, run)
	return res, err
}

// lookup is search, also reporting whether the answer came from memory
// (or from another caller's query of the same search) rather than from a
// query of this call's own.
func (c *searchCache) lookup(ctx context.Context, q store.SearchQuery,
	run func(context.Context, store.SearchQuery) (*store.SearchResult, error)) (*store.SearchResult, bool, error) {
	if c.ttl <= 0 {
		res, err := run(ctx, q)
		return res, false, err
	}
	b, err := json.Marshal(q)
	if err != nil {
		res, err := run(ctx, q)
		return res, false, err
	}
	key := string(b)
	c.mu.Lock()
	e, cached := c.entries[key]
	age := time.Since(e.at)
	call, running := c.inflight[key]
	switch {
	case cached && age < c.ttl:
		c.mu.Unlock()
		c.hits.Add(1)
		return e.res, true, nil
	case cached && age < staleFactor*c.ttl:
		if !running {
			// Detached from this request, which does not wait for it.
			go c.fill(context.WithoutCancel(ctx), key, c.inflight.begin(key, c.gen), q, run)
		}
		c.mu.Unlock()
		c.hits.Add(1)
		return e.res, true, nil
	case running:
		c.mu.Unlock()
		c.hits.Add(1)
		res, err := call.wait(ctx)
		return res, true, err
	}
	call = c.inflight.begin(key, c.gen)
	c.mu.Unlock()
	c.misses.Add(1)
	res, err := c.fill(ctx, key, call, q, run)
	return res, false, err
}

// fill runs the search of key registered at call (sharedLoads.run: detached
// from the first caller's cancellation), keeps its result unless the cache
// was dropped meanwhile (the generation moved), and wakes its waiters.
func (c *searchCache) fill(ctx context.Context, key string, call *sharedLoad[*store.SearchResult], q store.SearchQuery,
	run func(context.Context, store.SearchQuery) (*store.SearchResult, error)) (*store.SearchResult, error) {
	return c.inflight.run(ctx, &c.mu, key, call, func(ctx context.Context) (*store.SearchResult, error) {
		return run(ctx, q)
	}, func(res *store.SearchResult) {
		if c.gen == call.gen {
			c.store(key, res)
		}
	})
}

// store keeps res under key, making room first when the cache is full:
// expired entries go, then arbitrary ones.
func (c *searchCache) store(key string, res *store.SearchResult) {
	if len(c.entries) >= searchCacheEntries {
		for k, e := range c.entries {
			if time.Since(e.at) >= staleFactor*c.ttl || len(c.entries) >= searchCacheEntries {
				delete(c.entries, k)
			}
		}
	}
	c.entries[key] = searchEntry{res: res, at: time.Now()}
}

// forget drops every result, and any result of a search already running.
func (c *searchCache) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.entries)
	clear(c.fragments)
	c.newest = 0
}

// newestID returns the newest package's id: the one query found while the
// catalog has not changed since and for at most the TTL, else query's
// answer (kept for the next caller).
func (c *searchCache) newestID(ctx context.Context, query func(context.Context) (int64, error)) (int64, error) {
	if c.ttl <= 0 {
		return query(ctx)
	}
	c.mu.Lock()
	id, at, gen := c.newest, c.newestAt, c.gen
	c.mu.Unlock()
	if id != 0 && time.Since(at) < c.ttl {
		return id, nil
	}
	start := time.Now()
	id, err := query(ctx)
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	if c.gen == gen { // the catalog did not change meanwhile
		c.newest, c.newestAt = id, start
	}
	c.mu.Unlock()
	return id, nil
}

// fragment returns the rendering of res in view, made by render once per
// result while the cache holds results (a result that left the cache is
// not asked for again; the renderings are dropped when they outnumber the
// results twice).
func (c *searchCache) fragment(res *store.SearchResult, view, text string, render func() (template.HTML, error)) (template.HTML, error) {
	if c.ttl <= 0 {
		return render()
	}
	key := fragmentKey{res, view, text}
	c.mu.Lock()
	h, ok := c.fragments[key]
	c.mu.Unlock()
	if ok {
		return h, nil
	}
	h, err := render()
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	if len(c.fragments) >= 2*searchCacheEntries {
		clear(c.fragments)
	}
	c.fragments[key] = h
	c.mu.Unlock()
	return h, nil
}

// searchPackages is the catalog search every page and API route uses,
// through the cache; its time and whether the cache answered go to the
// metrics.
func (s *Server) searchPackages(ctx context.Context, q store.SearchQuery) (*store.SearchResult, error) {
	start := time.Now()
	res, cached, err := s.searches.lookup(ctx, q, s.deps.DB.SearchPackages)
	s.deps.Metrics.Search(cached, time.Since(start))
	return res, err
}

// newestPackageID returns the id of the newest package, the one above
// which the catalog's live note announces new ones: from memory until the
// catalog changes (store.DB.NewPackagesSince otherwise).
func (s *Server) newestPackageID(ctx context.Context) (int64, error) {
	return s.searches.newestID(ctx, func(ctx context.Context) (int64, error) {
		id, _, err := s.deps.DB.NewPackagesSince(ctx, math.MaxInt64)
		return id, err
	})
}

// hitsData is what the "hits" template renders: the view ("grid" or
// "list") and its rows or tiles, rendered (Server.hitRow).
type hitsData struct {
	View string
	Rows []template.HTML
}

// hitsHTML renders the rows of a catalog result, once per cached result and
// view: with a search served from memory, rendering the same two dozen rows
// again was most of a page's cost. Each row is put together from pieces
// kept per package (cardCache), so that a package shown by an earlier
// result (another search, the same one before the catalog changed) is not
// rendered again.
func (s *Server) hitsHTML(ctx context.Context, res *store.SearchResult, view string, channels map[int64]string, text string) (template.HTML, error) {
	return s.searches.fragment(res, view, text, func() (template.HTML, error) {
		var groups []int64
		for _, h := range res.Hits {
			if h.Group != nil {
				groups = append(groups, h.Group.ID)
			}
		}
		previews, err := s.deps.DB.GroupsShowingPreview(ctx, groups)
		if err != nil {
			return "", err
		}
		d := hitsData{View: view, Rows: make([]template.HTML, len(res.Hits))}
		t := s.pages["catalog"]
		var b strings.Builder
		for i := range res.Hits {
			h := &res.Hits[i]
			var preview bool
			if h.Group != nil {
				preview = previews[h.Group.ID]
			}
			c, err := s.cards.card(t, h, view == "list", channels[h.Package.SourceChannelID], preview)
			if err != nil {
				return "", hoard.WrapError(hoard.EINTERNAL, err, "Could not render the results.")
			}
			b.Reset()
			b.WriteString(string(c.head))
			if h.FilesMatched > 0 {
				if err := t.ExecuteTemplate(&b, "files-matched", filesMatchedData{Hit: h, Text: text}); err != nil {
					return "", hoard.WrapError(hoard.EINTERNAL, err, "Could not render the results.")
				}
			}
			b.WriteString(string(c.tail))
			d.Rows[i] = template.HTML(b.String()) // #nosec G203 -- the output of html/template
		}
		b.Reset()
		if err := t.ExecuteTemplate(&b, "hits", d); err != nil {
			return "", hoard.WrapError(hoard.EINTERNAL, err, "Could not render the results.")
		}
		return template.HTML(b.String()), nil // #nosec G203 -- the output of html/template
	})
}

// forgetSearchesAfter drops the cached search results after h, a route
// that may change the catalog (a curator's or administrator's action), so
// that its author sees the change in the next search at once. Routes that
// anyone may post to (sign-in, registration) never drop them: a flood of
// those must not turn every search into a database query.
func (s *Server) forgetSearchesAfter(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		defer s.searches.forget()
		h(w, r)
	}
}
