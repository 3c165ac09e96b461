package web

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/queue"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// BenchmarkCatalogLoad serves the catalog page and GET /api/packages?q= to
// 50 concurrent clients over loopback, against a generated catalog of
// HOARD_BENCH_PACKAGES packages (default 1,000,000; HOARD_BENCH_DB_URL keeps
// one between runs), and reports p50/p95/p99 latency and throughput per
// endpoint, with the search cache on (the default) and off, for two client
// models (see below).
//
// HOARD_BENCH_GATE sets the admission gate (Deps.MaxConcurrentRequests; -1
// for none) and HOARD_BENCH_QUERIES the number of distinct searches.
//
// The searches are drawn from 1,000 distinct ones (the catalog's words,
// pairs of them, two-letter prefixes and the generated vocabulary's
// syllable words) with Zipf-skewed popularity (s = 1.1), as search logs
// are: the popular ones come back within the cache's TTL, the long tail
// does not (the cache's hit ratio is reported).
func BenchmarkCatalogLoad(b *testing.B) {
	ctx := context.Background()
	db := storetest.CatalogDB(b, storetest.BenchPackages(), 20)
	client, token := benchClient(b, db)
	nq := 1000
	if v, err := strconv.Atoi(os.Getenv("HOARD_BENCH_QUERIES")); err == nil && v > 0 {
		nq = v
	}
	queries := benchQueries(nq)
	// Warm PostgreSQL's buffers with every search once (straight through
	// the store: the web's own cache starts cold in every run below).
	for _, q := range queries {
		for _, tab := range []bool{false, true} {
			if _, err := db.SearchPackages(ctx, store.SearchQuery{Text: q, GroupRows: tab}); err != nil {
				b.Fatal(err)
			}
		}
	}
	endpoints := []struct {
		name string
		path func(r *rand.Rand, z *rand.Zipf) string
	}{
		{"catalog_page", func(*rand.Rand, *rand.Zipf) string { return "/" }},
		{"catalog_page_q", func(_ *rand.Rand, z *rand.Zipf) string { return "/?q=" + url.QueryEscape(queries[z.Uint64()]) }},
		{"api_packages_q", func(_ *rand.Rand, z *rand.Zipf) string {
			return "/api/packages?q=" + url.QueryEscape(queries[z.Uint64()])
		}},
	}
	gate, _ := strconv.Atoi(os.Getenv("HOARD_BENCH_GATE")) // the admission gate's size: 0 default, -1 none
	wrk, _ := exec.LookPath("wrk")
	if os.Getenv("HOARD_BENCH_LOADGEN") == "go" {
		wrk = ""
	}
	for _, cache := range []struct {
		name string
		ttl  time.Duration
	}{{"cache", 0}, {"nocache", -1}} {
		ts, srv, stop := startBenchServer(b, Deps{DB: db, Queue: client, SearchCacheTTL: cache.ttl, MaxConcurrentRequests: gate})
		cookie := &http.Cookie{Name: srv.cookieName(), Value: token}
		// Client models. "saturated": every client sends its next request
		// the moment the last one answers (no think time), which measures
		// the machine's throughput; with 50 clients the mean latency is
		// then 50 ÷ throughput by Little's law. It starts with an empty
		// search cache; "saturated-warm" follows it with other draws from
		// the same searches, as a server that has been up a while sees.
		// wrk (Debian's package) generates both when installed, a Go client
		// otherwise (HOARD_BENCH_LOADGEN=go forces it), which costs the
		// shared cores more. "browsing": 50 users who each wait a random
		// 0.5–1.5 s between requests, as people reading a page do (about
		// 50 requests/s in all): the latency a user sees.
		models := []string{"saturated", "saturated-warm", "browsing"}
		if cache.ttl < 0 {
			models = models[:1]
		}
		for i, ep := range endpoints {
			for _, model := range models {
				b.Run(cache.name+"/"+model+"/"+ep.name, func(b *testing.B) {
					for range b.N {
					}
					if model != "saturated-warm" {
						srv.searches.forget() // start cold
					}
					h0, m0 := srv.searches.hits.Load(), srv.searches.misses.Load()
					var st loadStats
					seed := uint64(10*i + len(model)) // another sequence of searches in every run
					if model != "browsing" && wrk != "" {
						st = wrkLoad(b, nq, seed, wrk, ts.URL, cookie, ep.path)
					} else {
						st = goLoad(b, nq, seed, ts.URL, cookie, model == "browsing", ep.path)
					}
					b.ReportMetric(st.p50, "p50-ms")
					b.ReportMetric(st.p95, "p95-ms")
					b.ReportMetric(st.p99, "p99-ms")
					b.ReportMetric(st.rps, "req/s")
					if h, m := srv.searches.hits.Load()-h0, srv.searches.misses.Load()-m0; h+m > 0 {
						b.ReportMetric(100*float64(h)/float64(h+m), "cache-hit-%")
					}
					b.ReportMetric(0, "ns/op")
				})
			}
		}
		stop()
	}
}

