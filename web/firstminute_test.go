package web

import (
	"context"
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
