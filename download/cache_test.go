package download

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The cache keeps at most its budget, lets the least recently used
// chunks go first, finds its chunks again after a restart, and drops what
// is not a chunk of its own.
func TestCacheIsBoundedAndSurvivesARestart(t *testing.T) {
	dir := t.TempDir()
	c, err := OpenCache(dir, 3000)
	if err != nil {
		t.Fatal(err)
	}
	key := func(i int64) chunkKey { return chunkKey{channelID: 1, messageID: 2, index: i} }
	data := func(i int64) []byte { return bytes.Repeat([]byte{byte(i)}, 1000) }
	for i := range int64(3) {
		c.put(key(i), data(i))
		time.Sleep(10 * time.Millisecond) // distinct modification times
	}
	if _, ok := c.get(key(0)); !ok { // 0 is now the most recently used
		t.Fatal("chunk 0 missing")
	}
	c.put(key(3), data(3)) // over budget: 1, the least recently used, goes
	type state struct {
		Size             int64
		Has0, Has1, Has3 bool
	}
	has := func(c *Cache, i int64) bool { b, ok := c.get(key(i)); return ok && bytes.Equal(b, data(i)) }
	size, _, _ := c.Stats()
	if got, want := (state{size, has(c, 0), has(c, 1), has(c, 3)}), (state{3000, true, false, true}); got != want {
		t.Fatalf("after eviction: %+v, want %+v", got, want)
	}
	if err := os.WriteFile(filepath.Join(dir, "tmp-123"), []byte("cut short"), 0o600); err != nil {
		t.Fatal(err)
	}
	again, err := OpenCache(dir, 2000) // a smaller budget after a restart
	if err != nil {
		t.Fatal(err)
	}
	size, _, _ = again.Stats()
	_, err = os.Stat(filepath.Join(dir, "tmp-123"))
	if got, want := (state{size, has(again, 0), has(again, 1), has(again, 3)}), (state{2000, true, false, true}); got != want || !os.IsNotExist(err) {
		t.Fatalf("after a restart: %+v (stray file: %v), want %+v and the stray file gone", got, err, want)
	}
	if none, err := OpenCache(filepath.Join(dir, "off"), 0); none != nil || err != nil {
		t.Fatalf("a zero budget = %v, %v, want no cache", none, err)
	}
}
