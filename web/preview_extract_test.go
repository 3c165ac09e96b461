package web

import (
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store/storetest"
)

func TestExtractPreviewRoutes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	admin, _ := e.user(hoard.RoleAdmin)
	user, _ := e.user(hoard.RoleUser)
	c := e.session(admin)

	dest := &hoard.Channel{PlatformID: 4242, Title: "Archive", Kind: hoard.ChannelDestination}
	if err := e.db.UpsertChannel(ctx, dest); err != nil {
		t.Fatal(err)
	}
	pkg := func(name string, at hoard.ArchiveType, published bool) *hoard.Package {
		t.Helper()
		p := &hoard.Package{FileName: name, FileSize: 1000, ArchiveType: at}
		if err := e.db.CreatePackage(ctx, p); err != nil {
			t.Fatal(err)
		}
		if published {
			if err := e.db.SetPackageDestination(ctx, p.ID, dest.ID, []int64{p.ID + 100}); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.db.ReplacePackageFiles(ctx, p.ID, []hoard.PackageFile{{Path: "model.stl", Size: 900},
			{Path: "renders/cover.jpg", Size: 5000}, {Path: "big.png", Size: 20 << 20}, {Path: "b & <c>.png", Size: 10}}); err != nil {
			t.Fatal(err)
		}
		p, err := e.db.FindPackageByID(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := pkg("Pack.zip", hoard.ArchiveZIP, true)
	other := pkg("Other.zip", hoard.ArchiveZIP, true)
	unpublished := pkg("Fresh.zip", hoard.ArchiveZIP, false)
	doc := pkg("Manual.pdf", hoard.ArchiveDocument, true)

	counts := func() (rows, jobs int) {
		t.Helper()
		return storetest.Count(t, e.db, "preview_extractions"), len(storetest.Jobs(t, e.db, storetest.JobMatch{Kind: "extract_preview"}))
	}
	extractPath := func(p *hoard.Package) string { return "/packages/" + strconv.FormatInt(p.ID, 10) + "/preview/extract" }
	postJSON := func(path string, form url.Values, cookie *http.Cookie) (int, map[string]json.RawMessage) {
		t.Helper()
		req, _ := http.NewRequest("POST", e.ts.URL+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", e.ts.URL)
		req.Header.Set("Accept", "application/json")
		req.AddCookie(cookie)
		resp, err := e.client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var out map[string]json.RawMessage
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatalf("%s = %d %s", path, resp.StatusCode, body)
		}
		return resp.StatusCode, out
	}

	// The page's form: row and job, then back to the package page.
	resp, _ := e.do(nil, "POST", extractPath(p), url.Values{"entry": {"renders/cover.jpg"}}, c)
	loc := resp.Header.Get("Location")
	if resp.StatusCode != 303 || !strings.HasPrefix(loc, "/packages/"+strconv.FormatInt(p.ID, 10)+"?") || !strings.Contains(loc, "done=extract") {
		t.Fatalf("form post = %d %s", resp.StatusCode, loc)
	}
	x, err := e.db.FindLatestPreviewExtraction(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(loc, "extraction="+strconv.FormatInt(x.ID, 10)) {
		t.Fatalf("back to %s, not to extraction %d", loc, x.ID)
	}
	jobs := storetest.Jobs(t, e.db, storetest.JobMatch{Kind: "extract_preview"})
	if len(jobs) != 1 {
		t.Fatalf("extract_preview jobs = %+v", jobs)
	}
	wantX := hoard.PreviewExtraction{ID: x.ID, PackageID: p.ID, EntryPath: "renders/cover.jpg", Status: hoard.ExtractionPending,
		RequestedBy: admin.ID, RiverJobID: jobs[0].ID}
	if diff := cmp.Diff(wantX, *x, cmpopts.IgnoreFields(hoard.PreviewExtraction{}, "CreatedAt", "UpdatedAt")); diff != "" {
		t.Fatalf("extraction (-want +got):\n%s", diff)
	}
	var a hoard.ExtractPreviewArgs
	if err := json.Unmarshal(jobs[0].RawArgs, &a); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(hoard.ExtractPreviewArgs{PackageID: p.ID, EntryPath: "renders/cover.jpg", ExtractionID: x.ID}, a); diff != "" {
		t.Fatalf("job args (-want +got):\n%s", diff)
	}

	// The same entry again while it is unfinished: the same extraction,
	// nothing new.
	status, out := postJSON(extractPath(p), url.Values{"entry": {"renders/cover.jpg"}}, c)
	var got extractionJSON
	_ = json.Unmarshal(out["extraction"], &got)
	type repeat struct {
		Status       int
		Queued       string
		ID           int64
		State        string
		HasStatusURL bool
	}
	if diff := cmp.Diff(repeat{202, "false", x.ID, "PENDING", true}, repeat{status, string(out["queued"]), got.ID, got.Status, got.StatusURL != ""}); diff != "" {
		t.Fatalf("repeat (-want +got):\n%s", diff)
	}
	if rows, jobs := counts(); rows != 1 || jobs != 1 {
		t.Fatalf("after a repeat: %d rows, %d jobs", rows, jobs)
	}

	// Polling.
	resp, body := e.do(nil, "GET", got.StatusURL, nil, e.session(user))
	if resp.StatusCode != 200 || !strings.Contains(body, `"status":"PENDING"`) || !strings.Contains(body, `"entry_path":"renders/cover.jpg"`) {
		t.Fatalf("poll = %d %s", resp.StatusCode, body)
	}
	if resp, _ := e.do(nil, "GET", "/api/packages/"+strconv.FormatInt(other.ID, 10)+"/preview/extract/"+strconv.FormatInt(x.ID, 10), nil, c); resp.StatusCode != 404 {
		t.Fatalf("poll through another package = %d", resp.StatusCode)
	}

	// The package page offers the images and polls the extraction.
	_, page := e.do(nil, "GET", "/packages/"+strconv.FormatInt(p.ID, 10), nil, c)
	for _, want := range []string{"data-preview-chooser", `value="renders/cover.jpg"`, `value="b &amp; &lt;c&gt;.png"`,
		`data-status-url="` + got.StatusURL + `"`, "Queued: extracting renders/cover.jpg"} {
		if !strings.Contains(page, want) {
			t.Fatalf("package page lacks %q:\n%.3000s", want, page)
		}
	}
	if strings.Contains(page, `value="model.stl"`) || strings.Contains(page, `value="big.png"`) {
		t.Fatal("package page offers a non-image or a too large image")
	}
	if _, userPage := e.do(nil, "GET", "/packages/"+strconv.FormatInt(p.ID, 10), nil, e.session(user)); strings.Contains(userPage, "data-preview-chooser") {
		t.Fatal("a plain user sees the chooser")
	}

	// Refusals insert nothing.
	for _, tc := range []struct {
		name   string
		p      *hoard.Package
		entry  string
		cookie *http.Cookie
		status int
		msg    string
	}{
		{"no entry", p, "", c, 422, "Choose an image"},
		{"unlisted entry", p, "nope.jpg", c, 422, "no entry"},
		{"not an image", p, "model.stl", c, 422, "not a JPEG"},
		{"too large", p, "big.png", c, 422, "larger than"},
		{"not published", unpublished, "renders/cover.jpg", c, 409, "not published"},
		{"a document", doc, "renders/cover.jpg", c, 422, "document"},
		{"not a curator", p, "b & <c>.png", e.session(user), 403, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out := postJSON(extractPath(tc.p), url.Values{"entry": {tc.entry}}, tc.cookie)
			if status != tc.status || !strings.Contains(string(out["error"]), tc.msg) {
				t.Fatalf("= %d %s, want %d %q", status, out["error"], tc.status, tc.msg)
			}
			if rows, jobs := counts(); rows != 1 || jobs != 1 {
				t.Fatalf("%d rows, %d jobs after a refusal", rows, jobs)
			}
		})
	}

	// Row and job commit together: while the job of a finished
	// extraction is still unfinished, a new request for that entry cannot
	// queue its job, and its row is rolled back with it.
	if _, err := e.db.FinishPreviewExtraction(ctx, x.ID, hoard.ExtractionFailed, "", 0, "stopped by hand"); err != nil {
		t.Fatal(err)
	}
	if status, out := postJSON(extractPath(p), url.Values{"entry": {"renders/cover.jpg"}}, c); status != 409 {
		t.Fatalf("while the old job is unfinished = %d %s", status, out["error"])
	}
	if rows, jobs := counts(); rows != 1 || jobs != 1 {
		t.Fatalf("%d rows, %d jobs: a row without its job", rows, jobs)
	}
	// Another entry queues at once.
	status, out = postJSON(extractPath(p), url.Values{"entry": {"b & <c>.png"}}, c)
	if status != 202 || string(out["queued"]) != "true" {
		t.Fatalf("another entry = %d %v", status, out)
	}
	if rows, jobs := counts(); rows != 2 || jobs != 2 {
		t.Fatalf("%d rows, %d jobs after a second entry", rows, jobs)
	}

	// An entry with a path longer than a btree index entry may be (about
	// 2,700 bytes; random, so it does not compress) is extracted like any.
	long := pkg("Long.zip", hoard.ArchiveZIP, true)
	rng := rand.New(rand.NewPCG(3, 4))
	path := make([]byte, 3000)
	for i := range path {
		path[i] = "abcdefghijklmnopqrstuvwxyz0123456789_-/"[rng.IntN(39)]
	}
	longPath := string(path) + ".jpg"
	if err := e.db.ReplacePackageFiles(ctx, long.ID, []hoard.PackageFile{{Path: longPath, Size: 5000}}); err != nil {
		t.Fatal(err)
	}
	for _, queued := range []string{"true", "false"} {
		status, out = postJSON(extractPath(long), url.Values{"entry": {longPath}}, c)
		if status != 202 || string(out["queued"]) != queued {
			t.Fatalf("a %d-character entry = %d %s, want 202 with queued %s", len(longPath), status, out["error"], queued)
		}
	}
}
