package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store/storetest"
	"github.com/jackc/pgx/v5"
)

// jobRow is a River job as the action tests check it.
type jobRow struct {
	Queue string
	Args  map[string]any
}

// jobs returns the jobs of a kind, oldest first.
func (e *testEnv) jobs(kind string) []jobRow {
	e.t.Helper()
	out := []jobRow{}
	for _, j := range storetest.Jobs(e.t, e.db, storetest.JobMatch{Kind: kind}) {
		out = append(out, jobRow{Queue: j.Queue, Args: j.Args})
	}
	return out
}

// postAs posts a form the way a script does (Accept: application/json).
func (e *testEnv) postAs(accept, path string, form url.Values, cookie *http.Cookie) (*http.Response, string) {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.ts.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", e.ts.URL)
	req.Header.Set("Accept", accept)
	if cookie != nil {
		req.AddCookie(cookie)
	}
	resp, err := e.client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// listen returns a function that waits up to d for the next notification
// on channel, received on a connection of its own.
func (e *testEnv) listen(channel string) func(d time.Duration) (string, bool) {
	e.t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, e.db.Pool().Config().ConnString())
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = conn.Close(context.Background()) })
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		e.t.Fatal(err)
	}
	return func(d time.Duration) (string, bool) {
		wctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		n, err := conn.WaitForNotification(wctx)
		if err != nil {
			return "", false
		}
		return n.Payload, true
	}
}

