package web

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hoard/hoard"
)

// TestCatalogSaysACycleIsRunning: while a cycle runs, the plain catalog
// says so, with the count so far (the demo's first minute); a search does
// not; once the cycle is over, neither does the catalog.
func TestCatalogSaysACycleIsRunning(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.seedCatalog()
	user, _ := e.user(hoard.RoleUser)
	c := e.session(user)
	run, err := e.db.CreateRun(ctx, hoard.TriggerDemo)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.db.AddRunCounters(ctx, run.ID, hoard.RunCounters{Ingested: 3}); err != nil {
		t.Fatal(err)
	}
	e.checkPage(t, c, "/", 200, []string{"The demo's first ingestion cycle is running", "— 3 so far", "data-ingesting"}, nil)
	e.checkPage(t, c, "/?q=dragon", 200, nil, []string{"data-ingesting"})
	if _, err := e.db.FinishRun(ctx, run.ID, hoard.RunCompleted, ""); err != nil {
		t.Fatal(err)
	}
	e.srv.ingestingMu.Lock()
	e.srv.ingestingAt = time.Time{} // past its few seconds
	e.srv.ingestingMu.Unlock()
	e.checkPage(t, c, "/", 200, nil, []string{"data-ingesting"})
}

func TestAgoText(t *testing.T) {
	now := time.Date(2026, 11, 25, 18, 40, 0, 0, time.UTC)
	tests := []struct {
		ago  time.Duration
		want string
	}{
		{-time.Minute, "just now"}, {2 * time.Second, "just now"}, {40 * time.Second, "40 s ago"},
		{3*time.Minute + 20*time.Second, "3 min ago"}, {2 * time.Hour, "2 h ago"}, {5 * 24 * time.Hour, "5 days ago"},
	}
	for _, tt := range tests {
		if got := agoText(now.Add(-tt.ago), now); got != tt.want {
			t.Errorf("%v ago: %q, want %q", tt.ago, got, tt.want)
		}
	}
}

// TestFailedFormWithOneRequestAtATime: showing a failed form's page again
// happens within the request the admission gate admitted; with a gate of
// one it answers, instead of waiting for itself.
func TestFailedFormWithOneRequestAtATime(t *testing.T) {
	e := newEnv(t, func(d *Deps) { d.MaxConcurrentRequests = 1 })
	admin, _ := e.user(hoard.RoleAdmin)
	client := e.client()
	client.Timeout = 30 * time.Second // a gate waiting for itself never answers
	resp, body := e.do(client, "POST", "/admin/invites", url.Values{"count": {"500"}}, e.session(admin))
	if resp.StatusCode != 422 || !strings.Contains(body, `class="field-error"`) {
		t.Fatalf("status %d\n%s", resp.StatusCode, excerpt(body))
	}
}

// TestNewPackagesSince: GET /api/packages/new counts the packages above
// since and says whether a cycle runs.
func TestNewPackagesSince(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pk := e.seedCatalog()
	user, _ := e.user(hoard.RoleUser)
	c := e.session(user)
	first := pk["Dragon_Bust_v2.stl"].ID
	newest := pk["Knight Helmet.rar"].ID
	get := func(since int64) string {
		t.Helper()
		resp, body := e.do(nil, "GET", fmt.Sprintf("/api/packages/new?since=%d", since), nil, c)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		return strings.TrimSpace(body)
	}
	if got, want := get(first), fmt.Sprintf(`{"capped":false,"new":2,"newest_id":%d,"running":false}`, newest); got != want {
		t.Errorf("since the first: %s, want %s", got, want)
	}
	if _, err := e.db.CreateRun(ctx, hoard.TriggerManual); err != nil {
		t.Fatal(err)
	}
	e.srv.ingestingMu.Lock()
	e.srv.ingestingAt = time.Time{}
	e.srv.ingestingMu.Unlock()
	if got, want := get(newest), fmt.Sprintf(`{"capped":false,"new":0,"newest_id":%d,"running":true}`, newest); got != want {
		t.Errorf("since the newest: %s, want %s", got, want)
	}
	if resp, _ := e.do(nil, "GET", "/api/packages/new?since=-1", nil, c); resp.StatusCode != 400 && resp.StatusCode != 422 {
		t.Errorf("since=-1: status %d", resp.StatusCode)
	}
}
