package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/hoard/hoard"
)

// uploadBody is a multipart body of one file of size bytes, with its
// content type; its length is known to the client.
func uploadBody(t *testing.T, name string, size int) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	w, err := mw.CreateFormFile("files", name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(bytes.Repeat([]byte{'x'}, size)); err != nil {
		t.Fatal(err)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), mw.FormDataContentType()
}

// postUpload posts a body to /api/uploads from any goroutine.
func (e *testEnv) postUpload(body io.Reader, contentType string, cookie *http.Cookie) (int, string, error) {
	req, err := http.NewRequest("POST", e.ts.URL+"/api/uploads", body)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Origin", e.ts.URL) // as a browser does on a page of hoard's
	req.AddCookie(cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// entries lists what is in the upload directory.
func (e *testEnv) entries() []string {
	e.t.Helper()
	des, err := os.ReadDir(e.srv.deps.UploadDir)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, de := range des {
		out = append(out, de.Name())
	}
	return out
}

// TestUploadQuotaStopsTheFifthParallelUpload: a USER with room for four
// uploads sends five at once (their lengths known): four are stored, the
// fifth is refused with 413 saying how much is left, and leaves no row and
// no file; what the user holds is the four files' bytes.
func TestUploadQuotaStopsTheFifthParallelUpload(t *testing.T) {
	const size = 100 << 10
	e := newEnv(t, func(d *Deps) { d.UploadQuotaBytes = 4*size + 50<<10 })
	e.publishTarget(true)
	user, _ := e.user(hoard.RoleUser)
	c := e.session(user)
	type answer struct {
		Status int
		Left   bool
	}
	answers := make([]answer, 5)
	var wg sync.WaitGroup
	for i := range answers {
		body, ct := uploadBody(t, fmt.Sprintf("part%d.zip", i), size)
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, msg, err := e.postUpload(bytes.NewReader(body), ct, c)
			if err != nil {
				t.Error(err)
			}
			answers[i] = answer{status, strings.Contains(msg, "left of your upload quota: ") && strings.Contains(msg, " of 450.0 KiB")}
		}()
	}
	wg.Wait()
	sort.Slice(answers, func(i, j int) bool { return answers[i].Status < answers[j].Status })
	ups, err := e.db.ListManualUploads(context.Background(), user.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	held, err := e.db.UploadBytesHeld(context.Background(), user.ID)
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		Answers []answer
		Rows    int
		Dirs    int
		Held    int64
	}
	got := outcome{answers, len(ups), len(e.entries()), held}
	want := outcome{[]answer{{201, false}, {201, false}, {201, false}, {201, false}, {413, true}}, 4, 4, 4 * size}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// TestUploadRefusals: an upload refused for the quota (its length known
// or not) or the volume's free space leaves no row, no file and no bytes
// held; an administrator has no quota, yet keeps the free-space floor.
func TestUploadRefusals(t *testing.T) {
	free := int64(100 << 30)
	e := newEnv(t, func(d *Deps) {
		d.UploadQuotaBytes = 300 << 10
		d.UploadMinFreeBytes = 1 << 30
		d.FreeSpace = func(string) (int64, error) { return free, nil }
	})
	e.publishTarget(true)
	user, _ := e.user(hoard.RoleUser)
	admin, _ := e.user(hoard.RoleAdmin)
	type answer struct {
		Status  int
		Message string
		Rows    int
		Files   int
		Held    int64
	}
	for _, tt := range []struct {
		name    string
		who     *hoard.User
		size    int
		chunked bool
		free    int64
		want    answer
	}{
		{"known length over the quota", user, 400 << 10, false, 100 << 30,
			answer{413, "This upload (400.2 KiB) is more than what is left of your upload quota: 300.0 KiB of 300.0 KiB. " +
				"Delete uploads you no longer need to make room.", 0, 0, 0}},
		{"unknown length passes the quota", user, 400 << 10, true, 100 << 30,
			answer{413, "This upload is more than what is left of your upload quota: 300.0 KiB of 300.0 KiB. " +
				"Delete uploads you no longer need to make room.", 0, 0, 0}},
		{"volume below the floor", user, 1 << 10, false, 512 << 20,
			answer{507, "The upload volume has only 512.0 MiB free and keeps 1.0 GiB free: uploads are refused until an administrator frees space.", 0, 0, 0}},
		{"administrator below the floor", admin, 1 << 10, false, 512 << 20,
			answer{507, "The upload volume has only 512.0 MiB free and keeps 1.0 GiB free: uploads are refused until an administrator frees space.", 0, 0, 0}},
		{"administrator over the quota", admin, 400 << 10, false, 100 << 30, answer{201, "", 1, 1, 400 << 10}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			free = tt.free
			body, ct := uploadBody(t, "big.zip", tt.size)
			var r io.Reader = bytes.NewReader(body)
			if tt.chunked {
				r = io.MultiReader(r) // the client does not know its length
			}
			status, msg, err := e.postUpload(r, ct, e.session(tt.who))
			if err != nil {
				t.Fatal(err)
			}
			var out struct {
				Error struct{ Message string }
			}
			_ = json.Unmarshal([]byte(msg), &out)
			ups, err := e.db.ListManualUploads(context.Background(), tt.who.ID, 10)
			if err != nil {
				t.Fatal(err)
			}
			held, err := e.db.UploadBytesHeld(context.Background(), tt.who.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got := (answer{status, out.Error.Message, len(ups), len(e.entries()), held}); got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestDeleteUpload: the owner (or an administrator) deletes a finished
// upload: its rows and its files go and its bytes are given back; another
// USER gets 404 and changes nothing, as does a request from another site
// (403); an upload being processed is refused with 409 and kept whole.
func TestDeleteUpload(t *testing.T) {
	e := newEnv(t)
	e.publishTarget(true)
	ctx := context.Background()
	owner, _ := e.user(hoard.RoleUser)
	other, _ := e.user(hoard.RoleUser)
	admin, _ := e.user(hoard.RoleAdmin)
	mk := func(status hoard.UploadStatus) int64 {
		t.Helper()
		body, ct := uploadBody(t, "Tower.zip", 1000)
		code, msg, err := e.postUpload(bytes.NewReader(body), ct, e.session(owner))
		if err != nil || code != http.StatusCreated {
			t.Fatalf("upload = %d %s %v", code, msg, err)
		}
		var up uploadJSON
		if err := json.Unmarshal([]byte(msg), &up); err != nil {
			t.Fatal(err)
		}
		if err := e.db.SetManualUploadStatus(ctx, up.ID, status, ""); err != nil {
			t.Fatal(err)
		}
		return up.ID
	}
	type answer struct {
		Status   int
		Location string
		Row      bool
		Dir      bool
		Held     int64
	}
	done, working, byAdmin := mk(hoard.UploadCompleted), mk(hoard.UploadProcessing), mk(hoard.UploadFailed)
	// post deletes as a browser would, from origin ("" = hoard's own page).
	post := func(id int64, who *hoard.User, origin string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("POST", fmt.Sprintf("%s/uploads/%d/delete", e.ts.URL, id), strings.NewReader(url.Values{"from": {"page"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin == "" {
			origin = e.ts.URL
		}
		req.Header.Set("Origin", origin)
		req.AddCookie(e.session(who))
		resp, err := e.client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for _, tt := range []struct {
		name   string
		id     int64
		who    *hoard.User
		origin string
		want   answer
	}{
		{"another user's", done, other, "", answer{404, "", true, true, 3000}},
		{"being processed", working, owner, "", answer{409, "", true, true, 3000}},
		{"from another site", done, owner, "https://evil.example", answer{403, "", true, true, 3000}},
		{"owner", done, owner, "", answer{303, "/uploads?done=upload-deleted", false, false, 2000}},
		{"administrator", byAdmin, admin, "", answer{303, "/uploads?done=upload-deleted", false, false, 1000}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(tt.id, tt.who, tt.origin)
			_, ferr := e.db.FindManualUpload(ctx, tt.id)
			_, serr := os.Stat(filepath.Join(e.srv.deps.UploadDir, fmt.Sprint(tt.id)))
			held, err := e.db.UploadBytesHeld(ctx, owner.ID)
			if err != nil {
				t.Fatal(err)
			}
			got := answer{resp.StatusCode, resp.Header.Get("Location"), ferr == nil, serr == nil, held}
			if got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
	if left := e.entries(); len(left) != 1 || left[0] != fmt.Sprint(working) {
		t.Errorf("upload directory holds %v, want only [%d]", left, working)
	}
	_, page := e.do(nil, "GET", "/uploads?done=upload-deleted", nil, e.session(owner))
	for _, want := range []string{"Upload deleted", "kept on the server for 7 days", "Your uploads hold 1000 B of your 20.0 GiB quota: 20.0 GiB left."} {
		if !strings.Contains(page, want) {
			t.Errorf("uploads page lacks %q", want)
		}
	}
}

// TestUploadPageShowsRetention: each file says what becomes of it on the
// server; a finished upload offers the delete button, one still working
// says it cannot be deleted yet.
func TestUploadPageShowsRetention(t *testing.T) {
	e := newEnv(t, func(d *Deps) { d.UploadRetention = 3 * 24 * 60 * 60 * 1e9 })
	e.publishTarget(true)
	ctx := context.Background()
	owner, _ := e.user(hoard.RoleUser)
	c := e.session(owner)
	up, err := e.db.CreateManualUpload(ctx, owner.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	kept, _ := e.db.AddManualUploadFile(ctx, up.ID, "kept.zip", fmt.Sprint(up.ID)+"/1", 10)
	failed, _ := e.db.AddManualUploadFile(ctx, up.ID, "failed.zip", fmt.Sprint(up.ID)+"/2", 10)
	dup, _ := e.db.AddManualUploadFile(ctx, up.ID, "dup.zip", fmt.Sprint(up.ID)+"/3", 10)
	for _, f := range []struct {
		id     int64
		status hoard.UploadStatus
	}{{kept.ID, hoard.UploadCompleted}, {failed.ID, hoard.UploadFailed}, {dup.ID, hoard.UploadCompleted}} {
		if err := e.db.SetManualUploadFileStatus(ctx, f.id, f.status, "", "", 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.db.MarkUploadFileRemoved(ctx, dup.ID); err != nil {
		t.Fatal(err)
	}
	_, page := e.do(nil, "GET", fmt.Sprintf("/uploads/%d", up.ID), nil, c)
	if want := "The upload can be deleted once it is complete."; !strings.Contains(page, want) {
		t.Errorf("working upload's page lacks %q", want)
	}
	if err := e.db.SetManualUploadStatus(ctx, up.ID, hoard.UploadPartial, "1 of 3 files failed"); err != nil {
		t.Fatal(err)
	}
	resp, body := e.do(nil, "GET", fmt.Sprintf("/api/uploads/%d", up.ID), nil, c)
	var j uploadJSON
	if err := json.Unmarshal([]byte(body), &j); err != nil || resp.StatusCode != 200 {
		t.Fatalf("status = %d %s", resp.StatusCode, body)
	}
	f, _ := e.db.FindManualUploadFile(ctx, kept.ID)
	want := []string{"kept until " + f.UpdatedAt.Add(3*24*60*60*1e9).UTC().Format("2006-01-02 15:04 UTC"),
		"kept until retried or deleted", "removed from the server"}
	var got []string
	for _, f := range j.Files {
		got = append(got, f.Kept)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("kept = %q, want %q", got, want)
	}
	_, page = e.do(nil, "GET", fmt.Sprintf("/uploads/%d", up.ID), nil, c)
	for _, want := range append(want, "kept on the server for 3 days", fmt.Sprintf(`action="/uploads/%d/delete"`, up.ID)) {
		if !strings.Contains(page, want) {
			t.Errorf("finished upload's page lacks %q", want)
		}
	}
}