func TestTriggerIngestionQueuesCycleAndNotifies(t *testing.T) {
	e := newEnv(t)
	next := e.listen("ingestion_trigger")
	user, _ := e.user(hoard.RoleUser)
	admin, _ := e.user(hoard.RoleAdmin)
	c := e.session(admin)

	// Nobody but an administrator queues anything or wakes the worker.
	if resp, _ := e.do(nil, "POST", "/api/ingestion/trigger", url.Values{}, e.session(user)); resp.StatusCode != 403 {
		t.Fatalf("USER trigger = %d", resp.StatusCode)
	}
	if resp, _ := e.do(nil, "POST", "/api/ingestion/trigger", url.Values{}, nil); resp.StatusCode != 401 {
		t.Fatalf("anonymous trigger = %d", resp.StatusCode)
	}
	if got := e.jobs("ingest_cycle"); len(got) != 0 {
		t.Fatalf("refused triggers queued %v", got)
	}
	if p, ok := next(300 * time.Millisecond); ok {
		t.Fatalf("refused trigger notified: %s", p)
	}

	resp, body := e.do(nil, "POST", "/api/ingestion/trigger", url.Values{}, c)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("trigger = %d %s", resp.StatusCode, body)
	}
	var out struct {
		JobID   int64  `json:"job_id"`
		Queued  bool   `json:"queued"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal([]byte(body), &out); err != nil || !out.Queued || out.JobID == 0 || out.Message == "" {
		t.Fatalf("trigger answer %s (%v)", body, err)
	}
	jobs := e.jobs("ingest_cycle")
	if len(jobs) != 1 || jobs[0].Queue != hoard.QueueIngest || jobs[0].Args["trigger"] != string(hoard.TriggerManual) {
		t.Fatalf("ingest_cycle jobs = %+v", jobs)
	}
	payload, ok := next(5 * time.Second)
	if !ok {
		t.Fatal("no ingestion_trigger notification")
	}
	var note triggerPayload
	if err := json.Unmarshal([]byte(payload), &note); err != nil {
		t.Fatalf("notification payload %s: %v", payload, err)
	}
	if diff := cmp.Diff(triggerPayload{Trigger: hoard.TriggerManual, JobID: out.JobID, UserID: admin.ID}, note); diff != "" {
		t.Fatalf("notification payload (-want +got):\n%s", diff)
	}
	// The action creates no run: the worker does when the cycle starts.
	if runs := storetest.Count(t, e.db, "ingestion_runs"); runs != 0 {
		t.Fatalf("runs after trigger = %d", runs)
	}

	// A second trigger while the cycle is queued queues nothing more, says
	// so, and still wakes the worker.
	resp, body = e.do(nil, "POST", "/api/ingestion/trigger", url.Values{}, c)
	if resp.StatusCode != http.StatusAccepted || !strings.Contains(body, `"queued":false`) || !strings.Contains(body, fmt.Sprintf(`"job_id":%d`, out.JobID)) {
		t.Fatalf("second trigger = %d %s", resp.StatusCode, body)
	}
	if got := e.jobs("ingest_cycle"); len(got) != 1 {
		t.Fatalf("second trigger queued another cycle: %+v", got)
	}
	if payload, ok := next(5 * time.Second); !ok || !strings.Contains(payload, `"duplicate":true`) {
		t.Fatalf("second notification %q %v", payload, ok)
	}

	// The worker panel's form returns to its page with a notice; a foreign
	// back address is not followed.
	storetest.DeleteJobs(t, e.db, storetest.JobMatch{})
	resp, _ = e.do(nil, "POST", "/api/ingestion/trigger?from=page", url.Values{"back": {"/admin/messenger"}}, c)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/admin/messenger?done=triggered" {
		t.Fatalf("form trigger = %d → %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if _, body = e.do(nil, "GET", resp.Header.Get("Location"), nil, c); !strings.Contains(body, "Ingestion cycle queued") ||
		!strings.Contains(body, `action="/api/ingestion/trigger?from=page"`) {
		t.Fatal("messaging page lacks the notice or the Trigger now form")
	}
	resp, _ = e.do(nil, "POST", "/api/ingestion/trigger", url.Values{"from": {"page"}, "back": {"//evil.example/x"}}, c)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/?done=cycle-pending" {
		t.Fatalf("foreign back = %d → %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

func TestRescanChannel(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	src := &hoard.Channel{PlatformID: 41, Title: "Source <x>", Kind: hoard.ChannelSource}
	dst := &hoard.Channel{PlatformID: 42, Title: "Destination", Kind: hoard.ChannelDestination}
	for _, ch := range []*hoard.Channel{src, dst} {
		if err := e.db.UpsertChannel(ctx, ch); err != nil {
			t.Fatal(err)
		}
	}
	user, _ := e.user(hoard.RoleUser)
	admin, _ := e.user(hoard.RoleAdmin)
	c := e.session(admin)
	path := fmt.Sprintf("/admin/messenger/channels/%d/rescan", src.ID)

	refusals := []struct {
		name   string
		path   string
		cookie *http.Cookie
		want   int
	}{
		{"USER", path, e.session(user), 403},
		{"unknown channel", "/admin/messenger/channels/999999/rescan", c, 404},
		{"bad id", "/admin/messenger/channels/x/rescan", c, 404},
		{"destination", fmt.Sprintf("/admin/messenger/channels/%d/rescan", dst.ID), c, 422},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			if resp, body := e.do(nil, "POST", tc.path, url.Values{}, tc.cookie); resp.StatusCode != tc.want {
				t.Fatalf("= %d, want %d\n%.300s", resp.StatusCode, tc.want, body)
			}
		})
	}
	if got := e.jobs("rescan_channel"); len(got) != 0 {
		t.Fatalf("refused rescans queued %+v", got)
	}

	resp, _ := e.do(nil, "POST", path, url.Values{}, c)
	if want := fmt.Sprintf("/admin/messenger/channels/%d?done=rescan", src.ID); resp.StatusCode != 303 || resp.Header.Get("Location") != want {
		t.Fatalf("rescan = %d → %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	jobs := e.jobs("rescan_channel")
	if len(jobs) != 1 || jobs[0].Queue != hoard.QueueMaintenance || jobs[0].Args["channel_id"] != float64(src.ID) {
		t.Fatalf("rescan_channel jobs = %+v", jobs)
	}
	// Scripts get JSON; a rescan already queued is not queued twice.
	resp, body := e.postAs("application/json", path, url.Values{}, c)
	if resp.StatusCode != 202 || !strings.Contains(body, `"queued":false`) || !strings.Contains(body, fmt.Sprintf(`"channel_id":%d`, src.ID)) {
		t.Fatalf("JSON rescan = %d %s", resp.StatusCode, body)
	}
	if got := e.jobs("rescan_channel"); len(got) != 1 {
		t.Fatalf("duplicate rescan queued: %+v", got)
	}
	resp, body = e.postAs("application/json", fmt.Sprintf("/admin/messenger/channels/%d/rescan", dst.ID), url.Values{}, c)
	if resp.StatusCode != 422 || !strings.Contains(body, `"code":"invalid"`) {
		t.Fatalf("JSON destination rescan = %d %s", resp.StatusCode, body)
	}
	// The list returns to the list.
	resp, _ = e.do(nil, "POST", path, url.Values{"back": {"/admin/messenger"}}, c)
	if resp.Header.Get("Location") != "/admin/messenger?done=rescan" {
		t.Fatalf("rescan from the list → %q", resp.Header.Get("Location"))
	}

	// Buttons: on source channels' rows and page, not the destination's.
	_, body = e.do(nil, "GET", "/admin/messenger", nil, c)
	if !strings.Contains(body, `action="`+path+`"`) || strings.Contains(body, fmt.Sprintf(`channels/%d/rescan`, dst.ID)) {
		t.Fatal("rescan buttons wrong on the messaging page")
	}
	if !strings.Contains(body, "Rescan Source &lt;x&gt; from") {
		t.Fatal("channel title in the confirmation is not escaped")
	}
	_, body = e.do(nil, "GET", fmt.Sprintf("/admin/messenger/channels/%d?done=rescan", src.ID), nil, c)
	if !strings.Contains(body, `action="`+path+`"`) || !strings.Contains(body, "Rescan queued") {
		t.Fatal("channel page lacks the rescan button or the notice")
	}
}

func TestRepairFromNotification(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pk := e.seedCatalog()
	manual := &hoard.Package{FileName: "Uploaded.zip", FileSize: 9, ArchiveType: hoard.ArchiveZIP, ContentHash: strings.Repeat("f", 64)}
	if err := e.db.CreatePackage(ctx, manual); err != nil {
		t.Fatal(err)
	}
	user, _ := e.user(hoard.RoleUser)
	admin, _ := e.user(hoard.RoleAdmin)
	c := e.session(admin)
	notify := func(typ hoard.NotificationType, packageID int64) *hoard.Notification {
		t.Helper()
		n := &hoard.Notification{Type: typ, Severity: hoard.SeverityError, Title: string(typ) + fmt.Sprint(packageID),
			PackageID: packageID, DedupKey: fmt.Sprint(typ, packageID)}
		if _, err := e.db.CreateNotification(ctx, n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	missing := notify(hoard.NotifyMissingPart, pk["Red Dragon Pack.zip"].ID)
	mismatch := notify(hoard.NotifyHashMismatch, pk["Knight Helmet.rar"].ID)
	lost := notify(hoard.NotifyChannelAccessLost, 0)
	noPackage := notify(hoard.NotifyMissingPart, 0)
	noSource := notify(hoard.NotifyHashMismatch, manual.ID)
	dismissed := notify(hoard.NotifyMissingPart, pk["Dragon_Bust_v2.stl"].ID)
	if err := e.db.DismissNotification(ctx, dismissed.ID); err != nil {
		t.Fatal(err)
	}

	refusals := []struct {
		name, body string
		cookie     *http.Cookie
		want       int
	}{
		{"USER", fmt.Sprintf(`{"notification_id":%d}`, missing.ID), e.session(user), 403},
		{"empty", `{}`, c, 422},
		{"negative", `{"notification_id":-1}`, c, 422},
		{"not json", `not json`, c, 422},
		{"unknown field", `{"id":1}`, c, 422},
		{"unknown notification", `{"notification_id":999999}`, c, 404},
		{"dismissed", fmt.Sprintf(`{"notification_id":%d}`, dismissed.ID), c, 404},
		{"not repairable type", fmt.Sprintf(`{"notification_id":%d}`, lost.ID), c, 422},
		{"no package", fmt.Sprintf(`{"notification_id":%d}`, noPackage.ID), c, 422},
		{"no source message", fmt.Sprintf(`{"notification_id":%d}`, noSource.ID), c, 422},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := e.postJSON("/api/notifications/repair", tc.body, tc.cookie)
			if resp.StatusCode != tc.want {
				t.Fatalf("= %d, want %d: %s", resp.StatusCode, tc.want, body)
			}
			var shape struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			if err := json.Unmarshal([]byte(body), &shape); err != nil || shape.Error.Code == "" || shape.Error.Message == "" {
				t.Fatalf("not the JSON error shape: %s", body)
			}
		})
	}
	if resp, body := e.do(nil, "POST", "/api/notifications/repair", url.Values{"notification_id": {"abc"}}, c); resp.StatusCode != 422 {
		t.Fatalf("form with a bad id = %d %s", resp.StatusCode, body)
	}
	if got := e.jobs("repair_package"); len(got) != 0 {
		t.Fatalf("refused repairs queued %+v", got)
	}
	for _, id := range []int64{missing.ID, lost.ID, noSource.ID} {
		if n, _ := e.db.FindNotification(ctx, id); n.IsRead {
			t.Fatalf("a refused repair marked notification %d read", id)
		}
	}

	// JSON: the job is queued and the notification read.
	resp, body := e.postJSON("/api/notifications/repair", fmt.Sprintf(`{"notification_id":%d}`, missing.ID), c)
	if resp.StatusCode != 202 || !strings.Contains(body, fmt.Sprintf(`"package_id":%d`, missing.PackageID)) || !strings.Contains(body, `"queued":true`) {
		t.Fatalf("repair = %d %s", resp.StatusCode, body)
	}
	jobs := e.jobs("repair_package")
	if len(jobs) != 1 || jobs[0].Queue != hoard.QueueMaintenance || jobs[0].Args["package_id"] != float64(missing.PackageID) {
		t.Fatalf("repair_package jobs = %+v", jobs)
	}
	if n, _ := e.db.FindNotification(ctx, missing.ID); !n.IsRead {
		t.Fatal("repaired notification still unread")
	}

	// The notifications page offers Repair on repairable notifications only,
	// and its form returns to the page with a notice.
	_, body = e.do(nil, "GET", "/notifications", nil, c)
	if strings.Count(body, `action="/api/notifications/repair?from=page"`) != 3 || // missing, mismatch, noSource (package, repairable type)
		!strings.Contains(body, fmt.Sprintf(`name="notification_id" value="%d"`, mismatch.ID)) ||
		strings.Contains(body, fmt.Sprintf(`name="notification_id" value="%d"`, lost.ID)) {
		t.Fatalf("repair buttons on the notifications page are wrong")
	}
	resp, _ = e.do(nil, "POST", "/api/notifications/repair?from=page", url.Values{"notification_id": {fmt.Sprint(mismatch.ID)}}, c)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/notifications?done=repair" {
		t.Fatalf("form repair = %d → %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if got := e.jobs("repair_package"); len(got) != 2 || got[1].Args["package_id"] != float64(mismatch.PackageID) {
		t.Fatalf("repair_package jobs after the form = %+v", got)
	}
	if _, body = e.do(nil, "GET", "/notifications?done=repair", nil, c); !strings.Contains(body, "Repair queued") {
		t.Fatal("notifications page lacks the notice")
	}
	// A page form that fails shows an error page, not JSON.
	resp, body = e.do(nil, "POST", "/api/notifications/repair?from=page", url.Values{"notification_id": {fmt.Sprint(lost.ID)}}, c)
	if resp.StatusCode != 422 || !strings.Contains(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(body, "MISSING_PART") {
		t.Fatalf("failed form repair = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

func TestRepairFromPackagePage(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pk := e.seedCatalog()
	p := pk["Red Dragon Pack.zip"]
	manual := &hoard.Package{FileName: "Uploaded.zip", FileSize: 9, ArchiveType: hoard.ArchiveZIP, ContentHash: strings.Repeat("f", 64)}
	if err := e.db.CreatePackage(ctx, manual); err != nil {
		t.Fatal(err)
	}
	user, _ := e.user(hoard.RoleUser)
	admin, _ := e.user(hoard.RoleAdmin)
	c, uc := e.session(admin), e.session(user)
	path := fmt.Sprintf("/packages/%d/repair", p.ID)

	for _, tc := range []struct {
		name, path string
		cookie     *http.Cookie
		want       int
	}{
		{"USER", path, uc, 403},
		{"unknown", "/packages/999999/repair", c, 404},
		{"no source message", fmt.Sprintf("/packages/%d/repair", manual.ID), c, 422},
	} {
		if resp, _ := e.do(nil, "POST", tc.path, url.Values{}, tc.cookie); resp.StatusCode != tc.want {
			t.Errorf("%s = %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
	}
	if got := e.jobs("repair_package"); len(got) != 0 {
		t.Fatalf("refused repairs queued %+v", got)
	}
	resp, _ := e.do(nil, "POST", path, url.Values{}, c)
	if want := fmt.Sprintf("/packages/%d?done=repair", p.ID); resp.StatusCode != 303 || resp.Header.Get("Location") != want {
		t.Fatalf("repair = %d → %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if jobs := e.jobs("repair_package"); len(jobs) != 1 || jobs[0].Args["package_id"] != float64(p.ID) {
		t.Fatalf("repair_package jobs = %+v", jobs)
	}
	if resp, body := e.postAs("application/json", path, url.Values{}, c); resp.StatusCode != 202 || !strings.Contains(body, `"queued":false`) {
		t.Fatalf("JSON repair again = %d %s", resp.StatusCode, body)
	}
	if _, body := e.do(nil, "GET", fmt.Sprintf("/packages/%d?done=repair", p.ID), nil, c); !strings.Contains(body, `action="`+path+`"`) || !strings.Contains(body, "Repair queued") {
		t.Fatal("package page lacks the Repair button or the notice for an administrator")
	}
	if _, body := e.do(nil, "GET", fmt.Sprintf("/packages/%d", p.ID), nil, uc); strings.Contains(body, "/repair") {
		t.Fatal("users see the Repair button")
	}
	if _, body := e.do(nil, "GET", fmt.Sprintf("/packages/%d", manual.ID), nil, c); strings.Contains(body, "/repair") {
		t.Fatal("a package without a source message offers Repair")
	}
}

func TestRetrySkipped(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ch := &hoard.Channel{PlatformID: 51, Title: "Flaky", Kind: hoard.ChannelSource}
	if err := e.db.UpsertChannel(ctx, ch); err != nil {
		t.Fatal(err)
	}
	sk := &hoard.SkippedPackage{SourceChannelID: ch.ID, SourceMessageID: 88, FileName: "gave-up.zip", Reason: hoard.SkipDownloadFailed,
		Status: hoard.SkipGaveUp, AttemptCount: 5, MaxAttempts: 5, LastError: "stalled"}
	if err := e.db.UpsertSkippedPackage(ctx, sk); err != nil {
		t.Fatal(err)
	}
	user, _ := e.user(hoard.RoleUser)
	admin, _ := e.user(hoard.RoleAdmin)
	c := e.session(admin)
	path := fmt.Sprintf("/skipped/%d/retry", sk.ID)

	if resp, _ := e.do(nil, "POST", path, url.Values{}, e.session(user)); resp.StatusCode != 403 {
		t.Fatalf("USER retry = %d", resp.StatusCode)
	}
	if resp, _ := e.do(nil, "POST", "/skipped/999999/retry", url.Values{}, c); resp.StatusCode != 404 {
		t.Fatalf("unknown retry = %d", resp.StatusCode)
	}
	if resp, body := e.postAs("application/json", "/skipped/0/retry", url.Values{}, c); resp.StatusCode != 404 || !strings.Contains(body, `"code":"not_found"`) {
		t.Fatalf("JSON retry of id 0 = %d %s", resp.StatusCode, body)
	}
	if got := e.jobs("retry_skipped"); len(got) != 0 {
		t.Fatalf("refused retries queued %+v", got)
	}

	// The tab lists the record with its channel, counts, error and dates,
	// and a Retry form that returns to the same filtered tab.
	_, body := e.do(nil, "GET", "/?tab=skipped&reason=DOWNLOAD_FAILED", nil, c)
	for _, want := range []string{"gave-up.zip", "Flaky / 88", "5/5", "stalled", "SKIPPED", `action="` + path + `"`,
		`name="back" value="/?reason=DOWNLOAD_FAILED&amp;tab=skipped"`, sk.CreatedAt.UTC().Format("2006-01-02")} {
		if !strings.Contains(body, want) {
			t.Fatalf("skipped tab lacks %q", want)
		}
	}
	resp, _ := e.do(nil, "POST", path, url.Values{"back": {"/?reason=DOWNLOAD_FAILED&tab=skipped"}}, c)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/?done=retry&reason=DOWNLOAD_FAILED&tab=skipped" {
		t.Fatalf("retry = %d → %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	jobs := e.jobs("retry_skipped")
	if len(jobs) != 1 || jobs[0].Queue != hoard.QueueMaintenance || jobs[0].Args["skipped_id"] != float64(sk.ID) {
		t.Fatalf("retry_skipped jobs = %+v", jobs)
	}
	if _, body := e.do(nil, "GET", "/?done=retry&tab=skipped", nil, c); !strings.Contains(body, "Retry queued") {
		t.Fatal("skipped tab lacks the notice")
	}
	if resp, body := e.postAs("application/json", path, url.Values{}, c); resp.StatusCode != 202 || !strings.Contains(body, `"queued":false`) {
		t.Fatalf("JSON retry again = %d %s", resp.StatusCode, body)
	}
}
