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

// TestSessionLookUpFailureKeepsTheCookie: when the database does not
// answer who a request's session belongs to (here: the sessions table
// locked past the statement timeout), the request is refused with 503 and
// the session cookie is left alone — a busy database does not sign anyone
// out; the next request, once it answers, is signed in as before.
func TestSessionLookUpFailureKeepsTheCookie(t *testing.T) {
	e := newEnv(t, func(d *Deps) { d.StatementTimeout = 200 * time.Millisecond; d.SessionCacheTTL = -1 })
	user, _ := e.user(hoard.RoleUser)
	c := e.session(user)
	type answer struct {
		Status      int
		RetryAfter  bool
		CookieReset bool
		Says        bool // the body carries the message (the page's or the API's)
	}
	ask := func(path, says string) answer {
		resp, body := e.do(nil, "GET", path, nil, c)
		reset := false
		for _, k := range resp.Cookies() {
			reset = reset || k.Name == c.Name
		}
		return answer{resp.StatusCode, resp.Header.Get("Retry-After") != "", reset, strings.Contains(body, says)}
	}
	tx, err := e.db.Pool().Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(context.Background(), `LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	busy := answer{http.StatusServiceUnavailable, true, false, true}
	if got := ask("/settings", "took too long"); got != busy {
		t.Errorf("a page while the session cannot be looked up: %+v, want %+v", got, busy)
	}
	if got := ask("/api/packages", `"code":"timeout"`); got != busy {
		t.Errorf("the API while the session cannot be looked up: %+v, want %+v", got, busy)
	}
	if err := tx.Rollback(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := ask("/settings", user.Email), (answer{Status: http.StatusOK, Says: true}); got != want {
		t.Errorf("the next request once the database answers: %+v, want %+v", got, want)
	}
}
