package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/metrics/metricstest"
	"github.com/hoard/hoard/store/storetest"
	"github.com/riverqueue/river/rivertype"
)

// boundedLabels are every label name hoard's own metrics may carry: none
// names a package, a user, a chat or a path.
var boundedLabels = []string{"account", "cache", "code", "collector", "command", "direction", "goversion", "kind",
	"method", "outcome", "queue", "reason", "route", "rule", "state", "version"}

// checkBoundedLabels fails on a hoard_ metric with a label outside
// boundedLabels.
func checkBoundedLabels(t *testing.T, s metricstest.Scrape) {
	t.Helper()
	for name, f := range s.Families {
		if !strings.HasPrefix(name, "hoard_") {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if !slices.Contains(boundedLabels, l.GetName()) && l.GetName() != "le" {
					t.Errorf("%s has label %s=%q, which is not one of the bounded labels", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
}

// runOnceScraped runs `hoard demo --once --linger` with METRICS_ADDR, waits
// for the summary, scrapes the final metrics, interrupts the process and
// checks it exits 0.
func runOnceScraped(t *testing.T, vars map[string]string, seed string) (onceSummary, metricstest.Scrape) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	vars = maps.Clone(vars)
	vars["METRICS_ADDR"] = "127.0.0.1:0"
	cmd, stdout, stderr := hoardCmd(ctx, vars, "demo", "--once", "--linger", "--seed", seed)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var url, summary string
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for summary == "" {
		select {
		case err := <-exited:
			t.Fatalf("demo --once --linger exited (%v) before it was interrupted\nstdout:\n%s\nstderr:\n%s", err, stdout, tail(stderr.String(), 6000))
		case <-ctx.Done():
			t.Fatalf("no summary\nstdout:\n%s\nstderr:\n%s", stdout, tail(stderr.String(), 6000))
		case <-tick.C:
		}
		for _, line := range strings.Split(stdout.String(), "\n") {
			if u, ok := strings.CutPrefix(line, "Metrics: "); ok {
				url = u
			}
			if strings.HasPrefix(line, "{") {
				summary = line
			}
		}
	}
	var sum onceSummary
	if err := json.Unmarshal([]byte(summary), &sum); err != nil {
		t.Fatalf("summary: %v\n%s", err, summary)
	}
	if url == "" {
		t.Fatalf("no metrics address printed before the summary:\n%s", stdout)
	}
	scrape, err := metricstest.Get(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err != nil {
		t.Fatalf("demo --once after the interrupt: %v\n%s", err, tail(stderr.String(), 4000))
	}
	return sum, scrape
}

// TestDemoOnceMetricsMatchTheRun scrapes the metrics of one ingestion cycle
// over the ingestion world and compares them with the run's own counts
// (the summary) and with what the database holds.
func TestDemoOnceMetricsMatchTheRun(t *testing.T) {
	t.Parallel()
	const maxAttempts = 2
	w := writeIngestWorld(t, t.TempDir(), maxAttempts)
	dir := dataDir(t)
	url := storetest.URL(t)
	sum, s := runOnceScraped(t, onceVars(url, dir, maxAttempts), w.Seed)
	if sum.RunStatus != "COMPLETED" {
		t.Fatalf("run: %+v", sum)
	}
	checkBoundedLabels(t, s)
	db := readMetricsFacts(t, url)

	type figures struct {
		Indexed, Duplicates, Skipped      float64
		DuplicatesByRule, SkippedByReason map[string]float64
		Downloaded, Uploaded, Resent      float64
		Requests                          float64
		FloodWaits                        map[string]float64
		FloodSeconds                      float64
		UploadedOverPlatform              float64
		SpoolFiles, SpoolOK               float64
		Jobs                              map[string]float64
		JobsWorked                        map[string]float64
	}
	account := map[string]string{"account": db.AccountID}
	got := figures{
		Indexed:              s.Sum("hoard_ingest_packages_indexed_total", nil),
		Duplicates:           s.Sum("hoard_ingest_duplicates_total", nil),
		Skipped:              s.Sum("hoard_ingest_skipped_total", nil),
		DuplicatesByRule:     s.By("hoard_ingest_duplicates_total", "rule"),
		SkippedByReason:      s.By("hoard_ingest_skipped_total", "reason"),
		Downloaded:           s.Sum("hoard_ingest_bytes_total", map[string]string{"direction": "downloaded"}),
		Uploaded:             s.Sum("hoard_ingest_bytes_total", map[string]string{"direction": "uploaded"}),
		Resent:               s.Sum("hoard_ingest_bytes_total", map[string]string{"direction": "resent"}),
		Requests:             s.Sum("hoard_platform_requests_total", account),
		FloodWaits:           s.By("hoard_platform_flood_waits_total", "method"),
		FloodSeconds:         s.Sum("hoard_platform_flood_wait_seconds_total", account),
		UploadedOverPlatform: s.Sum("hoard_platform_transfer_bytes_total", map[string]string{"account": db.AccountID, "direction": "upload"}),
		SpoolFiles:           s.Sum("hoard_spool_files", nil),
		SpoolOK:              s.Sum("hoard_metrics_collector_success", map[string]string{"collector": "spool"}),
		Jobs:                 byKindAndState(s),
		JobsWorked:           s.By("hoard_job_duration_seconds_count", "kind"),
	}
	want := figures{
		Indexed:    float64(sum.Ingested),
		Duplicates: float64(sum.Duplicates),
		Skipped:    float64(sum.SkippedInRun),
		// The world's duplicates: a re-post of the same document and one
		// of the same name and size in Mammoth Factory's history (set
		// aside by name and size within the batch), and the same guide in
		// two channels (found by its content).
		DuplicatesByRule: map[string]float64{"name_and_size": 2, "content_hash": 1},
		SkippedByReason:  db.SkippedByReason,
		// Every package's bytes were downloaded once, and those of the
		// guide's second copy; each package was published once, re-sent
		// when its channel lets it be and it needs no split.
		Downloaded: float64(db.PackageBytes + db.DuplicateBytes),
		Uploaded:   float64(db.PackageBytes - db.ResendableBytes),
		Resent:     float64(db.ResendableBytes),
		Requests:   float64(sum.PlatformRequestsAll),
		// The world's faults: two FLOOD_WAIT_1 on download chunks, one on
		// an upload part, all slept through in place.
		FloodWaits:           map[string]float64{"upload.getFile": 2, "upload.saveFilePart": 1},
		FloodSeconds:         3,
		UploadedOverPlatform: float64(db.PackageBytes - db.ResendableBytes),
		SpoolFiles:           0,
		SpoolOK:              1,
		Jobs:                 db.Jobs,
		JobsWorked:           db.JobsWorked,
	}
	gotJSON, _ := json.MarshalIndent(got, "", "  ")
	wantJSON, _ := json.MarshalIndent(want, "", "  ")
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("metrics of the run:\n got  %s\n want %s", gotJSON, wantJSON)
	}
	if sum.Ingested == 0 || db.Packages != int64(sum.Ingested) {
		t.Errorf("the run indexed %d packages, the catalog holds %d", sum.Ingested, db.Packages)
	}
}

// byKindAndState is hoard_river_jobs as "kind/state" → count, zeros left
// out.
func byKindAndState(s metricstest.Scrape) map[string]float64 {
	out := map[string]float64{}
	for _, smp := range s.All("hoard_river_jobs", nil) {
		if smp.Value != 0 {
			out[smp.Labels["kind"]+"/"+smp.Labels["state"]] = smp.Value
		}
	}
	return out
}

// metricsFacts is what the database says about a finished run, in the terms
// of the metrics.
type metricsFacts struct {
	AccountID       string
	Packages        int64
	PackageBytes    int64 // all packages' file sizes
	ResendableBytes int64 // those of packages from unprotected channels needing no split
	DuplicateBytes  int64 // the sizes of duplicates found by content (downloaded, then left out)
	SkippedByReason map[string]float64
	Jobs            map[string]float64 // "kind/state" of River's waiting, running, retryable and discarded jobs
	JobsWorked      map[string]float64 // kind → times a job of it was worked (attempts plus snoozes)
}

func readMetricsFacts(t *testing.T, url string) metricsFacts {
	t.Helper()
	db, done := openStore(t, url)
	defer done()
	ctx := context.Background()
	f := metricsFacts{SkippedByReason: map[string]float64{}, Jobs: map[string]float64{}, JobsWorked: map[string]float64{}}
	accounts, err := db.ListAccounts(ctx)
	if err != nil || len(accounts) == 0 {
		t.Fatalf("accounts %+v, %v; want one", accounts, err)
	}
	f.AccountID = fmt.Sprint(accounts[0].ID)
	channels, err := db.ListChannels(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	protected := map[int64]bool{} // source channel id → protected, for every channel
	for _, c := range channels {
		protected[c.ID] = c.IsProtected
	}
	for _, p := range storetest.Packages(t, db) {
		isProtected, ok := protected[p.SourceChannelID]
		if !ok {
			continue // a package without a source channel is not counted
		}
		f.Packages++
		f.PackageBytes += p.FileSize
		if !isProtected && p.FileSize <= ingestThreshold {
			f.ResendableBytes += p.FileSize
		}
		// The guide's copies have equal bytes: the one catalogued has the
		// size of the one left out.
		if p.FileName == "Painting Guide.pdf" || p.FileName == "Guide Copy.pdf" {
			f.DuplicateBytes += p.FileSize
		}
	}
	for _, s := range storetest.SkippedPackages(t, db) {
		if s.Status == hoard.SkipGaveUp {
			f.SkippedByReason[string(s.Reason)]++
		}
	}
	for _, j := range storetest.Jobs(t, db, storetest.JobMatch{}) {
		switch j.State {
		case rivertype.JobStateAvailable, rivertype.JobStatePending:
			f.Jobs[j.Kind+"/queued"]++
		case rivertype.JobStateScheduled, rivertype.JobStateRunning, rivertype.JobStateRetryable, rivertype.JobStateDiscarded:
			f.Jobs[j.Kind+"/"+string(j.State)]++
		}
		snoozes, _ := j.Metadata["snoozes"].(float64)
		if worked := float64(j.Attempt) + snoozes; worked > 0 {
			f.JobsWorked[j.Kind] += worked
		}
	}
	return f
}

// TestServeExposesMetricsOnTheirOwnListener: `hoard serve` with
// METRICS_ADDR answers /metrics there, never on the web's port, and counts
// the web's requests by route pattern.
func TestServeExposesMetricsOnTheirOwnListener(t *testing.T) {
	t.Parallel()
	addr, metricsAddr := freeAddr(t), freeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, _, stderr := hoardCmd(ctx, map[string]string{
		"DATABASE_URL": storetest.URL(t), "LISTEN_ADDR": addr, "METRICS_ADDR": metricsAddr, "AUTH_SECRET": strings.Repeat("s", 40),
		"DATA_DIR": dataDir(t),
	}, "serve")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	base := "http://" + addr
	waitFor(t, base+"/healthz", 60*time.Second, stderr)
	for path, want := range map[string]int{"/metrics": http.StatusNotFound, "/packages/12345": http.StatusSeeOther} {
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s on the web's port = %d, want %d", path, resp.StatusCode, want)
		}
	}
	s, err := metricstest.Get(ctx, "http://"+metricsAddr+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	checkBoundedLabels(t, s)
	requests := map[string]float64{}
	for _, route := range s.LabelValues("hoard_http_request_duration_seconds_count", "route") {
		requests[route] = s.Sum("hoard_http_request_duration_seconds_count", map[string]string{"route": route})
	}
	if want := map[string]float64{"/healthz": requests["/healthz"], "unmatched": 1, "/packages/{id}": 1}; requests["/healthz"] < 1 || !maps.Equal(requests, want) {
		t.Errorf("requests by route = %v, want %v (and /healthz at least once)", requests, want)
	}
	for _, family := range []string{"go_goroutines", "process_resident_memory_bytes", "hoard_build_info", "hoard_spool_bytes"} {
		if s.Families[family] == nil {
			t.Errorf("no %s in the scrape", family)
		}
	}
	if got := s.Sum("hoard_metrics_collector_success", map[string]string{"collector": "river_jobs"}); got != 1 {
		t.Errorf("the River jobs collector failed: %v", got)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v", err)
	}
}
