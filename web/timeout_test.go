package web

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hoard/hoard"
)

// TestStatementTimeoutAnswers503: a request's statement that runs past the
// web's statement timeout is cancelled by PostgreSQL, and the request
// answers 503 with a clear message (JSON for the API, a page otherwise) —
// not a 500. Statements outside a request (the worker's) are not bounded.
func TestStatementTimeoutAnswers503(t *testing.T) {
	e := newEnv(t, func(d *Deps) { d.StatementTimeout = 200 * time.Millisecond })
	user, _ := e.user(hoard.RoleUser)
	c := e.session(user)
	slow := e.srv.authorize(SignedIn, func(w http.ResponseWriter, r *http.Request) error {
		_, err := e.db.Pool().Exec(r.Context(), `SELECT pg_sleep(30)`)
		return err
	})
	e.srv.router.Method(http.MethodGet, "/api/test/slow", slow)
	e.srv.router.Method(http.MethodGet, "/test/slow", slow)

	resp, body := e.do(nil, "GET", "/api/test/slow", nil, c)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
		!strings.Contains(body, `"code":"timeout"`) || !strings.Contains(body, "took too long") {
		t.Fatalf("API request past the statement timeout = %d %s", resp.StatusCode, body)
	}
	resp, body = e.do(nil, "GET", "/test/slow", nil, c)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "took too long") {
		t.Fatalf("page request past the statement timeout = %d %.300s", resp.StatusCode, body)
	}
	// The same pool outside a request: no bound.
	if _, err := e.db.Pool().Exec(context.Background(), `SELECT pg_sleep(0.4)`); err != nil {
		t.Fatalf("a statement outside a request: %v", err)
	}
}
