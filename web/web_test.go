package web

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/queue"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

type testEnv struct {
	t   testing.TB
	db  *store.DB
	srv *Server
	ts  *httptest.Server
}

// testAuthSecret is AUTH_SECRET of the test servers.
const testAuthSecret = "test secret of at least thirty-two bytes"

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newEnv starts the web application on a fresh database.
func newEnv(t testing.TB, mutate ...func(*Deps)) *testEnv {
	t.Helper()
	db := storetest.NewDB(t)
	client, err := queue.NewInsertOnly(db.Pool(), quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	secrets, err := messenger.NewSealer(testAuthSecret)
	if err != nil {
		t.Fatal(err)
	}
	deps := Deps{DB: db, Queue: client, Logger: quietLogger(), AppURL: "http://" + ts.Listener.Addr().String(), Version: "test",
		UploadDir: t.TempDir(), MaxUploadBytes: 1 << 20, Secrets: secrets}
	for _, m := range mutate {
		m(&deps)
	}
	srv, err := New(deps)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = srv
	ts.Start()
	t.Cleanup(ts.Close)
	return &testEnv{t: t, db: db, srv: srv, ts: ts}
}

var userSeq atomic.Int64

// user creates a user with a known password and returns it.
func (e *testEnv) user(role hoard.Role) (*hoard.User, string) {
	e.t.Helper()
	password := "correct horse battery"
	hash, err := hashPassword(context.Background(), password)
	if err != nil {
		e.t.Fatal(err)
	}
	u, err := e.db.CreateUser(context.Background(), "user"+itoa(userSeq.Add(1))+"@example.com", hash, role)
	if err != nil {
		e.t.Fatal(err)
	}
	return u, password
}

// session returns a cookie of a fresh session of u.
func (e *testEnv) session(u *hoard.User) *http.Cookie {
	e.t.Helper()
	c, err := e.newSession(u)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// newSession stores a fresh session of u and returns its cookie; unlike
// session it may run on any goroutine.
func (e *testEnv) newSession(u *hoard.User) (*http.Cookie, error) {
	token := "tok-" + strconv.FormatInt(userSeq.Add(1), 10) + "-" + strconv.FormatInt(time.Now().UnixNano(), 10)
	s := &hoard.Session{ID: sessionID(token), UserID: u.ID, ExpiresAt: time.Now().Add(time.Hour)}
	if err := e.db.CreateSession(context.Background(), s); err != nil {
		return nil, err
	}
	return &http.Cookie{Name: e.srv.cookieName(), Value: token}, nil
}

// authChange makes change to users, sessions or messenger links as another
// process would (the worker's bot, the CLI), and waits until the server has
// heard of it (auth_changed drops the sessions it keeps), as it has by the
// time the person who made the change asks again.
func (e *testEnv) authChange(change func() error) {
	e.t.Helper()
	generation := func() uint64 {
		e.srv.sessions.mu.Lock()
		defer e.srv.sessions.mu.Unlock()
		return e.srv.sessions.gen
	}
	before := generation()
	if err := change(); err != nil {
		e.t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); generation() == before; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			e.t.Fatal("the server did not hear auth_changed within 5 s")
		}
	}
}

// client is a browser: cookies kept, redirects not followed.
func (e *testEnv) client() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (e *testEnv) do(c *http.Client, method, path string, form url.Values, cookie *http.Cookie) (*http.Response, string) {
	e.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	target := path
	if !strings.HasPrefix(path, "http://") {
		target = e.ts.URL + path // a path of hoard's; else any absolute URL (a provider's)
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if method != http.MethodGet && method != http.MethodHead && !strings.HasPrefix(path, "http://") {
		req.Header.Set("Origin", e.ts.URL) // as a browser does on a page of hoard's
	}
	if cookie != nil {
		req.AddCookie(cookie)
	}
	if c == nil {
		c = e.client()
	}
	resp, err := c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func itoa(i int64) string {
	return strings.TrimSpace(strings.Replace(time.Duration(i).String(), "ns", "", 1))
}
