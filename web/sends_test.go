package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hoard/hoard"
)

func (e *testEnv) link(u *hoard.User, platformID int64) {
	e.t.Helper()
	code, _ := NewLinkCode()
	ctx := context.Background()
	if err := e.db.CreateLinkCode(ctx, u.ID, hoard.LinkCodeHash(code), time.Now().Add(time.Minute)); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.db.ConsumeLinkCode(ctx, hoard.LinkCodeHash(code), platformID, 1, "tg"); err != nil {
		e.t.Fatal(err)
	}
}

func (e *testEnv) postJSON(path, body string, cookie *http.Cookie) (*http.Response, string) {
	e.t.Helper()
	return e.post(path, "application/json", strings.NewReader(body), cookie)
}

// post sends a body with a content type and the session cookie, and returns
// the response with its body read.
func (e *testEnv) post(path, contentType string, body io.Reader, cookie *http.Cookie) (*http.Response, string) {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.ts.URL+path, body)
	req.Header.Set("Content-Type", contentType)
	req.AddCookie(cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestBotSendQueuesRequestJobAndNotification(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pk := e.seedCatalog()
	pack := pk["Red Dragon Pack.zip"]
	user, _ := e.user(hoard.RoleUser)
	other, _ := e.user(hoard.RoleUser)
	admin, _ := e.user(hoard.RoleAdmin)
	uc := e.session(user)

	resp, body := e.postJSON("/api/messenger/bot/send", fmt.Sprintf(`{"package_id":%d}`, pack.ID), uc)
	if resp.StatusCode != 409 || !strings.Contains(body, "Link a messenger account") {
		t.Fatalf("unlinked: %d %s", resp.StatusCode, body)
	}
	e.link(user, 5001)
	resp, body = e.postJSON("/api/messenger/bot/send", fmt.Sprintf(`{"package_id":%d}`, pack.ID), uc)
	if resp.StatusCode != 409 || !strings.Contains(body, "not published") {
		t.Fatalf("unpublished: %d %s", resp.StatusCode, body)
	}
	dest := &hoard.Channel{PlatformID: 900, Title: "Dest", Kind: hoard.ChannelDestination}
	if err := e.db.UpsertChannel(ctx, dest); err != nil {
		t.Fatal(err)
	}
	if err := e.db.SetPackageDestination(ctx, pack.ID, dest.ID, []int64{11, 12}); err != nil {
		t.Fatal(err)
	}

	conn, err := e.db.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN bot_send"); err != nil {
		t.Fatal(err)
	}
	resp, body = e.postJSON("/api/messenger/bot/send", fmt.Sprintf(`{"package_id":%d}`, pack.ID), uc)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("send: %d %s", resp.StatusCode, body)
	}
	var out struct {
		Requests []sendJSON `json:"requests"`
	}
	_ = json.Unmarshal([]byte(body), &out)
	if len(out.Requests) != 1 || out.Requests[0].Status != "PENDING" {
		t.Fatalf("requests = %s", body)
	}
	id := out.Requests[0].ID
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	n, err := conn.Conn().WaitForNotification(wctx)
	if err != nil || !strings.Contains(n.Payload, fmt.Sprint(id)) {
		t.Fatalf("notification: %v %+v", err, n)
	}
	var kind, args string
	if err := e.db.Pool().QueryRow(ctx, `SELECT kind, args::text FROM river_job WHERE kind = 'bot_send'`).Scan(&kind, &args); err != nil {
		t.Fatalf("no bot_send job: %v", err)
	}
	if !strings.Contains(args, fmt.Sprintf(`"request_id": %d`, id)) && !strings.Contains(args, fmt.Sprintf(`"request_id":%d`, id)) {
		t.Fatalf("job args %s", args)
	}
	// A second send while the first is pending queues nothing.
	if resp, _ := e.postJSON("/api/messenger/bot/send", fmt.Sprintf(`{"package_id":%d}`, pack.ID), uc); resp.StatusCode != 409 {
		t.Fatalf("duplicate send = %d", resp.StatusCode)
	}
	// Status: own and admin see it, another user does not.
	if resp, body := e.do(nil, "GET", fmt.Sprintf("/api/messenger/bot/send/%d", id), nil, uc); resp.StatusCode != 200 || !strings.Contains(body, `"status":"PENDING"`) {
		t.Fatalf("own status %d %s", resp.StatusCode, body)
	}
	if resp, _ := e.do(nil, "GET", fmt.Sprintf("/api/messenger/bot/send/%d", id), nil, e.session(other)); resp.StatusCode != 404 {
		t.Fatalf("other user's status = %d", resp.StatusCode)
	}
	ac := e.session(admin)
	if resp, _ := e.do(nil, "GET", fmt.Sprintf("/api/messenger/bot/send/%d", id), nil, ac); resp.StatusCode != 200 {
		t.Fatalf("admin status = %d", resp.StatusCode)
	}
	if _, body := e.do(nil, "GET", "/api/messenger/bot/sends", nil, ac); !strings.Contains(body, "Red Dragon Pack.zip") {
		t.Fatalf("history: %s", body)
	}
	// Only administrators send to someone else.
	if resp, _ := e.postJSON("/api/messenger/bot/send", fmt.Sprintf(`{"package_id":%d,"user_id":%d}`, pack.ID, other.ID), uc); resp.StatusCode != 403 {
		t.Fatalf("user targeting another = %d", resp.StatusCode)
	}
	for _, bad := range []string{`{"package_id":-1}`, `{"nope":1}`, `not json`, `{}`} {
		if resp, body := e.postJSON("/api/messenger/bot/send", bad, uc); resp.StatusCode != 422 || !strings.Contains(body, `"code":"invalid"`) {
			t.Errorf("%s: %d %s", bad, resp.StatusCode, body)
		}
	}
}
