package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

func pngBytes(t testing.TB) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{255, 0, 0, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// seedCatalog stores packages and returns them by file name.
func (e *testEnv) seedCatalog(mutate ...func(*hoard.Package)) map[string]*hoard.Package {
	e.t.Helper()
	ctx := context.Background()
	ch := &hoard.Channel{PlatformID: 777, Title: "Mammoth Channel", Kind: hoard.ChannelSource}
	if err := e.db.UpsertChannel(ctx, ch); err != nil {
		e.t.Fatal(err)
	}
	out := map[string]*hoard.Package{}
	for i, spec := range []struct{ name, creator, caption string }{
		{"Dragon_Bust_v2.stl", "Mammoth Factory", "<img src=x onerror=alert(1)>"},
		{"Red Dragon Pack.zip", "Other Maker", ""},
		{"Knight Helmet.rar", "Mammoth Factory", ""},
	} {
		p := &hoard.Package{FileName: spec.name, FileSize: int64(1000 * (i + 1)), ArchiveType: hoard.ArchiveZIP,
			ContentHash: fmt.Sprintf("%064x", i+1), Creator: spec.creator, Tags: []string{"STL"}, SourceChannelID: ch.ID,
			SourceCaption: spec.caption, SourceMessageID: int64(10 + i)}
		if i == 0 {
			p.PreviewData = pngBytes(e.t)
		}
		if strings.HasSuffix(spec.name, ".rar") {
			p.ArchiveType = hoard.ArchiveRAR
		}
		for _, m := range mutate {
			m(p)
		}
		if err := e.db.CreatePackage(ctx, p); err != nil {
			e.t.Fatal(err)
		}
		out[spec.name] = p
	}
	if err := e.db.ReplacePackageFiles(ctx, out["Red Dragon Pack.zip"].ID, []hoard.PackageFile{
		{Path: "Dragon/body.stl", Size: 100}, {Path: "Dragon/wings.stl", Size: 200}, {Path: "readme.txt", Size: 5}}); err != nil {
		e.t.Fatal(err)
	}
	return out
}

func TestCatalogPage(t *testing.T) {
	e := newEnv(t)
	pk := e.seedCatalog()
	user, _ := e.user(hoard.RoleUser)
	c := e.session(user)
	tests := []struct {
		query      string
		status     int
		want, nope []string
	}{
		{"", 200, []string{"Dragon_Bust_v2.stl", "Red Dragon Pack.zip", "Knight Helmet.rar"}, nil},
		{"?q=dragon", 200, []string{"Dragon_Bust_v2.stl", "Red Dragon Pack.zip"}, []string{"Knight Helmet.rar"}},
		{"?q=dragon&creator=mammoth+factory", 200, []string{"Dragon_Bust_v2.stl"}, []string{"Red Dragon Pack.zip"}},
		{"?tab=groups", 200, []string{"Nothing found"}, []string{"Knight Helmet.rar"}},
		{"?tab=ungrouped&view=list", 200, []string{"<table class=\"list\">", "Knight Helmet.rar"}, nil},
		{"?type=RAR", 200, []string{"Knight Helmet.rar"}, []string{"Red Dragon Pack.zip"}},
		{"?q=zzzz", 200, []string{"Nothing found for “zzzz”"}, nil},
		{"?type=TAR", 422, []string{"type must be one of"}, nil},
		{"?after=garbage", 422, []string{"cursor is not valid"}, nil},
		{"?sort=price", 422, []string{"sort must be one of relevance, newest, name, size"}, nil},
		{"?q=dragon&prev=garbage&after=" + encodeCursor(&store.SearchCursor{Mode: store.SearchFullText, ID: 1}), 422, []string{"cursor is not valid"}, nil},
		{"?sort=size", 200, []string{"Knight Helmet.rar", "3 packages"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			e.checkPage(t, c, "/"+tt.query, tt.status, tt.want, tt.nope)
		})
	}
	// Users see no curation controls; administrators do.
	if _, body := e.do(nil, "GET", "/", nil, c); strings.Contains(body, `name="mode"`) {
		t.Error("a USER sees the bulk tag editor")
	}
	admin, _ := e.user(hoard.RoleAdmin)
	if _, body := e.do(nil, "GET", "/", nil, e.session(admin)); !strings.Contains(body, `name="mode"`) {
		t.Error("an ADMIN does not see the bulk tag editor")
	}
	_ = pk
}

func TestAPIPackagesPaging(t *testing.T) {
	e := newEnv(t)
	e.seedCatalog()
	user, _ := e.user(hoard.RoleUser)
	c := e.session(user)
	var got []string
	path := "/api/packages?limit=1"
	for i := 0; i < 10; i++ {
		resp, body := e.do(nil, "GET", path, nil, c)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("status %d, type %s", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		var page struct {
			Items []struct {
				ID       int64    `json:"id"`
				FileName string   `json:"file_name"`
				Creator  string   `json:"creator"`
				Tags     []string `json:"tags"`
			} `json:"items"`
			Next *string `json:"next"`
		}
		if err := json.Unmarshal([]byte(body), &page); err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			if it.ID == 0 || len(it.Tags) == 0 {
				t.Fatalf("item lacks fields: %s", body)
			}
			got = append(got, it.FileName)
		}
		if page.Next == nil {
			break
		}
		path = "/api/packages?limit=1&after=" + url.QueryEscape(*page.Next)
	}
	want := []string{"Knight Helmet.rar", "Red Dragon Pack.zip", "Dragon_Bust_v2.stl"}
	if !slices.Equal(got, want) {
		t.Fatalf("paged names %q, want %q", got, want)
	}
	resp, body := e.do(nil, "GET", "/api/packages?limit=0", nil, c)
	if resp.StatusCode != 422 || !strings.Contains(body, `"code":"invalid"`) || !strings.Contains(body, `"message":"limit must be 1`) {
		t.Fatalf("bad limit: %d %s", resp.StatusCode, body)
	}
}

func TestPackagePageAndAPI(t *testing.T) {
	e := newEnv(t)
	pk := e.seedCatalog()
	user, _ := e.user(hoard.RoleUser)
	c := e.session(user)
	bust := pk["Dragon_Bust_v2.stl"]
	resp, body := e.do(nil, "GET", fmt.Sprintf("/packages/%d", bust.ID), nil, c)
	if resp.StatusCode != 200 || !strings.Contains(body, "Mammoth Channel") || !strings.Contains(body, "&lt;img src=x onerror=alert(1)&gt;") {
		t.Fatalf("package page %d lacks channel or escaped caption", resp.StatusCode)
	}
	if strings.Contains(body, "<img src=x") {
		t.Fatal("caption markup is not escaped")
	}
	resp, body = e.do(nil, "GET", fmt.Sprintf("/packages/%d/preview", bust.ID), nil, c)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" || !bytes.Equal([]byte(body), pngBytes(t)) {
		t.Fatalf("preview: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	pack := pk["Red Dragon Pack.zip"]
	resp, body = e.do(nil, "GET", fmt.Sprintf("/packages/%d?fq=DRAGON", pack.ID), nil, c)
	if resp.StatusCode != 200 || !strings.Contains(body, "Dragon/wings.stl") || strings.Contains(body, "readme.txt") {
		t.Fatalf("file filter: %d", resp.StatusCode)
	}
	resp, body = e.do(nil, "GET", fmt.Sprintf("/api/packages/%d/files?limit=2", pack.ID), nil, c)
	if resp.StatusCode != 200 || !strings.Contains(body, `"path":"Dragon/body.stl"`) || !strings.Contains(body, `"next":1`) {
		t.Fatalf("files api: %d %s", resp.StatusCode, body)
	}
	resp, body = e.do(nil, "GET", fmt.Sprintf("/api/packages/%d", pack.ID), nil, c)
	if resp.StatusCode != 200 || !strings.Contains(body, `"file_name":"Red Dragon Pack.zip"`) || !strings.Contains(body, `"source_channel":"Mammoth Channel"`) {
		t.Fatalf("package api: %d %s", resp.StatusCode, body)
	}
	// A preview that is not an image is never served.
	if err := e.db.SetPackagePreview(context.Background(), pack.ID, []byte("<html><script>alert(1)</script></html>"), 0); err != nil {
		t.Fatal(err)
	}
	if resp, _ := e.do(nil, "GET", fmt.Sprintf("/packages/%d/preview", pack.ID), nil, c); resp.StatusCode != 404 {
		t.Fatalf("non-image preview served: %d", resp.StatusCode)
	}
}

func TestEditTagsAndCreator(t *testing.T) {
	e := newEnv(t)
	pk := e.seedCatalog()
	admin, _ := e.user(hoard.RoleAdmin)
	c := e.session(admin)
	ctx := context.Background()
	a, b := pk["Dragon_Bust_v2.stl"], pk["Knight Helmet.rar"]
	// The search is cached (searchCache); an edit must show in the next
	// one all the same.
	if _, body := e.do(nil, "GET", "/api/packages?q=knight", nil, c); strings.Contains(body, "Busts") {
		t.Fatalf("tag before the edit: %s", body)
	}
	f := url.Values{"id": {fmt.Sprint(a.ID), fmt.Sprint(b.ID)}, "mode": {"add"}, "tags": {"Busts, Fantasy"}, "back": {"/?q=x"}}
	resp, _ := e.do(nil, "POST", "/packages/tags", f, c)
	if _, body := e.do(nil, "GET", "/api/packages?q=knight", nil, c); !strings.Contains(body, `"Busts"`) {
		t.Fatalf("the search after the edit does not show the new tag: %s", body)
	}
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/?done=tags-added&n=2&q=x" {
		t.Fatalf("bulk add: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	for _, id := range []int64{a.ID, b.ID} {
		p, _ := e.db.FindPackageByID(ctx, id)
		if !slices.Equal(p.Tags, []string{"STL", "Busts", "Fantasy"}) {
			t.Fatalf("tags of %d = %q", id, p.Tags)
		}
	}
	resp, _ = e.do(nil, "POST", "/packages/tags", url.Values{"id": {fmt.Sprint(a.ID)}, "mode": {"remove"}, "tags": {"STL"}}, c)
	if p, _ := e.db.FindPackageByID(ctx, a.ID); resp.StatusCode != 303 || !slices.Equal(p.Tags, []string{"Busts", "Fantasy"}) {
		t.Fatalf("remove: %d %q", resp.StatusCode, p.Tags)
	}
	resp, _ = e.do(nil, "POST", "/packages/creator", url.Values{"id": {fmt.Sprint(a.ID)}, "creator": {"Someone New"}}, c)
	if p, _ := e.db.FindPackageByID(ctx, a.ID); resp.StatusCode != 303 || p.Creator != "Someone New" {
		t.Fatalf("creator: %d %q", resp.StatusCode, p.Creator)
	}
	for _, bad := range []url.Values{{"mode": {"add"}}, {"id": {"x"}}, {"id": {"1"}, "mode": {"explode"}}} {
		if resp, _ := e.do(nil, "POST", "/packages/tags", bad, c); resp.StatusCode != 422 {
			t.Errorf("%v accepted: %d", bad, resp.StatusCode)
		}
	}
}

func TestSkippedTab(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ch := &hoard.Channel{PlatformID: 31, Title: "Skippy", Kind: hoard.ChannelSource}
	_ = e.db.UpsertChannel(ctx, ch)
	sk := &hoard.SkippedPackage{SourceChannelID: ch.ID, SourceMessageID: 77, FileName: "broken.rar", Reason: hoard.SkipDownloadFailed,
		AttemptCount: 2, MaxAttempts: 5, LastError: "stalled <twice>"}
	if err := e.db.UpsertSkippedPackage(ctx, sk); err != nil {
		t.Fatal(err)
	}
	admin, _ := e.user(hoard.RoleAdmin)
	user, _ := e.user(hoard.RoleUser)
	resp, body := e.do(nil, "GET", "/?tab=skipped", nil, e.session(admin))
	if resp.StatusCode != 200 || !strings.Contains(body, "broken.rar") || !strings.Contains(body, "2/5") || !strings.Contains(body, "stalled &lt;twice&gt;") {
		t.Fatalf("skipped tab: %d", resp.StatusCode)
	}
	if _, body := e.do(nil, "GET", "/?tab=skipped&reason=UPLOAD_FAILED", nil, e.session(admin)); strings.Contains(body, "broken.rar") {
		t.Fatal("reason filter ignored")
	}
	if resp, _ := e.do(nil, "GET", "/?tab=skipped", nil, e.session(user)); resp.StatusCode != 403 {
		t.Fatalf("user on the skipped tab = %d", resp.StatusCode)
	}
	if _, body := e.do(nil, "GET", "/", nil, e.session(user)); strings.Contains(body, "tab=skipped") {
		t.Fatal("users see the skipped tab")
	}
}

// TestSearchSeesOtherProcessesChanges: a cached search shows a change made
// by another process (here straight through the store, as the worker
// would) once catalog_changed arrives, long before the cache's TTL.
func TestSearchSeesOtherProcessesChanges(t *testing.T) {
	e := newEnv(t)
	pk := e.seedCatalog()
	u, _ := e.user(hoard.RoleUser)
	c := e.session(u)
	ctx := context.Background()
	e.waitCatalogWatch()
	e.do(nil, "GET", "/api/packages?q=helmet", nil, c)
	hits := e.srv.searches.hits.Load()
	if _, body := e.do(nil, "GET", "/api/packages?q=helmet", nil, c); strings.Contains(body, "Winged") {
		t.Fatalf("before: %s", body)
	}
	if e.srv.searches.hits.Load() != hits+1 {
		t.Fatal("the repeated search was not served from memory: the test would not exercise the cache")
	}
	p := pk["Knight Helmet.rar"]
	if err := e.db.SetPackageCreator(ctx, []int64{p.ID}, "Winged Works"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, body := e.do(nil, "GET", "/api/packages?q=helmet", nil, c)
		if strings.Contains(body, "Winged Works") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the search still shows the old creator 5 s after the change: %s", body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitCatalogWatch waits until the web process listens for catalog_changed,
// the last channel it listens on (watchChanges): its ready hook drops the
// caches once, which a test must not mistake for something it did.
func (e *testEnv) waitCatalogWatch() {
	e.t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var n int
		if err := e.db.Pool().QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND query = 'LISTEN "catalog_changed"'`).Scan(&n); err != nil {
			e.t.Fatal(err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatal("the web process does not listen for catalog_changed")
		}
	}
}

// TestWhichRequestsDropCachedSearches: a curator's edit drops the cached
// searches at once; requests anyone may send (a failed sign-in) do not.
func TestWhichRequestsDropCachedSearches(t *testing.T) {
	e := newEnv(t)
	pk := e.seedCatalog()
	admin, _ := e.user(hoard.RoleAdmin)
	c := e.session(admin)
	e.waitCatalogWatch()
	served := func() (hits, misses int64) { return e.srv.searches.hits.Load(), e.srv.searches.misses.Load() }
	search := func() { e.do(nil, "GET", "/api/packages?q=dragon", nil, c) }
	search()
	for _, tt := range []struct {
		name string
		send func()
		drop bool
	}{
		{"a failed sign-in", func() {
			e.do(nil, "POST", "/login", url.Values{"email": {"nobody@example.com"}, "password": {"wrong password"}}, nil)
		}, false},
		{"a registration with a bad code", func() {
			e.do(nil, "POST", "/register", url.Values{"code": {"nope"}, "email": {"x@example.com"}, "password": {"long enough pw"}}, nil)
		}, false},
		{"a tag edit", func() {
			e.do(nil, "POST", "/packages/tags", url.Values{"id": {fmt.Sprint(pk["Red Dragon Pack.zip"].ID)}, "mode": {"add"}, "tags": {"New"}}, c)
		}, true},
	} {
		search() // in memory now
		tt.send()
		time.Sleep(50 * time.Millisecond) // a notification would have arrived
		h, m := served()
		search()
		h2, m2 := served()
		if dropped := m2 == m+1 && h2 == h; dropped != tt.drop {
			t.Errorf("%s: cached searches dropped %v, want %v", tt.name, dropped, tt.drop)
		}
	}
}

// TestAPIPackagesMatchesFiles: GET /api/packages is the catalog's search:
// a path inside an archive finds its package, with the files that matched
// and the result's count; a bad sort is a 422 naming it.
func TestAPIPackagesMatchesFiles(t *testing.T) {
	e := newEnv(t)
	pk := e.seedCatalog()
	helmet := pk["Knight Helmet.rar"]
	if err := e.db.ReplacePackageFiles(context.Background(), helmet.ID, []hoard.PackageFile{
		{Path: "Hoard Set/chest.stl"}, {Path: "Hoard Set/goblin.stl"}}); err != nil {
		t.Fatal(err)
	}
	user, _ := e.user(hoard.RoleUser)
	c := e.session(user)
	type item struct {
		ID           int64    `json:"id"`
		FilesMatched int      `json:"files_matched"`
		MatchedPaths []string `json:"matched_paths"`
	}
	type answer struct {
		Items      []item `json:"items"`
		Sort       string `json:"sort"`
		Count      int64  `json:"count"`
		CountExact bool   `json:"count_exact"`
	}
	tests := []struct {
		query string
		want  answer
	}{
		{"q=chest.stl", answer{[]item{{helmet.ID, 1, []string{"Hoard Set/chest.stl"}}}, "relevance", 1, true}},
		{"q=hoard+set&sort=size", answer{[]item{{helmet.ID, 2, []string{"Hoard Set/chest.stl", "Hoard Set/goblin.stl"}}}, "size", 1, true}},
		{"creator=MAMMOTH&sort=name", answer{[]item{{pk["Dragon_Bust_v2.stl"].ID, 0, nil}, {helmet.ID, 0, nil}}, "name", 2, true}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			resp, body := e.do(nil, "GET", "/api/packages?"+tt.query, nil, c)
			var got answer
			if err := json.Unmarshal([]byte(body), &got); err != nil || resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
	resp, body := e.do(nil, "GET", "/api/packages?sort=price", nil, c)
	if resp.StatusCode != 422 || !strings.Contains(body, `sort must be one of relevance, newest, name, size`) {
		t.Fatalf("bad sort: %d %s", resp.StatusCode, body)
	}
}
