package web

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/metrics"
	"github.com/hoard/hoard/metrics/metricstest"
)

// TestMetricsLabelRoutesByPattern serves requests to a server reporting to
// real metrics, scrapes them as Prometheus would, and checks the route
// label: each request counted under its route's pattern (never a path with
// an id in it), unmatched ones together; and the catalog searches by
// whether the cache answered.
func TestMetricsLabelRoutesByPattern(t *testing.T) {
	m := metrics.New(metrics.Options{Version: "test"})
	e := newEnv(t, func(d *Deps) { d.Metrics = m })
	pkgs := e.seedCatalog()
	admin, _ := e.user(hoard.RoleAdmin)
	cookie := e.session(admin)
	id := strconv.FormatInt(pkgs["Red Dragon Pack.zip"].ID, 10)

	requests := []struct {
		method, path string
		cookie       *http.Cookie
		status       int
	}{
		{http.MethodGet, "/packages/" + id, cookie, http.StatusOK},
		{http.MethodGet, "/packages/987654321", cookie, http.StatusNotFound},
		{http.MethodGet, "/api/packages/" + id + "/files?q=wings", cookie, http.StatusOK},
		{http.MethodGet, "/api/packages?q=dragon", cookie, http.StatusOK},
		{http.MethodGet, "/api/packages?q=dragon", cookie, http.StatusOK},
		{http.MethodGet, "/static/app.css", nil, http.StatusOK},
		{http.MethodGet, "/no/such/page/42", cookie, http.StatusNotFound},
		{http.MethodGet, "/healthz", nil, http.StatusOK},
		{http.MethodGet, "/admin/river/api/jobs?state=running", cookie, http.StatusOK},
	}
	for _, r := range requests {
		resp, body := e.do(nil, r.method, r.path, nil, r.cookie)
		if resp.StatusCode != r.status {
			t.Fatalf("%s %s = %d, want %d: %s", r.method, r.path, resp.StatusCode, r.status, body)
		}
	}

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	s, err := metricstest.Parse(rec.Body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	count := func(route, code string) string {
		return metricstest.SeriesKey("hoard_http_request_duration_seconds_count",
			map[string]string{"route": route, "method": "GET", "code": code})
	}
	want := map[string]float64{
		count("/packages/{id}", "2xx"):           1,
		count("/packages/{id}", "4xx"):           1,
		count("/api/packages/{id}/files", "2xx"): 1,
		count("/api/packages", "2xx"):            2,
		count("/static/*", "2xx"):                1,
		count(metrics.UnmatchedRoute, "4xx"):     1,
		count("/healthz", "2xx"):                 1,
		count(riverUIPrefix+"/*", "2xx"):         1,
	}
	if got := s.Series("hoard_http_request_duration_seconds_count", nil); !maps.Equal(got, want) {
		t.Errorf("requests by route:\n got  %v\n want %v", got, want)
	}
	patterns := map[string]bool{metrics.UnmatchedRoute: true}
	for _, rt := range e.srv.routes() {
		patterns[rt.Pattern] = true
		if rt.Mount {
			patterns[rt.Pattern+"/*"] = true
		}
	}
	for _, route := range s.LabelValues("hoard_http_request_duration_seconds_count", "route") {
		if !patterns[route] || strings.Contains(route, id) {
			t.Errorf("route label %q is not a pattern of the route table", route)
		}
	}
	searches := map[string]float64{
		metricstest.SeriesKey("hoard_search_duration_seconds_count", map[string]string{"cache": "hit"}):  1,
		metricstest.SeriesKey("hoard_search_duration_seconds_count", map[string]string{"cache": "miss"}): 1,
	}
	if got := s.Series("hoard_search_duration_seconds_count", nil); !maps.Equal(got, searches) {
		t.Errorf("searches:\n got  %v\n want %v", got, searches)
	}
}
