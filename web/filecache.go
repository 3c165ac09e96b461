package web

import (
	"container/list"
	"context"
	"math"
	"sync"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

// File searches of big archives are answered from a store.FileIndex held in
// memory (issue #26): a text whose trigrams are common, or one of one or
// two characters, made PostgreSQL read every entry of a 100,000-entry
// listing for each request, 30–90 ms of its CPU, however the index was
// built; the index in memory answers in a few milliseconds, and the
// database then reads only the page's rows.
const (
	// fileIndexMinEntries is the smallest listing searched in memory:
	// PostgreSQL reads a smaller one whole in a few milliseconds.
	fileIndexMinEntries = 5000
	// fileIndexBudget bounds the memory the indexes hold, in bytes: an
	// index costs about the size of its paths (some 9 MB for 100,000
	// entries), the least recently searched ones go first.
	fileIndexBudget = 128 << 20
)

// fileIndexes keeps the FileIndex of recently searched big packages, least
// recently used evicted past the budget; concurrent misses of one package
// share one load. An index is checked against its package's version on
// every search, so a replaced listing is read again, by any process.
type fileIndexes struct {
	budget int64

	mu      sync.Mutex
	used    int64
	lru     *list.List // of fileIndexEntry, most recently searched first
	byID    map[int64]*list.Element
	loading sharedLoads[int64, *store.FileIndex]
}

// fileIndexEntry is a package's index in the LRU list.
type fileIndexEntry struct {
	id int64
	x  *store.FileIndex
}

func newFileIndexes(budget int64) *fileIndexes {
	return &fileIndexes{budget: budget, lru: list.New(), byID: map[int64]*list.Element{}, loading: sharedLoads[int64, *store.FileIndex]{}}
}

// get returns the index of package id at version v: the one held when it
// is of v, else a fresh load (shared with concurrent callers), kept when
// it fits the budget.
func (c *fileIndexes) get(ctx context.Context, db *store.DB, id int64, v store.FileIndexVersion) (*store.FileIndex, error) {
	c.mu.Lock()
	if e, ok := c.byID[id]; ok {
		if x := e.Value.(fileIndexEntry).x; x.Version.Equal(v) {
			c.lru.MoveToFront(e)
			c.mu.Unlock()
			return x, nil
		}
	}
	if l, inflight := c.loading[id]; inflight {
		c.mu.Unlock()
		return l.wait(ctx)
	}
	l := c.loading.begin(id, 0)
	c.mu.Unlock()
	// Not cut short by this request's client leaving: others may wait
	// for it, and the next search needs it (sharedLoads.run).
	return c.loading.run(ctx, &c.mu, id, l, func(ctx context.Context) (*store.FileIndex, error) {
		return db.LoadFileIndex(ctx, id)
	}, func(x *store.FileIndex) { c.keep(id, x) })
}

// keep holds x as package id's index, evicting the least recently used
// ones past the budget (x itself when it alone exceeds it). c.mu is held.
func (c *fileIndexes) keep(id int64, x *store.FileIndex) {
	if e, ok := c.byID[id]; ok {
		c.drop(e)
	}
	if x.Size() > c.budget {
		return
	}
	c.byID[id] = c.lru.PushFront(fileIndexEntry{id: id, x: x})
	c.used += x.Size()
	for c.used > c.budget {
		c.drop(c.lru.Back())
	}
}

// drop forgets one index. c.mu is held.
func (c *fileIndexes) drop(e *list.Element) {
	ent := c.lru.Remove(e).(fileIndexEntry)
	delete(c.byID, ent.id)
	c.used -= ent.x.Size()
}

// listPackageFiles is store.ListPackageFiles for the web's file lists: a
// search in a listing of fileIndexMinEntries or more goes through the
// package's FileIndex, which finds the page's entries, and the database
// reads only those.
func (s *Server) listPackageFiles(ctx context.Context, p *hoard.Package, afterOrdinal, limit int, query string) ([]hoard.PackageFile, error) {
	if query == "" || p.FileCount < fileIndexMinEntries || s.files == nil {
		return s.deps.DB.ListPackageFiles(ctx, p.ID, afterOrdinal, limit, query)
	}
	if limit <= 0 || limit > 1000 { // ListPackageFiles' bounds
		limit = 100
	}
	if afterOrdinal >= math.MaxInt32 {
		return nil, nil
	}
	v, lower, err := s.deps.DB.FileSearchVersion(ctx, p.ID, query)
	if err != nil {
		return nil, err
	}
	x, err := s.files.get(ctx, s.deps.DB, p.ID, v)
	if err != nil {
		return nil, err
	}
	return s.deps.DB.ListPackageFilesAt(ctx, p.ID, x.Find(lower, max(afterOrdinal, -1), limit), query)
}
