package web

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store/storetest"
)

type uploadPart struct {
	field, name string
	body        io.Reader
}

// upload streams a multipart body (never built in memory) to POST /api/uploads.
func (e *testEnv) upload(cookie *http.Cookie, parts ...uploadPart) (*http.Response, string) {
	e.t.Helper()
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		for _, p := range parts {
			var w io.Writer
			var err error
			if p.name == "" {
				w, err = mw.CreateFormField(p.field)
			} else {
				w, err = mw.CreateFormFile(p.field, p.name)
			}
			if err == nil {
				_, err = io.Copy(w, p.body)
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(mw.Close())
	}()
	return e.post("/api/uploads", mw.FormDataContentType(), pr, cookie)
}

// publishTarget sets up where uploads go: a destination channel (withWriter:
// and a signed-in account that posts there).
func (e *testEnv) publishTarget(withWriter bool) {
	e.t.Helper()
	ctx := context.Background()
	dest := &hoard.Channel{PlatformID: 880001, Title: "Upload Archive", Kind: hoard.ChannelDestination}
	if err := e.db.UpsertChannel(ctx, dest); err != nil {
		e.t.Fatal(err)
	}
	if !withWriter {
		return
	}
	acc, err := e.db.CreateAccount(ctx, "+15550008801")
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.db.SetAccountAuthState(ctx, acc.ID, hoard.AuthAuthenticated, ""); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.db.UpsertChannelMap(ctx, acc.ID, dest.ID, 1, hoard.MapWriter); err != nil {
		e.t.Fatal(err)
	}
}

// TestManualUploadWithNowhereToPublishIsRefused: with no destination, or
// no signed-in account posting there, an upload is refused before a byte is
// stored (no row, no file), with a message saying what to set up; the
// upload page shows that message instead of the form.
func TestManualUploadWithNowhereToPublishIsRefused(t *testing.T) {
	for _, tt := range []struct {
		name        string
		destination bool
		want        string
	}{
		{"no destination", false, "No destination channel is set up: choose or create one on the Messaging page first."},
		{"no writer", true, "No signed-in account posts to the destination channel &#34;Upload Archive&#34;: sign in an account that is a writer there on the Messaging page first."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			if tt.destination {
				e.publishTarget(false)
			}
			user, _ := e.user(hoard.RoleUser)
			c := e.session(user)
			type answer struct {
				Status  int
				Message bool
				Rows    int
				Page    bool
			}
			resp, body := e.upload(c, uploadPart{field: "files", name: "a.zip", body: strings.NewReader("PK")})
			ups, err := e.db.ListManualUploads(context.Background(), user.ID, 10)
			if err != nil {
				t.Fatal(err)
			}
			_, pageBody := e.do(nil, "GET", "/uploads", nil, c)
			jsonWant := strings.ReplaceAll(tt.want, "&#34;", `\"`)
			got := answer{resp.StatusCode, strings.Contains(body, jsonWant), len(ups),
				strings.Contains(pageBody, tt.want) && !strings.Contains(pageBody, "data-upload>")}
			if want := (answer{http.StatusUnprocessableEntity, true, 0, true}); got != want {
				t.Errorf("got %+v, want %+v\nanswer: %s", got, want, body)
			}
		})
	}
}

