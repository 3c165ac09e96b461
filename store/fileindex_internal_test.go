package store

import (
	"slices"
	"strings"
	"testing"
)

// FuzzFileIndexFind: Find lists the entries a scan of every lower-cased
// path lists, whatever the paths and the text (the text is a client's).
func FuzzFileIndexFind(f *testing.F) {
	f.Add("dragon/body.stl\ndragon/wing.stl\nknight", "dragon", 0, 5)
	f.Add("a\naa\naaa", "a", 1, 2)
	f.Add("x", "", -1, 3)
	f.Add("ab\x00cd\nbc", "bc", -1, 10)
	f.Fuzz(func(t *testing.T, listing, query string, after, limit int) {
		paths := strings.Split(strings.ReplaceAll(listing, "\x00", ""), "\n")
		var b fileIndexBuilder
		for i, p := range paths {
			b.add(int32(2*i), p) // ordinals with gaps
		}
		x := b.done()
		limit %= 50
		var want []int32
		findable := query != "" && limit > 0 && !strings.Contains(query, "\x00")
		for i, p := range paths {
			if findable && 2*i > after && len(want) < limit && strings.Contains(p, query) {
				want = append(want, int32(2*i))
			}
		}
		if got := x.Find(query, after, limit); !slices.Equal(got, want) {
			t.Fatalf("Find(%q, %d, %d) in %q = %v, want %v", query, after, limit, paths, got, want)
		}
	})
}
