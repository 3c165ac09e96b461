package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// BenchmarkCatalogPage serves catalog pages in process (no network, no load
// generator) against a generated catalog of 20,000 packages, every search
// answered from the cache after the first: what the page costs to make
// beside its JSON, per request, with allocations. The "uncached" ones ask
// PostgreSQL every time, as a search the cache does not hold yet does:
// the page's rows are then put together again (from the cards kept by
// package). BenchmarkCatalogLoad
// measures the same pages over loopback under load. HOARD_BENCH_PAGE_DUMP=f
// writes each page once to f.<name>, to compare two versions' markup.
func BenchmarkCatalogPage(b *testing.B) {
	ctx := context.Background()
	db, err := store.Open(ctx, storetest.URL(b), store.Options{MaxConns: 8})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(db.Close)
	storetest.GenerateCatalog(b, db.Pool(), 20_000)
	client, token := benchClient(b, db)
	_, cached, stop := startBenchServer(b, Deps{DB: db, Queue: client})
	defer stop()
	_, uncached, stopUncached := startBenchServer(b, Deps{DB: db, Queue: client, SearchCacheTTL: -1})
	defer stopUncached()
	for _, path := range []struct {
		name, path string
		srv        *Server
	}{
		{"catalog_page", "/", cached},
		{"catalog_page_list", "/?view=list", cached},
		{"catalog_page_q", "/?q=dragon", cached},
		{"api_packages_q", "/api/packages?q=dragon", cached},
		{"catalog_page_q_uncached", "/?q=dragon", uncached},
		{"catalog_page_q_list_uncached", "/?q=dragon&view=list", uncached},
		{"api_packages_q_uncached", "/api/packages?q=dragon", uncached},
	} {
		srv := path.srv
		cookie := &http.Cookie{Name: srv.cookieName(), Value: token}
		b.Run(path.name, func(b *testing.B) {
			serve := func() int {
				req := httptest.NewRequest("GET", path.path, nil)
				req.AddCookie(cookie)
				w := httptest.NewRecorder()
				srv.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("GET %s: %d", path.path, w.Code)
				}
				return w.Body.Len()
			}
			serve() // the cache filled
			if f := os.Getenv("HOARD_BENCH_PAGE_DUMP"); f != "" {
				req := httptest.NewRequest("GET", path.path, nil)
				req.AddCookie(cookie)
				w := httptest.NewRecorder()
				srv.ServeHTTP(w, req)
				_ = os.WriteFile(f+"."+path.name, w.Body.Bytes(), 0o600)
			}
			b.ReportAllocs()
			cpu0 := processCPU()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					serve()
				}
			})
			b.StopTimer()
			// This process's CPU per page (PostgreSQL's is not in it): the
			// wall time per page depends on what else the cores run.
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// processCPU returns the CPU time this process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
