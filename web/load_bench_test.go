package web

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/queue"
	"github.com/hoard/hoard/store/storetest"
)

// BenchmarkCatalogLoad serves the catalog page and GET /api/packages?q= to
// 50 concurrent clients over loopback, against a generated catalog of
// HOARD_BENCH_PACKAGES packages (default 1,000,000; HOARD_BENCH_DB_URL keeps
// one between runs), and reports p50/p95/p99 latency and throughput per
// endpoint, for two client models (see below). Each client sends a bounded
// number of requests.
func BenchmarkCatalogLoad(b *testing.B) {
	ctx := context.Background()
	db := storetest.CatalogDB(b, storetest.BenchPackages(), 20)
	client, err := queue.NewInsertOnly(db.Pool(), quietLogger())
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	srv, err := New(Deps{DB: db, Queue: client, Logger: quietLogger(), AppURL: "http://" + ts.Listener.Addr().String(),
		UploadDir: b.TempDir(), MaxUploadBytes: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	ts.Config.Handler = srv
	ts.Start()
	b.Cleanup(ts.Close)
	hash, _ := hashPassword(ctx, "bench password")
	u, err := db.CreateUser(ctx, fmt.Sprintf("bench-%d@example.com", time.Now().UnixNano()), hash, hoard.RoleUser)
	if err != nil {
		b.Fatal(err)
	}
	token := fmt.Sprintf("bench-token-%d", time.Now().UnixNano())
	if err := db.CreateSession(ctx, &hoard.Session{ID: sessionID(token), UserID: u.ID, ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		b.Fatal(err)
	}
	cookie := &http.Cookie{Name: srv.cookieName(), Value: token}
	queries := []string{"dragon", "knight bust", "quetzalcoatl", "dr", "castle", "mech tank", "wizard", "orc"}

	const clients, perClient = 50, 40
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	endpoints := []struct {
		name string
		path func(i int) string
	}{
		{"catalog_page", func(i int) string { return "/" }},
		{"catalog_page_q", func(i int) string { return "/?q=" + url.QueryEscape(queries[i%len(queries)]) }},
		{"api_packages_q", func(i int) string { return "/api/packages?q=" + url.QueryEscape(queries[i%len(queries)]) }},
	}
	// Two client models. "saturated": every client sends its next request
	// the moment the last one answers (no think time), which measures the
	// machine's throughput; with 50 clients the mean latency is then 50 ÷
	// throughput by Little's law, whatever the server does. "browsing": 50
	// users who each wait a random 0.5–1.5 s between requests, as people
	// reading a page do (about 50 requests/s in all): the latency a user
	// sees.
	for _, model := range []struct {
		name  string
		think func(r *rand.Rand) time.Duration
	}{
		{"saturated", func(*rand.Rand) time.Duration { return 0 }},
		{"browsing", func(r *rand.Rand) time.Duration {
			return 500*time.Millisecond + time.Duration(r.Int64N(int64(time.Second)))
		}},
	} {
		for _, ep := range endpoints {
			b.Run(model.name+"/"+ep.name, func(b *testing.B) {
				for range b.N {
				}
				var mu sync.Mutex
				var lat []time.Duration
				var failures int
				start := time.Now()
				var wg sync.WaitGroup
				for c := 0; c < clients; c++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						r := rand.New(rand.NewPCG(uint64(c), 7))
						time.Sleep(model.think(r)) // spread the users' first requests
						for i := 0; i < perClient; i++ {
							req, _ := http.NewRequest("GET", ts.URL+ep.path(c*perClient+i), nil)
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
							time.Sleep(model.think(r))
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
				b.ReportMetric(ms(0.50), "p50-ms")
				b.ReportMetric(ms(0.95), "p95-ms")
				b.ReportMetric(ms(0.99), "p99-ms")
				b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "req/s")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