// benchClient returns an insert-only queue client on db and the session
// token of a new user, for the benchmarks' servers and clients.
func benchClient(b *testing.B, db *store.DB) (*queue.Client, string) {
	ctx := context.Background()
	client, err := queue.NewInsertOnly(db.Pool(), quietLogger())
	if err != nil {
		b.Fatal(err)
	}
	hash, _ := hashPassword(ctx, "bench password")
	u, err := db.CreateUser(ctx, fmt.Sprintf("bench-%d@example.com", time.Now().UnixNano()), hash, hoard.RoleUser)
	if err != nil {
		b.Fatal(err)
	}
	token := fmt.Sprintf("bench-token-%d", time.Now().UnixNano())
	if err := db.CreateSession(ctx, &hoard.Session{ID: sessionID(token), UserID: u.ID, ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		b.Fatal(err)
	}
	return client, token
}

// startBenchServer starts the web application with deps (logger, app URL
// and upload settings filled in) on a loopback listener; stop ends it.
func startBenchServer(b *testing.B, deps Deps) (ts *httptest.Server, srv *Server, stop func()) {
	ts = httptest.NewUnstartedServer(nil)
	deps.Logger, deps.AppURL = quietLogger(), "http://"+ts.Listener.Addr().String()
	deps.UploadDir, deps.MaxUploadBytes = b.TempDir(), 1<<20
	srv, err := New(deps)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := srv.Start(ctx); err != nil {
		b.Fatal(err)
	}
	ts.Config.Handler = srv
	ts.Start()
	return ts, srv, func() { ts.Close(); cancel() }
}

// loadStats is what a load run measured: latency percentiles in ms and
// throughput.
type loadStats struct{ p50, p95, p99, rps float64 }

const loadClients = 50

// newZipf returns the popularity distribution of the benchmark's searches.
func newZipf(r *rand.Rand, n int) *rand.Zipf { return rand.NewZipf(r, 1.1, 1, uint64(max(n, 2)-1)) }

// goLoad runs 50 Go clients of 40 requests each; browsing clients pause
// 0.5–1.5 s between requests.
func goLoad(b *testing.B, nq int, seed uint64, base string, cookie *http.Cookie, browsing bool, path func(*rand.Rand, *rand.Zipf) string) loadStats {
	const perClient = 40
	tr := &http.Transport{MaxIdleConnsPerHost: loadClients, MaxConnsPerHost: loadClients}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	think := func(r *rand.Rand) time.Duration {
		if !browsing {
			return 0
		}
		return 500*time.Millisecond + time.Duration(r.Int64N(int64(time.Second)))
	}
	var mu sync.Mutex
	var lat []time.Duration
	var failures int
	start := time.Now()
	var wg sync.WaitGroup
	for c := range loadClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(c), seed))
			z := newZipf(r, nq)
			time.Sleep(think(r)) // spread the users' first requests
			for range perClient {
				req, _ := http.NewRequest("GET", base+path(r, z), nil)
				req.AddCookie(cookie)
				t0 := time.Now()
				resp, err := hc.Do(req)
				d := time.Since(t0)
				ok := err == nil && resp.StatusCode == 200
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				mu.Lock()
				lat = append(lat, d)
				if !ok {
					failures++
				}
				mu.Unlock()
				time.Sleep(think(r))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if failures > 0 {
		b.Fatalf("%d of %d requests failed", failures, len(lat))
	}
	slices.Sort(lat)
	ms := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000 }
	return loadStats{ms(0.50), ms(0.95), ms(0.99), float64(len(lat)) / elapsed.Seconds()}
}

