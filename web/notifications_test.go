package web

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hoard/hoard"
)

func TestNotificationsBellAndActions(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pk := e.seedCatalog()
	admin, _ := e.user(hoard.RoleAdmin)
	c := e.session(admin)
	var ids []int64
	for i, typ := range []hoard.NotificationType{hoard.NotifyMissingPart, hoard.NotifyChannelAccessLost, hoard.NotifyUploadFailed} {
		n := &hoard.Notification{Type: typ, Severity: hoard.SeverityWarning, Title: fmt.Sprintf("Problem <%d>", i), DedupKey: fmt.Sprint("k", i)}
		if typ == hoard.NotifyMissingPart {
			n.PackageID = pk["Red Dragon Pack.zip"].ID
		}
		if _, err := e.db.CreateNotification(ctx, n); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, n.ID)
	}
	resp, body := e.do(nil, "GET", "/", nil, c)
	if resp.StatusCode != 200 || !strings.Contains(body, `data-bell-count >3</span>`) {
		t.Fatalf("bell badge missing: %d\n%s", resp.StatusCode, body[:min(len(body), 1500)])
	}
	_, body = e.do(nil, "GET", "/notifications", nil, c)
	if !strings.Contains(body, "Problem &lt;0&gt;") || strings.Contains(body, "Problem <0>") {
		t.Fatal("notification titles not shown escaped")
	}
	api := func() (items []notificationJSON, unread int64) {
		t.Helper()
		_, body := e.do(nil, "GET", "/api/notifications", nil, c)
		var out struct {
			Items  []notificationJSON `json:"items"`
			Unread int64              `json:"unread"`
		}
		if err := json.Unmarshal([]byte(body), &out); err != nil {
			t.Fatal(err)
		}
		return out.Items, out.Unread
	}
	items, unread := api()
	if len(items) != 3 || unread != 3 || !items[2].Repairable || items[1].Repairable {
		t.Fatalf("api: %d items, %d unread, repairable flags %v %v", len(items), unread, items[2].Repairable, items[1].Repairable)
	}
	// JSON clients get JSON; forms go back to the page.
	resp, body = e.do(nil, "POST", fmt.Sprintf("/api/notifications/%d/read", ids[0]), map[string][]string{}, c)
	if resp.StatusCode != 200 || !strings.Contains(body, `"is_read":true`) {
		t.Fatalf("read one: %d %s", resp.StatusCode, body)
	}
	if _, unread = api(); unread != 2 {
		t.Fatalf("unread after reading one = %d", unread)
	}
	resp, _ = e.do(nil, "POST", "/api/notifications/read-all", map[string][]string{}, c)
	if _, unread = api(); resp.StatusCode != 200 || unread != 0 {
		t.Fatalf("read all: %d, unread %d", resp.StatusCode, unread)
	}
	resp, _ = e.do(nil, "POST", fmt.Sprintf("/api/notifications/%d/dismiss", ids[1]), map[string][]string{}, c)
	if items, _ = api(); resp.StatusCode != 200 || len(items) != 2 {
		t.Fatalf("dismiss: %d, %d left", resp.StatusCode, len(items))
	}
	if resp, _ = e.do(nil, "POST", fmt.Sprintf("/api/notifications/%d/dismiss", ids[1]), map[string][]string{}, c); resp.StatusCode != 404 {
		t.Fatalf("dismissing twice = %d", resp.StatusCode)
	}
	resp, _ = e.do(nil, "POST", "/api/notifications/clear", map[string][]string{"from": {"page"}}, c)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/notifications" {
		t.Fatalf("page form did not return to the page: %d", resp.StatusCode)
	}
	resp, _ = e.do(nil, "POST", "/api/notifications/clear", map[string][]string{}, c)
	if items, _ = api(); resp.StatusCode != 200 || len(items) != 0 {
		t.Fatalf("clear: %d, %d left", resp.StatusCode, len(items))
	}
}
