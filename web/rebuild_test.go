package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store/storetest"
)

func TestRebuildStartAndStatus(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	admin, _ := e.user(hoard.RoleAdmin)
	c := e.session(admin)
	status := func() *rebuildJSON {
		t.Helper()
		resp, body := e.do(nil, "GET", "/api/rebuild/status", nil, c)
		var out struct {
			Run *rebuildJSON `json:"run"`
		}
		if err := json.Unmarshal([]byte(body), &out); resp.StatusCode != 200 || err != nil {
			t.Fatalf("status = %d %s (%v)", resp.StatusCode, body, err)
		}
		return out.Run
	}
	countRuns := func() int {
		t.Helper()
		return storetest.Count(t, e.db, "rebuild_runs")
	}
	if run := status(); run != nil {
		t.Fatalf("status before any rebuild = %+v", run)
	}
	if resp, body := e.do(nil, "POST", "/admin/messenger/rebuild", nil, c); resp.StatusCode != 409 || !strings.Contains(body, "No destination channel") {
		t.Fatalf("without a destination = %d %.300s", resp.StatusCode, body)
	}

	dest := &hoard.Channel{PlatformID: 4242, Title: "Archive", Kind: hoard.ChannelDestination}
	if err := e.db.UpsertChannel(ctx, dest); err != nil {
		t.Fatal(err)
	}
	resp, _ := e.do(nil, "POST", "/admin/messenger/rebuild", nil, c)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/admin/messenger?done=rebuild" {
		t.Fatalf("start = %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	run := status()
	if run == nil || run.Status != "RUNNING" || run.DestChannelID != dest.ID || run.FinishedAt != nil {
		t.Fatalf("status after start = %+v", run)
	}
	// The job came with the row, and names it.
	row, err := e.db.FindRebuild(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	jobID := row.RiverJobID
	if jobID == 0 {
		t.Fatalf("the rebuild row names no job: %+v", row)
	}
	jobs := storetest.Jobs(t, e.db, storetest.JobMatch{ID: jobID})
	if len(jobs) != 1 || jobs[0].Kind != (hoard.RebuildFromDestinationArgs{}).Kind() || jobs[0].Args["rebuild_id"] != float64(run.ID) {
		t.Fatalf("job of the rebuild (id %d) = %+v", jobID, jobs)
	}

	// One at a time: the page gets a 409 page, an API caller a JSON error.
	if resp, body := e.do(nil, "POST", "/admin/messenger/rebuild", nil, c); resp.StatusCode != 409 || !strings.Contains(body, "already running") {
		t.Fatalf("second start = %d %.300s", resp.StatusCode, body)
	}
	req, _ := http.NewRequest("POST", e.ts.URL+"/admin/messenger/rebuild", nil)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Origin", e.ts.URL)
	req.AddCookie(c)
	jresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(jresp.Body)
	jresp.Body.Close()
	if jresp.StatusCode != 409 || !strings.Contains(string(body), `"code":"conflict"`) {
		t.Fatalf("second start (JSON) = %d %s", jresp.StatusCode, body)
	}

	// The run row and the job commit together: when the job cannot be
	// queued (its predecessor's job is still unfinished although the row
	// was finished), no row is left behind.
	if _, err := e.db.FinishRebuild(ctx, run.ID, hoard.RunFailed, "stopped by hand"); err != nil {
		t.Fatal(err)
	}
	before := countRuns()
	if resp, _ := e.do(nil, "POST", "/admin/messenger/rebuild", nil, c); resp.StatusCode != 409 {
		t.Fatalf("start while the old job is unfinished = %d", resp.StatusCode)
	}
	if n := countRuns(); n != before {
		t.Fatalf("rebuild rows %d → %d: a row without a job", before, n)
	}

	// The panel shows the latest rebuild and its error.
	_, page := e.do(nil, "GET", "/admin/messenger", nil, c)
	if !strings.Contains(page, "data-rebuild-panel") || !strings.Contains(page, "stopped by hand") || !strings.Contains(page, `action="/admin/messenger/rebuild"`) {
		t.Fatalf("admin page without the rebuild panel:\n%.2000s", page)
	}

	// Once the old job is gone, a new rebuild starts.
	storetest.DeleteJobs(t, e.db, storetest.JobMatch{ID: jobID})
	if resp, _ := e.do(nil, "POST", "/admin/messenger/rebuild", nil, c); resp.StatusCode != 303 {
		t.Fatalf("restart = %d", resp.StatusCode)
	}
	if next := status(); next == nil || next.ID == run.ID || next.Status != "RUNNING" {
		t.Fatalf("status after restart = %+v", next)
	}
}
