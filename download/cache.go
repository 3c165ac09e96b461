package download

import (
	"container/list"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Cache keeps recently served chunks of destination posts on disk, up to
// a byte budget (DOWNLOAD_CACHE_BYTES): a second download of the same file
// reads them instead of asking the platform. A post's document never
// changes, so a chunk is named by its channel, post and index and never
// goes stale. The least recently used chunks leave first. A nil *Cache
// keeps nothing.
type Cache struct {
	dir string
	max int64

	mu    sync.Mutex
	size  int64
	lru   *list.List // of *cacheItem, most recent first
	items map[chunkKey]*list.Element

	hits, misses atomic.Int64
}

// chunkKey names one chunk of one post.
type chunkKey struct {
	channelID int64
	messageID int64
	index     int64
}

type cacheItem struct {
	key  chunkKey
	size int64
}

// OpenCache opens (making it when missing) the cache directory dir,
// keeping at most max bytes; the chunks already there count, oldest
// first. max ≤ 0 returns nil: nothing is kept.
func OpenCache(dir string, max int64) (*Cache, error) {
	if max <= 0 {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("download cache: %w", err)
	}
	c := &Cache{dir: dir, max: max, lru: list.New(), items: map[chunkKey]*list.Element{}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("download cache: %w", err)
	}
	type found struct {
		key  chunkKey
		info fs.FileInfo
	}
	var all []found
	for _, e := range entries {
		key, ok := parseChunkName(e.Name())
		info, err := e.Info()
		if !ok || err != nil || !info.Mode().IsRegular() {
			_ = os.Remove(filepath.Join(dir, e.Name())) // a write cut short, or not ours
			continue
		}
		all = append(all, found{key, info})
	}
	// Oldest first, so that the newest end up at the front.
	slices.SortStableFunc(all, func(a, b found) int { return a.info.ModTime().Compare(b.info.ModTime()) })
	for _, f := range all {
		c.items[f.key] = c.lru.PushFront(&cacheItem{key: f.key, size: f.info.Size()})
		c.size += f.info.Size()
	}
	c.mu.Lock()
	c.evictLocked()
	c.mu.Unlock()
	return c, nil
}

func (k chunkKey) name() string {
	return strconv.FormatInt(k.channelID, 10) + "-" + strconv.FormatInt(k.messageID, 10) + "-" + strconv.FormatInt(k.index, 10) + ".chunk"
}

func parseChunkName(name string) (chunkKey, bool) {
	base, ok := strings.CutSuffix(name, ".chunk")
	if !ok {
		return chunkKey{}, false
	}
	f := strings.Split(base, "-")
	if len(f) != 3 {
		return chunkKey{}, false
	}
	var n [3]int64
	for i, s := range f {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 {
			return chunkKey{}, false
		}
		n[i] = v
	}
	return chunkKey{n[0], n[1], n[2]}, true
}

// get returns a cached chunk.
func (c *Cache) get(k chunkKey) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	el, ok := c.items[k]
	if ok {
		c.lru.MoveToFront(el)
	}
	c.mu.Unlock()
	if !ok {
		c.misses.Add(1)
		return nil, false
	}
	path := filepath.Join(c.dir, k.name())
	data, err := os.ReadFile(path)
	if err != nil {
		c.forget(k)
		c.misses.Add(1)
		return nil, false
	}
	// The modification time is the recency a restart finds again.
	now := time.Now()
	_ = os.Chtimes(path, now, now)
	c.hits.Add(1)
	return data, true
}

// put keeps a chunk (a failed write keeps nothing: the cache is only a
// saving).
func (c *Cache) put(k chunkKey, data []byte) {
	if c == nil || int64(len(data)) > c.max {
		return
	}
	c.mu.Lock()
	_, known := c.items[k]
	c.mu.Unlock()
	if known {
		return
	}
	tmp, err := os.CreateTemp(c.dir, "tmp-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), filepath.Join(c.dir, k.name())) != nil {
		_ = os.Remove(tmp.Name())
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, known := c.items[k]; known {
		return
	}
	c.items[k] = c.lru.PushFront(&cacheItem{key: k, size: int64(len(data))})
	c.size += int64(len(data))
	c.evictLocked()
}

// evictLocked removes the least recently used chunks until the cache fits.
func (c *Cache) evictLocked() {
	for c.size > c.max {
		el := c.lru.Back()
		if el == nil {
			return
		}
		it := el.Value.(*cacheItem)
		c.lru.Remove(el)
		delete(c.items, it.key)
		c.size -= it.size
		_ = os.Remove(filepath.Join(c.dir, it.key.name()))
	}
}

func (c *Cache) forget(k chunkKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[k]; ok {
		c.size -= el.Value.(*cacheItem).size
		c.lru.Remove(el)
		delete(c.items, k)
	}
}

// Stats returns the bytes kept and the chunk reads served from the cache
// (hits) and not (misses) since it was opened.
func (c *Cache) Stats() (size, hits, misses int64) {
	if c == nil {
		return 0, 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size, c.hits.Load(), c.misses.Load()
}
