package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

// TestFileSearchOfABigArchiveUsesItsIndex: a file search in a listing of
// fileIndexMinEntries entries or more answers from the package's index held
// in memory — the same entries and pages the database lists — and a
// replaced listing is searched anew.
func TestFileSearchOfABigArchiveUsesItsIndex(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	u, _ := e.user(hoard.RoleUser)
	cookie := e.session(u)
	p := &hoard.Package{FileName: "Big.zip", FileSize: 1, ArchiveType: hoard.ArchiveZIP}
	if err := e.db.CreatePackage(ctx, p); err != nil {
		t.Fatal(err)
	}
	listing := func(format string) {
		t.Helper()
		files := make([]hoard.PackageFile, fileIndexMinEntries)
		for i := range files {
			files[i] = hoard.PackageFile{Path: fmt.Sprintf(format, i%7, i)}
		}
		if err := e.db.ReplacePackageFiles(ctx, p.ID, files); err != nil {
			t.Fatal(err)
		}
	}
	type page struct {
		Items []struct {
			Ordinal int    `json:"ordinal"`
			Path    string `json:"path"`
		} `json:"items"`
		Next *int `json:"next"`
	}
	search := func(q string, after int) page {
		t.Helper()
		resp, body := e.do(nil, "GET", fmt.Sprintf("/api/packages/%d/files?limit=3&after=%d&q=%s", p.ID, after, url.QueryEscape(q)), nil, cookie)
		var got page
		if err := json.Unmarshal([]byte(body), &got); resp.StatusCode != 200 || err != nil {
			t.Fatalf("search %q = %d %.200s", q, resp.StatusCode, body)
		}
		return got
	}
	listing("Model %d/Part %05d.STL")
	tests := []struct {
		q     string
		after int
	}{{"model 3/part 0", -1}, {"MODEL 3/PART 0", 10}, {"zz", -1}, {"t 04999", -1}, {".stl", 4990}, {"/", 4998}}
	for _, tt := range tests {
		want, err := e.db.ListPackageFiles(ctx, p.ID, tt.after, 4, tt.q)
		if err != nil {
			t.Fatal(err)
		}
		got := search(tt.q, tt.after)
		var wantPaths, gotPaths []string
		for i, f := range want {
			if i < 3 {
				wantPaths = append(wantPaths, f.Path)
			}
		}
		for _, it := range got.Items {
			gotPaths = append(gotPaths, it.Path)
		}
		if !reflect.DeepEqual(gotPaths, wantPaths) || (got.Next != nil) != (len(want) > 3) {
			t.Errorf("%q after %d = %v (next %v), want %v", tt.q, tt.after, gotPaths, got.Next, wantPaths)
		}
	}
	held := func() *store.FileIndex {
		e.srv.files.mu.Lock()
		defer e.srv.files.mu.Unlock()
		if el, ok := e.srv.files.byID[p.ID]; ok {
			return el.Value.(fileIndexEntry).x
		}
		return nil
	}
	first := held()
	if first == nil {
		t.Fatal("the package's index is not held")
	}
	search("model", -1)
	if held() != first {
		t.Error("a second search loaded the index again")
	}
	listing("Renamed %d/Piece %05d.obj")
	if got := search("model", -1); len(got.Items) != 0 {
		t.Errorf("the replaced listing still matches: %+v", got.Items)
	}
	if got := search("renamed 1/piece 00001.obj", -1); len(got.Items) != 1 || got.Items[0].Ordinal != 1 {
		t.Errorf("the new listing: %+v", got.Items)
	}
	if held() == first {
		t.Error("the index of the replaced listing is still held")
	}
}

func TestFileIndexesKeepTheirBudget(t *testing.T) {
	c := newFileIndexes(1000)
	x := func(n int) *store.FileIndex {
		return store.NewFileIndex(store.FileIndexVersion{}, []int32{0}, []string{strings.Repeat("a", n)})
	}
	c.mu.Lock()
	c.keep(1, x(200))
	c.keep(2, x(200))
	c.keep(3, x(200))
	c.lru.MoveToFront(c.byID[1]) // 1 searched since: 2 is the oldest
	c.keep(4, x(200))
	c.keep(5, x(5000)) // larger than the budget: not kept
	var ids []int64
	for el := c.lru.Front(); el != nil; el = el.Next() {
		ids = append(ids, el.Value.(fileIndexEntry).id)
	}
	used := c.used
	c.mu.Unlock()
	if want := []int64{4, 1, 3}; !reflect.DeepEqual(ids, want) || used > 1000 {
		t.Errorf("held %v (%d bytes), want %v within 1000", ids, used, want)
	}
}