func TestManualUploadStreamsFilesAndQueuesWork(t *testing.T) {
	e := newEnv(t)
	e.publishTarget(true)
	ctx := context.Background()
	user, _ := e.user(hoard.RoleUser)
	c := e.session(user)
	conn, err := e.db.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN manual_upload"); err != nil {
		t.Fatal(err)
	}
	resp, body := e.upload(c,
		uploadPart{field: "files", name: "../../etc/Dragon Bust.zip", body: strings.NewReader("PK first file")},
		uploadPart{field: "files", name: `..\\..\\notes.pdf. `, body: strings.NewReader("%PDF second")},
		uploadPart{field: "group_name", body: strings.NewReader("My set")})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("upload = %d %s", resp.StatusCode, body)
	}
	var up uploadJSON
	if err := json.Unmarshal([]byte(body), &up); err != nil {
		t.Fatal(err)
	}
	type upload struct {
		Status, Phase, GroupName string
		Files                    []string
		FirstSize                int64
	}
	got := upload{Status: up.Status, Phase: up.Phase, GroupName: up.GroupName}
	for _, f := range up.Files {
		got.Files = append(got.Files, f.Name)
	}
	if len(up.Files) > 0 {
		got.FirstSize = up.Files[0].Size
	}
	if diff := cmp.Diff(upload{"PENDING", "processing", "My set", []string{"Dragon Bust.zip", "notes.pdf"}, 13}, got); diff != "" {
		t.Fatalf("upload (-want +got):\n%s", diff)
	}
	stored, err := e.db.FindManualUpload(ctx, up.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range stored.Files {
		if f.StoredPath != filepath.Join(fmt.Sprint(up.ID), fmt.Sprint(i+1)) {
			t.Fatalf("stored path %q is not server-chosen", f.StoredPath)
		}
		b, err := os.ReadFile(filepath.Join(e.srv.deps.UploadDir, f.StoredPath))
		if err != nil || int64(len(b)) != f.FileSize {
			t.Fatalf("file on disk: %v, %d bytes", err, len(b))
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if n, err := conn.Conn().WaitForNotification(wctx); err != nil || !strings.Contains(n.Payload, fmt.Sprint(up.ID)) {
		t.Fatalf("manual_upload notification: %v", err)
	}
	if jobs := storetest.Jobs(t, e.db, storetest.JobMatch{Kind: "manual_upload"}); len(jobs) != 1 || jobs[0].Queue != "transfer" {
		t.Fatalf("manual_upload jobs = %+v, want one on the transfer queue", jobs)
	}
	// Status: the owner and administrators see it; others get 404.
	if resp, body := e.do(nil, "GET", fmt.Sprintf("/api/uploads/%d", up.ID), nil, c); resp.StatusCode != 200 || !strings.Contains(body, `"phase":"processing"`) {
		t.Fatalf("status: %d %s", resp.StatusCode, body)
	}
	other, _ := e.user(hoard.RoleUser)
	if resp, _ := e.do(nil, "GET", fmt.Sprintf("/api/uploads/%d", up.ID), nil, e.session(other)); resp.StatusCode != 404 {
		t.Fatalf("another user's upload = %d", resp.StatusCode)
	}
	if resp, body := e.do(nil, "GET", fmt.Sprintf("/uploads/%d", up.ID), nil, c); resp.StatusCode != 200 || !strings.Contains(body, "Dragon Bust.zip") {
		t.Fatalf("upload page = %d", resp.StatusCode)
	}
}

func TestManualUploadRefusals(t *testing.T) {
	e := newEnv(t) // MaxUploadBytes is 1 MiB here
	e.publishTarget(true)
	ctx := context.Background()
	user, _ := e.user(hoard.RoleUser)
	c := e.session(user)
	resp, body := e.upload(c, uploadPart{field: "files", name: "big.zip", body: io.LimitReader(zeros{}, 2<<20)})
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, "larger than the upload limit") {
		t.Fatalf("too large: %d %s", resp.StatusCode, body)
	}
	ups, _ := e.db.ListManualUploads(ctx, user.ID, 10)
	if len(ups) != 1 || ups[0].Status != hoard.UploadFailed || !strings.Contains(ups[0].ErrorMessage, "larger than") {
		t.Fatalf("failed upload row: %+v", ups)
	}
	if _, err := os.Stat(filepath.Join(e.srv.deps.UploadDir, fmt.Sprint(ups[0].ID))); !os.IsNotExist(err) {
		t.Fatalf("partial files left behind: %v", err)
	}
	resp, _ = e.upload(c, uploadPart{field: "group_name", body: strings.NewReader("nothing")})
	if resp.StatusCode != 422 {
		t.Fatalf("no files = %d", resp.StatusCode)
	}
	req, _ := http.NewRequest("POST", e.ts.URL+"/api/uploads", strings.NewReader("x=1"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", e.ts.URL)
	req.AddCookie(c)
	if resp, _ := http.DefaultClient.Do(req); resp.StatusCode != 422 {
		t.Fatalf("not multipart = %d", resp.StatusCode)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestManualUploadMemoryStaysFlat streams a large file and samples the heap
// and the process's resident set (server and client share this process,
// and both stream): the web process never holds the file. 256 MiB by
// default, 1 GiB with HOARD_LARGE_TESTS=1.
func TestManualUploadMemoryStaysFlat(t *testing.T) {
	size := int64(256 << 20)
	if os.Getenv("HOARD_LARGE_TESTS") == "1" {
		size = 1 << 30
	}
	e := newEnv(t, func(d *Deps) { d.MaxUploadBytes = size })
	e.publishTarget(true)
	user, _ := e.user(hoard.RoleUser)
	c := e.session(user)
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	baseRSS := residentBytes(t)
	var peak, peakRSS atomic.Uint64
	stop := make(chan struct{})
	go func() {
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				runtime.ReadMemStats(&m)
				if m.HeapInuse > peak.Load() {
					peak.Store(m.HeapInuse)
				}
				if r := residentBytes(t); r > peakRSS.Load() {
					peakRSS.Store(r)
				}
			}
		}
	}()
	h := sha256.New()
	resp, body := e.upload(c, uploadPart{field: "files", name: "huge.zip", body: io.TeeReader(io.LimitReader(zeros{}, size), h)})
	close(stop)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("upload = %d %s", resp.StatusCode, body)
	}
	growth := int64(peak.Load()) - int64(base.HeapInuse)
	rssGrowth := max(int64(peakRSS.Load())-int64(baseRSS), 0)
	t.Logf("uploaded %d MiB; heap grew by at most %.1f MiB, resident set by at most %.1f MiB",
		size>>20, float64(growth)/(1<<20), float64(rssGrowth)/(1<<20))
	if growth > 48<<20 || rssGrowth > 64<<20 {
		t.Fatalf("heap grew by %d MiB and the resident set by %d MiB while streaming %d MiB", growth>>20, rssGrowth>>20, size>>20)
	}
	var up uploadJSON
	_ = json.Unmarshal([]byte(body), &up)
	if up.Files[0].Size != size {
		t.Fatalf("stored size %d", up.Files[0].Size)
	}
}

func TestSanitizeFileName(t *testing.T) {
	for in, want := range map[string]string{
		"Dragon Bust.zip":                 "Dragon Bust.zip",
		"../../etc/passwd":                "passwd",
		`C:\Users\me\pack.rar`:            "pack.rar",
		"..":                              "file",
		"":                                "file",
		" name.7z. ":                      "name.7z",
		"bell\a.stl":                      "bell.stl",
		strings.Repeat("é", 200) + ".zip": strings.Repeat("é", 127),
	} {
		if got := sanitizeFileName(in); got != want {
			t.Errorf("sanitizeFileName(%q) = %q, want %q", in, got, want)
		}
	}
}

// residentBytes is this process's resident set size (VmRSS), 0 where
// /proc is not available.
func residentBytes(t *testing.T) uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Errorf("VmRSS line %q: %v", line, err)
			}
			return kb << 10
		}
	}
	return 0
}

