package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store/storetest"
	"github.com/riverqueue/river/rivertype"
)

// postImage posts a multipart form with one file field "image" and
// returns the response (its body read and closed).
func (e *testEnv) postImage(path string, data []byte, c *http.Cookie) *http.Response {
	e.t.Helper()
	resp, _ := e.postImageResponse(path, data, c)
	return resp
}

func TestGroupsCreateRenameMergeDissolve(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pk := e.seedCatalog()
	admin, _ := e.user(hoard.RoleAdmin)
	c := e.session(admin)
	browser := e.client()
	a, b, k := pk["Dragon_Bust_v2.stl"], pk["Red Dragon Pack.zip"], pk["Knight Helmet.rar"]

	create := func(name string, ids ...int64) int64 {
		t.Helper()
		f := url.Values{"name": {name}}
		for _, id := range ids {
			f.Add("id", fmt.Sprint(id))
		}
		resp, body := e.do(browser, "POST", "/groups", f, c)
		m := regexp.MustCompile(`/groups/(\d+)`).FindStringSubmatch(resp.Header.Get("Location"))
		if resp.StatusCode != 303 || m == nil {
			t.Fatalf("create group = %d %s", resp.StatusCode, body)
		}
		var id int64
		fmt.Sscan(m[1], &id)
		return id
	}
	g1 := create("Dragons", a.ID, b.ID)
	if jobs := len(storetest.Jobs(t, e.db, storetest.JobMatch{Kind: "learn_group_rule"})); jobs != 1 {
		t.Fatalf("%d learn_group_rule jobs queued", jobs)
	}
	if resp, _ := e.do(browser, "POST", "/groups", url.Values{"id": {fmt.Sprint(k.ID)}}, c); resp.StatusCode != 422 {
		t.Fatalf("a one-package group = %d", resp.StatusCode)
	}
	_, body := e.do(browser, "GET", fmt.Sprintf("/groups/%d", g1), nil, c)
	if !strings.Contains(body, "Dragons") || !strings.Contains(body, "Red Dragon Pack.zip") || !strings.Contains(body, "2 packages") {
		t.Fatalf("group page:\n%s", body)
	}
	// While its learn_group_rule job waits, the page says learning is
	// under way, not that the packages share nothing.
	if !strings.Contains(body, "Learning a rule from these packages") || strings.Contains(body, "share no file-name prefix") {
		t.Fatalf("group page while learning:\n%s", body)
	}
	storetest.SetJobState(t, e.db, storetest.JobMatch{Kind: "learn_group_rule"}, rivertype.JobStateCompleted)
	if _, body := e.do(browser, "GET", fmt.Sprintf("/groups/%d", g1), nil, c); !strings.Contains(body, "share no file-name prefix") {
		t.Fatalf("group page after learning found no rule:\n%s", body)
	}
	resp, _ := e.do(browser, "POST", fmt.Sprintf("/groups/%d/rename", g1), url.Values{"name": {"Dragon set"}}, c)
	if resp.StatusCode != 303 {
		t.Fatalf("rename = %d", resp.StatusCode)
	}
	if _, page := e.do(browser, "GET", resp.Header.Get("Location"), nil, c); !strings.Contains(page, "Group renamed.") || !strings.Contains(page, "Dragon set") {
		t.Fatalf("the page after renaming does not confirm it:\n%.2000s", page)
	}
	// A second group to merge: Knight + Dragon bust moved out of the first.
	if resp, _ := e.do(browser, "POST", fmt.Sprintf("/groups/%d/packages/%d/remove", g1, a.ID), url.Values{}, c); resp.StatusCode != 303 {
		t.Fatalf("remove = %d", resp.StatusCode)
	}
	g2 := create("Knights", k.ID, a.ID)
	// Two-step merge: start on g2 (source), merge on g1 (target).
	if resp, _ := e.do(browser, "POST", fmt.Sprintf("/groups/%d/merge/start", g2), url.Values{}, c); resp.StatusCode != 303 {
		t.Fatalf("start merge = %d", resp.StatusCode)
	}
	_, body = e.do(browser, "GET", fmt.Sprintf("/groups/%d", g1), nil, c)
	if !strings.Contains(body, "Merge “Knights” here") {
		t.Fatal("the target does not offer Merge here")
	}
	if resp, _ := e.do(browser, "POST", fmt.Sprintf("/groups/%d/merge", g1), url.Values{}, c); resp.StatusCode != 303 {
		t.Fatalf("merge = %d", resp.StatusCode)
	}
	if _, err := e.db.FindGroupByID(ctx, g2); hoard.ErrorCode(err) != hoard.ENOTFOUND {
		t.Fatalf("the merged source still exists: %v", err)
	}
	merged, _ := e.db.FindGroupByID(ctx, g1)
	if merged.MemberCount != 3 || merged.Name != "Dragon set" {
		t.Fatalf("target after merge: %+v", merged)
	}
	// Previews: a real image is accepted (re-encoded as a JPEG), anything else refused.
	if resp := e.postImage(fmt.Sprintf("/groups/%d/preview", g1), pngBytes(t), c); resp.StatusCode != 303 {
		t.Fatalf("group preview upload = %d", resp.StatusCode)
	}
	if resp, _ := e.do(browser, "GET", fmt.Sprintf("/groups/%d/preview", g1), nil, c); resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/jpeg" {
		t.Fatalf("group preview = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp := e.postImage(fmt.Sprintf("/packages/%d/preview", k.ID), []byte("<svg onload=alert(1)>"), c); resp.StatusCode != 422 {
		t.Fatalf("non-image preview = %d", resp.StatusCode)
	}
	if resp := e.postImage(fmt.Sprintf("/packages/%d/preview", k.ID), append(pngBytes(t), make([]byte, 3<<20)...), c); resp.StatusCode != 413 {
		t.Fatalf("oversized preview = %d", resp.StatusCode)
	}
	if resp := e.postImage(fmt.Sprintf("/packages/%d/preview", k.ID), pngBytes(t), c); resp.StatusCode != 303 {
		t.Fatalf("package preview = %d", resp.StatusCode)
	}
	if p, _ := e.db.FindPackageByID(ctx, k.ID); !p.HasPreview || p.PreviewMsgID != 0 {
		t.Fatalf("package preview stored: %+v", p)
	}
	resp, _ = e.do(browser, "POST", fmt.Sprintf("/groups/%d/dissolve", g1), url.Values{}, c)
	if resp.StatusCode != 303 {
		t.Fatalf("dissolve = %d", resp.StatusCode)
	}
	if _, page := e.do(browser, "GET", resp.Header.Get("Location"), nil, c); !strings.Contains(page, "Group dissolved") {
		t.Fatalf("the page after dissolving does not confirm it:\n%.2000s", page)
	}
	if n, _ := e.db.CountUngroupedPackages(ctx); n != 3 {
		t.Fatalf("ungrouped after dissolve: %d", n)
	}
	// Users may not curate unless USERS_CAN_CURATE.
	user, _ := e.user(hoard.RoleUser)
	if resp, _ := e.do(nil, "POST", "/groups", url.Values{"id": {fmt.Sprint(a.ID), fmt.Sprint(b.ID)}}, e.session(user)); resp.StatusCode != 403 {
		t.Fatalf("user creating a group = %d", resp.StatusCode)
	}
}
