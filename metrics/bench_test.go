package metrics

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkHTTPRequest is what the web's middleware adds to a request.
func BenchmarkHTTPRequest(b *testing.B) {
	m := New(Options{})
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.HTTPRequest("/packages/{id}", "GET", 200, 3*time.Millisecond)
		}
	})
}

// BenchmarkPlatformRequest is what the messenger adapter adds to a
// request.
func BenchmarkPlatformRequest(b *testing.B) {
	p := New(Options{}).Platform("1")
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			p.Request("upload.getFile")
		}
	})
}

// BenchmarkScrape serves one scrape of a process with 80 routes, 20 job
// kinds and 40 TL methods seen (1,756 series, 177 KB), River's counts and
// the spool left out.
func BenchmarkScrape(b *testing.B) {
	m := New(Options{})
	for i := range 80 {
		m.HTTPRequest(fmt.Sprintf("/route/%d/{id}", i), "GET", 200, time.Millisecond)
	}
	for i := range 20 {
		m.JobWorked(fmt.Sprintf("kind_%d", i), "ingest", "completed", time.Second)
	}
	for i := range 40 {
		m.Platform("1").Request(fmt.Sprintf("method.n%d", i))
	}
	h := m.Handler()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil).WithContext(context.Background())
	b.ResetTimer()
	for range b.N {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}