// wrkLoad runs wrk with 50 connections on 2 threads for 10 s over a
// sequence of 20,000 paths drawn from path, and reads the percentiles its
// script prints.
func wrkLoad(b *testing.B, nq int, seed uint64, wrk, base string, cookie *http.Cookie, path func(*rand.Rand, *rand.Zipf) string) loadStats {
	r := rand.New(rand.NewPCG(1, seed))
	z := newZipf(r, nq)
	var script strings.Builder
	script.WriteString("paths = {\n")
	for range 20000 {
		fmt.Fprintf(&script, "%q,\n", path(r, z))
	}
	script.WriteString(`}
local i = 0
function init(args) i = math.random(#paths) end
function request()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT %d %d %d %d %d %d\n", summary.requests, summary.duration,
    e.connect + e.read + e.write + e.timeout + e.status,
    latency:percentile(50), latency:percentile(95), latency:percentile(99)))
end
`)
	file := filepath.Join(b.TempDir(), "load.lua")
	if err := os.WriteFile(file, []byte(script.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	out, err := exec.Command(wrk, "-t2", fmt.Sprintf("-c%d", loadClients), "-d10s", "--timeout", "10s",
		"-H", "Cookie: "+cookie.String(), "-s", file, base+"/").CombinedOutput()
	if err != nil {
		b.Fatalf("wrk: %v\n%s", err, out)
	}
	i := strings.Index(string(out), "RESULT ")
	if i < 0 {
		b.Fatalf("wrk printed no result:\n%s", out)
	}
	var requests, micros, failures, p50, p95, p99 int64
	if _, err := fmt.Sscanf(string(out[i:]), "RESULT %d %d %d %d %d %d", &requests, &micros, &failures, &p50, &p95, &p99); err != nil {
		b.Fatalf("wrk result: %v\n%s", err, out)
	}
	if failures > 0 || requests == 0 {
		b.Fatalf("wrk: %d of %d requests failed\n%s", failures, requests, out)
	}
	return loadStats{float64(p50) / 1000, float64(p95) / 1000, float64(p99) / 1000, float64(requests) / (float64(micros) / 1e6)}
}

// benchQueries returns n distinct searches over the generated catalog's
// vocabulary (storetest.GenerateCatalog), the most popular first: its
// words, pairs of them, two-letter prefixes, and words made of the
// generator's syllables, which also fill the long tail.
func benchQueries(n int) []string {
	real, syl := storetest.CatalogWords, storetest.CatalogSyllables
	out := []string{"dragon", "knight bust", "quetzalcoatl", "dr"}
	seen := map[string]bool{}
	add := func(q string) {
		if !seen[q] && len(out) < n {
			seen[q] = true
			out = append(out, q)
		}
	}
	for _, q := range out {
		seen[q] = true
	}
	r := rand.New(rand.NewPCG(3, 9))
	for len(out) < n {
		switch r.IntN(4) {
		case 0:
			add(real[r.IntN(len(real))])
		case 1:
			add(real[r.IntN(len(real))] + " " + real[r.IntN(len(real))])
		case 2:
			s := syl[r.IntN(len(syl))]
			add(s[:2])
		default:
			add(syl[r.IntN(len(syl))] + syl[r.IntN(len(syl))])
		}
	}
	return out
}
