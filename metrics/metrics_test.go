package metrics

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/metrics/metricstest"
)

// scrape serves m's handler once and parses the answer as Prometheus
// would (no duplicate series, no lint problems).
func scrape(t *testing.T, m *Metrics) metricstest.Scrape {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	s, err := metricstest.Parse(rec.Body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// key is metricstest.SeriesKey with labels given as pairs.
func key(name string, pairs ...string) string {
	labels := map[string]string{}
	for i := 0; i+1 < len(pairs); i += 2 {
		labels[pairs[i]] = pairs[i+1]
	}
	return metricstest.SeriesKey(name, labels)
}

func TestObserversRecordWhatTheyAreTold(t *testing.T) {
	tests := []struct {
		name   string
		do     func(m *Metrics)
		metric string
		want   map[string]float64 // every series of metric
	}{
		{"job durations by kind, queue and outcome", func(m *Metrics) {
			m.JobWorked("scan_channel", "ingest", "completed", 2*time.Second)
			m.JobWorked("scan_channel", "ingest", "completed", 3*time.Second)
			m.JobWorked("upload_part", "transfer", "snoozed", time.Second)
		}, "hoard_job_duration_seconds_sum", map[string]float64{
			key("hoard_job_duration_seconds_sum", "kind", "scan_channel", "queue", "ingest", "outcome", "completed"): 5,
			key("hoard_job_duration_seconds_sum", "kind", "upload_part", "queue", "transfer", "outcome", "snoozed"):  1,
		}},
		{"job counts", func(m *Metrics) {
			m.JobWorked("scan_channel", "ingest", "completed", 2*time.Second)
			m.JobWorked("scan_channel", "ingest", "failed", 3*time.Second)
			m.JobWorked("scan_channel", "ingest", "failed", 3*time.Second)
		}, "hoard_job_duration_seconds_count", map[string]float64{
			key("hoard_job_duration_seconds_count", "kind", "scan_channel", "queue", "ingest", "outcome", "completed"): 1,
			key("hoard_job_duration_seconds_count", "kind", "scan_channel", "queue", "ingest", "outcome", "failed"):    2,
		}},
		{"ingestion bytes by direction", func(m *Metrics) {
			m.Downloaded(100)
			m.Downloaded(50)
			m.Uploaded(30)
		}, "hoard_ingest_bytes_total", map[string]float64{
			key("hoard_ingest_bytes_total", "direction", "downloaded"): 150,
			key("hoard_ingest_bytes_total", "direction", "uploaded"):   30,
			key("hoard_ingest_bytes_total", "direction", "resent"):     0,
		}},
		{"packages indexed", func(m *Metrics) {
			m.Indexed()
			m.Indexed()
		}, "hoard_ingest_packages_indexed_total", map[string]float64{"hoard_ingest_packages_indexed_total": 2}},
		{"duplicates by rule, an unknown rule as other", func(m *Metrics) {
			m.Duplicate(RuleRemoteID)
			m.Duplicate(RuleContentHash)
			m.Duplicate(RuleContentHash)
			m.Duplicate("by magic")
		}, "hoard_ingest_duplicates_total", map[string]float64{
			key("hoard_ingest_duplicates_total", "rule", "remote_unique_id"): 1,
			key("hoard_ingest_duplicates_total", "rule", "source_message"):   0,
			key("hoard_ingest_duplicates_total", "rule", "name_and_size"):    0,
			key("hoard_ingest_duplicates_total", "rule", "content_hash"):     2,
			key("hoard_ingest_duplicates_total", "rule", "other"):            1,
		}},
		{"skipped by reason, an unknown reason as OTHER", func(m *Metrics) {
			m.Skipped(hoard.SkipHashMismatch)
			m.Skipped(hoard.SkipReason("SOLAR_FLARE"))
		}, "hoard_ingest_skipped_total", func() map[string]float64 {
			want := map[string]float64{}
			for _, r := range hoard.SkipReasons {
				want[key("hoard_ingest_skipped_total", "reason", string(r))] = 0
			}
			want[key("hoard_ingest_skipped_total", "reason", "HASH_MISMATCH")] = 1
			want[key("hoard_ingest_skipped_total", "reason", "OTHER")] = 1
			return want
		}()},
		{"platform requests by account and method", func(m *Metrics) {
			acc := m.Platform("7")
			acc.Request("messages.getHistory")
			acc.Request("messages.getHistory")
			m.Platform("bot").Request("messages.sendMessage")
		}, "hoard_platform_requests_total", map[string]float64{
			key("hoard_platform_requests_total", "account", "7", "method", "messages.getHistory"):    2,
			key("hoard_platform_requests_total", "account", "bot", "method", "messages.sendMessage"): 1,
		}},
		{"flood waits", func(m *Metrics) {
			acc := m.Platform("7")
			acc.FloodWait("upload.getFile", 3*time.Second)
			acc.FloodWait("upload.getFile", 1500*time.Millisecond)
		}, "hoard_platform_flood_waits_total", map[string]float64{
			key("hoard_platform_flood_waits_total", "account", "7", "method", "upload.getFile"): 2,
		}},
		{"flood wait seconds per account", func(m *Metrics) {
			m.Platform("7").FloodWait("upload.getFile", 3*time.Second)
			m.Platform("7").FloodWait("messages.getHistory", 1500*time.Millisecond)
			m.Platform("8")
		}, "hoard_platform_flood_wait_seconds_total", map[string]float64{
			key("hoard_platform_flood_wait_seconds_total", "account", "7"): 4.5,
			key("hoard_platform_flood_wait_seconds_total", "account", "8"): 0,
		}},
		{"transfer bytes by direction", func(m *Metrics) {
			acc := m.Platform("7")
			acc.Downloaded(1 << 20)
			acc.Downloaded(1 << 20)
			acc.Uploaded(512 << 10)
		}, "hoard_platform_transfer_bytes_total", map[string]float64{
			key("hoard_platform_transfer_bytes_total", "account", "7", "direction", "download"): 2 << 20,
			key("hoard_platform_transfer_bytes_total", "account", "7", "direction", "upload"):   512 << 10,
		}},
		{"searches by cache outcome", func(m *Metrics) {
			m.Search(true, time.Millisecond)
			m.Search(true, time.Millisecond)
			m.Search(false, 20*time.Millisecond)
		}, "hoard_search_duration_seconds_count", map[string]float64{
			key("hoard_search_duration_seconds_count", "cache", "hit"):  2,
			key("hoard_search_duration_seconds_count", "cache", "miss"): 1,
		}},
		{"web requests by route pattern, method and status class", func(m *Metrics) {
			m.HTTPRequest("/packages/{id}", "GET", 200, time.Millisecond)
			m.HTTPRequest("/packages/{id}", "GET", 204, time.Millisecond)
			m.HTTPRequest("", "GET", 404, time.Millisecond)
			m.HTTPRequest("/login", "BREW", 503, time.Millisecond)
			m.HTTPRequest("/login", "post", 303, time.Millisecond)
		}, "hoard_http_request_duration_seconds_count", map[string]float64{
			key("hoard_http_request_duration_seconds_count", "route", "/packages/{id}", "method", "GET", "code", "2xx"): 2,
			key("hoard_http_request_duration_seconds_count", "route", "unmatched", "method", "GET", "code", "4xx"):      1,
			key("hoard_http_request_duration_seconds_count", "route", "/login", "method", "OTHER", "code", "5xx"):       1,
			key("hoard_http_request_duration_seconds_count", "route", "/login", "method", "POST", "code", "3xx"):        1,
		}},
		{"bot commands", func(m *Metrics) {
			m.BotCommand("search")
			m.BotCommand("search")
			m.BotCommand("button")
		}, "hoard_bot_commands_total", map[string]float64{
			key("hoard_bot_commands_total", "command", "search"): 2,
			key("hoard_bot_commands_total", "command", "button"): 1,
		}},
		{"bot deliveries", func(m *Metrics) {
			m.BotDelivery("sent", 1)
			m.BotDelivery("sent", 2)
			m.BotDelivery("blocked", 1)
		}, "hoard_bot_deliveries_total", map[string]float64{
			key("hoard_bot_deliveries_total", "outcome", "sent"):    3,
			key("hoard_bot_deliveries_total", "outcome", "blocked"): 1,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(Options{Version: "test"})
			tt.do(m)
			got := scrape(t, m).Series(tt.metric, nil)
			if !maps.Equal(got, tt.want) {
				t.Errorf("%s:\n got  %v\n want %v", tt.metric, got, tt.want)
			}
		})
	}
}

func TestRegistryHasRuntimeAndBuildInfo(t *testing.T) {
	s := scrape(t, New(Options{Version: "v1.2.3"}))
	for _, family := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "process_start_time_seconds",
		"process_resident_memory_bytes", "hoard_build_info"} {
		if s.Families[family] == nil {
			t.Errorf("no %s in the scrape", family)
		}
	}
	if got := s.Series("hoard_build_info", map[string]string{"version": "v1.2.3"}); len(got) != 1 {
		t.Errorf("hoard_build_info of v1.2.3: %v", got)
	}
}

func TestSeveralRegistriesLiveSideBySide(t *testing.T) {
	a, b := New(Options{}), New(Options{})
	a.Indexed()
	if got := scrape(t, b).Sum("hoard_ingest_packages_indexed_total", nil); got != 0 {
		t.Errorf("b counted a's package: %v", got)
	}
}

func TestJobsCollector(t *testing.T) {
	counts := []JobCount{
		{Kind: "scan_channel", State: "available", Count: 3},
		{Kind: "scan_channel", State: "pending", Count: 2},
		{Kind: "scan_channel", State: "running", Count: 1},
		{Kind: "ingest_message", State: "retryable", Count: 4},
		{Kind: "ingest_message", State: "discarded", Count: 5},
		{Kind: "ingest_message", State: "scheduled", Count: 6},
		{Kind: "ingest_message", State: "completed", Count: 100}, // history: not reported
	}
	tests := []struct {
		name   string
		count  CountJobsFunc
		want   map[string]float64
		wantOK float64
	}{
		{"states by kind, zeros included", func(context.Context) ([]JobCount, error) { return counts, nil }, map[string]float64{
			key("hoard_river_jobs", "kind", "scan_channel", "state", "queued"):      5,
			key("hoard_river_jobs", "kind", "scan_channel", "state", "scheduled"):   0,
			key("hoard_river_jobs", "kind", "scan_channel", "state", "running"):     1,
			key("hoard_river_jobs", "kind", "scan_channel", "state", "retryable"):   0,
			key("hoard_river_jobs", "kind", "scan_channel", "state", "discarded"):   0,
			key("hoard_river_jobs", "kind", "ingest_message", "state", "queued"):    0,
			key("hoard_river_jobs", "kind", "ingest_message", "state", "scheduled"): 6,
			key("hoard_river_jobs", "kind", "ingest_message", "state", "running"):   0,
			key("hoard_river_jobs", "kind", "ingest_message", "state", "retryable"): 4,
			key("hoard_river_jobs", "kind", "ingest_message", "state", "discarded"): 5,
		}, 1},
		{"no jobs", func(context.Context) ([]JobCount, error) { return nil, nil }, map[string]float64{}, 1},
		{"a failed query leaves the series out and says so", func(context.Context) ([]JobCount, error) {
			return nil, errors.New("connection refused")
		}, map[string]float64{}, 0},
		{"a query past the scrape's time is cut off", func(ctx context.Context) ([]JobCount, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}, map[string]float64{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(Options{CountJobs: tt.count, Logger: discard()})
			s := scrape(t, m)
			if got := s.Series("hoard_river_jobs", nil); !maps.Equal(got, tt.want) {
				t.Errorf("hoard_river_jobs:\n got  %v\n want %v", got, tt.want)
			}
			if got := s.Series("hoard_metrics_collector_success", nil); !maps.Equal(got,
				map[string]float64{key("hoard_metrics_collector_success", "collector", "river_jobs"): tt.wantOK}) {
				t.Errorf("collector success = %v, want %v", got, tt.wantOK)
			}
		})
	}
}

func TestSpoolCollector(t *testing.T) {
	dir := t.TempDir()
	write := func(rel string, size int) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, size), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	// Whole 4 KiB blocks, written: allocated as they are long.
	write("1/10/part-000", 8192)
	write("1/10/part-001", 3*4096)
	write("2/20/part-000", 4096)
	// A sparse file (a download's chunks not written yet) uses no disk.
	f, err := os.Create(filepath.Join(dir, "2", "20", "part-001"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()

	tests := []struct {
		name string
		dir  string
		want map[string]float64
	}{
		{"files and their allocated bytes", dir, map[string]float64{"hoard_spool_bytes": 8192 + 3*4096 + 4096, "hoard_spool_files": 4}},
		{"no spool yet", filepath.Join(dir, "missing"), map[string]float64{"hoard_spool_bytes": 0, "hoard_spool_files": 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := scrape(t, New(Options{SpoolDir: tt.dir}))
			got := map[string]float64{"hoard_spool_bytes": s.Sum("hoard_spool_bytes", nil), "hoard_spool_files": s.Sum("hoard_spool_files", nil)}
			if !maps.Equal(got, tt.want) {
				t.Errorf("spool: got %v, want %v", got, tt.want)
			}
		})
	}

	t.Run("the walk stops at its bound", func(t *testing.T) {
		_, files, err := spoolUsage(dir, 3)
		if !errors.Is(err, errSpoolTooBig) || files > 3 {
			t.Errorf("spoolUsage with a bound of 3 entries: %d files, err %v", files, err)
		}
		m := New(Options{Logger: discard()})
		c := newSpoolCollector(dir, discard())
		c.limit = 3
		m.reg.MustRegister(c)
		s := scrape(t, m)
		got := map[string]float64{"files": s.Sum("hoard_spool_files", nil),
			"success": s.Sum("hoard_metrics_collector_success", map[string]string{"collector": "spool"})}
		if want := map[string]float64{"files": float64(files), "success": 0}; !maps.Equal(got, want) {
			t.Errorf("a bounded walk: got %v, want %v (a lower bound, reported as a failure)", got, want)
		}
	})
}

func TestServeAnswersOnlyMetrics(t *testing.T) {
	m := New(Options{Version: "test"})
	ln, err := m.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- m.Serve(ctx, ln) }()
	base := "http://" + ln.Addr().String()

	tests := []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, "/metrics", http.StatusOK},
		{http.MethodGet, "/", http.StatusNotFound},
		{http.MethodGet, "/debug/pprof/", http.StatusNotFound},
		{http.MethodPost, "/metrics", http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, base+tt.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s %s = %d, want %d", tt.method, tt.path, resp.StatusCode, tt.want)
		}
		if tt.want == http.StatusOK && !strings.Contains(string(body), "hoard_build_info") {
			t.Errorf("%s %s: no hoard_build_info in\n%s", tt.method, tt.path, body)
		}
	}
	if _, err := metricstest.Get(ctx, base+"/metrics"); err != nil {
		t.Error(err)
	}
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve after ctx ended: %v", err)
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