// TestRetryUpload: the owner retries an upload that ended with a failed
// file: the file goes back to PENDING and a manual_upload job is queued,
// and the page returns with a notice; an upload still working, or another
// user's, is refused; the page offers the button only when there is
// something to retry.
func TestRetryUpload(t *testing.T) {
	e := newEnv(t)
	e.publishTarget(true)
	ctx := context.Background()
	owner, _ := e.user(hoard.RoleUser)
	other, _ := e.user(hoard.RoleUser)
	mk := func(status hoard.UploadStatus) *hoard.ManualUpload {
		t.Helper()
		up, err := e.db.CreateManualUpload(ctx, owner.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		f, err := e.db.AddManualUploadFile(ctx, up.ID, "Tower.zip", fmt.Sprint(up.ID)+"/1", 10)
		if err != nil {
			t.Fatal(err)
		}
		if status == hoard.UploadFailed {
			if err := e.db.SetManualUploadFileStatus(ctx, f.ID, hoard.UploadFailed, "MEDIA_INVALID", "", 0); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.db.SetManualUploadStatus(ctx, up.ID, status, ""); err != nil {
			t.Fatal(err)
		}
		return up
	}
	failed, working := mk(hoard.UploadFailed), mk(hoard.UploadProcessing)
	type answer struct {
		Status   int
		Location string
		Jobs     int
		Upload   hoard.UploadStatus
		Button   bool
	}
	for _, tt := range []struct {
		name string
		up   *hoard.ManualUpload
		who  *hoard.User
		want answer
	}{
		{"another user's", failed, other, answer{404, "", 0, hoard.UploadFailed, true}},
		{"still working", working, owner, answer{422, "", 0, hoard.UploadProcessing, false}},
		{"failed", failed, owner, answer{303, fmt.Sprintf("/uploads/%d?done=upload-retry", failed.ID), 1, hoard.UploadPending, true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, page := e.do(nil, "GET", fmt.Sprintf("/uploads/%d", tt.up.ID), nil, e.session(owner))
			button := strings.Contains(page, fmt.Sprintf(`action="/uploads/%d/retry"`, tt.up.ID))
			resp, _ := e.do(nil, "POST", fmt.Sprintf("/uploads/%d/retry", tt.up.ID), url.Values{"from": {"page"}}, e.session(tt.who))
			up, err := e.db.FindManualUpload(ctx, tt.up.ID)
			if err != nil {
				t.Fatal(err)
			}
			got := answer{resp.StatusCode, resp.Header.Get("Location"), len(e.jobs("manual_upload")), up.Status, button}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
