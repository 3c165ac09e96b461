package web

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hoard/hoard"
)

// TestSessionCacheFollowsOtherProcesses: a session served from memory
// reflects a change another process makes (here straight through the
// store, as the worker's bot or the CLI would) once auth_changed arrives,
// long before the cache's TTL (an hour here).
func TestSessionCacheFollowsOtherProcesses(t *testing.T) {
	const unlinked = "Link your messenger account to send"
	for _, tc := range []struct {
		name   string
		role   hoard.Role
		path   string // what the user asks for before and after the change
		before string // in the answer before the change
		change func(ctx context.Context, e *testEnv, u *hoard.User, c *http.Cookie) error
		after  string // in the answer once the change is seen
	}{
		{"session ended", hoard.RoleUser, "/", unlinked,
			func(ctx context.Context, e *testEnv, _ *hoard.User, c *http.Cookie) error {
				return e.db.DeleteSession(ctx, sessionID(c.Value))
			}, "status 303 /login"},
		{"role taken away", hoard.RoleAdmin, "/admin/messenger", "status 200",
			func(ctx context.Context, e *testEnv, u *hoard.User, _ *http.Cookie) error {
				return e.db.SetUserRole(ctx, u.ID, hoard.RoleUser)
			}, "status 403"},
		{"account deleted", hoard.RoleUser, "/", unlinked,
			func(ctx context.Context, e *testEnv, u *hoard.User, _ *http.Cookie) error {
				return e.db.DeleteUser(ctx, u.ID)
			}, "status 303 /login"},
		{"messenger account linked by the bot", hoard.RoleUser, "/", unlinked,
			func(ctx context.Context, e *testEnv, u *hoard.User, _ *http.Cookie) error {
				if err := e.db.CreateLinkCode(ctx, u.ID, "code-hash", time.Now().Add(time.Hour)); err != nil {
					return err
				}
				_, err := e.db.ConsumeLinkCode(ctx, "code-hash", 4242, 1, "someone")
				return err
			}, `formaction="/packages/send"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(d *Deps) { d.SessionCacheTTL = time.Hour })
			e.seedCatalog()
			u, _ := e.user(tc.role)
			c := e.session(u)
			ctx := context.Background()
			e.waitCatalogWatch()
			get := func() string {
				resp, body := e.do(nil, "GET", tc.path, nil, c)
				return "status " + resp.Status[:3] + " " + resp.Header.Get("Location") + "\n" + body
			}
			get()
			hits := e.srv.sessions.hits.Load()
			if got := get(); !strings.Contains(got, tc.before) {
				t.Fatalf("before the change, %s lacks %q:\n%.400s", tc.path, tc.before, got)
			}
			if e.srv.sessions.hits.Load() != hits+1 {
				t.Fatal("the repeated request's session was not served from memory: the test would not exercise the cache")
			}
			if err := tc.change(ctx, e, u, c); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				got := get()
				if strings.Contains(got, tc.after) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("5 s after the change, %s still lacks %q:\n%.400s", tc.path, tc.after, got)
				}
			}
		})
	}
}

// TestSessionCacheWritesActAtOnce: what a signed-in user's own request
// changes in this process (signing out, another administrator's role) is
// in force for the very next request, without waiting for a notification.
func TestSessionCacheWritesActAtOnce(t *testing.T) {
	e := newEnv(t, func(d *Deps) { d.SessionCacheTTL = time.Hour })
	e.waitCatalogWatch()
	user, _ := e.user(hoard.RoleUser)
	c := e.session(user)
	for range 2 {
		if resp, _ := e.do(nil, "GET", "/settings", nil, c); resp.StatusCode != http.StatusOK {
			t.Fatalf("settings before signing out: %d", resp.StatusCode)
		}
	}
	if e.srv.sessions.hits.Load() == 0 {
		t.Fatal("no session was served from memory: the test would not exercise the cache")
	}
	if resp, _ := e.do(nil, "POST", "/logout", url.Values{}, c); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out: %d", resp.StatusCode)
	}
	if resp, _ := e.do(nil, "GET", "/settings", nil, c); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/login") {
		t.Fatalf("the signed-out session's next request: %d %q, want 303 to /login", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestSessionCacheRules checks what the cache keeps and serves, one rule a
// row.
func TestSessionCacheRules(t *testing.T) {
	live := &hoard.Session{ID: "s", UserID: 7, ExpiresAt: time.Now().Add(time.Hour)}
	expired := &hoard.Session{ID: "s", UserID: 7, ExpiresAt: time.Now().Add(-time.Second)}
	user := &hoard.User{ID: 7, Role: hoard.RoleUser}
	for _, tc := range []struct {
		name string
		ttl  time.Duration
		sess *hoard.Session
		// between runs during the look-up (find's load), before its
		// result is kept; after runs before the second get.
		listening     bool
		between       func(*sessionCache)
		after         func(*sessionCache)
		wantKeptFound bool
	}{
		{"kept while listening", time.Hour, live, true, nil, nil, true},
		{"not kept unless listening", time.Hour, live, false, nil, nil, false},
		{"caching off", -1, live, true, nil, nil, false},
		{"never past the session's expiry", time.Hour, expired, true, nil, nil, false},
		{"not past the TTL", time.Nanosecond, live, true, nil, func(*sessionCache) { time.Sleep(time.Millisecond) }, false},
		{"a change during the look-up is not overwritten", time.Hour, live, true, (*sessionCache).forget, nil, false},
		{"dropped by a change", time.Hour, live, true, nil, (*sessionCache).forget, false},
		{"dropped when the listener is lost", time.Hour, live, true, nil, func(c *sessionCache) { c.setListening(false) }, false},
		{"not kept while a write is under way", time.Hour, live, true, (*sessionCache).beginWrite, nil, false},
		{"not served while a write is under way", time.Hour, live, true, nil, (*sessionCache).beginWrite, false},
		{"dropped when a write ends", time.Hour, live, true, nil, func(c *sessionCache) { c.beginWrite(); c.endWrite() }, false},
		{"dropped when touched", time.Hour, live, true, nil, func(c *sessionCache) { c.drop("s") }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newSessionCache(tc.ttl)
			c.setListening(tc.listening)
			looked := false
			if _, _, err := c.find(context.Background(), "s", func(context.Context) (*hoard.Session, *hoard.User, error) {
				looked = true
				if tc.between != nil {
					tc.between(c)
				}
				return tc.sess, user, nil
			}); err != nil || !looked {
				t.Fatalf("an empty cache answered (looked up: %v) or failed: %v", looked, err)
			}
			if tc.after != nil {
				tc.after(c)
			}
			s, u, ok := c.get("s")
			if ok != tc.wantKeptFound {
				t.Fatalf("served from memory: %v, want %v", ok, tc.wantKeptFound)
			}
			if ok {
				if *s != *tc.sess || *u != *user {
					t.Fatalf("served %+v %+v, want %+v %+v", *s, *u, *tc.sess, *user)
				}
				s.UserID, u.Role = 99, hoard.RoleAdmin // a request's copy: the cache keeps its own
				if s2, u2, _ := c.get("s"); s2.UserID != 7 || u2.Role != hoard.RoleUser {
					t.Fatal("a request's change to its session or user reached the cache")
				}
			}
		})
	}
}

// TestSignedInWritesHoldTheSessionCache: while a signed-in user's request
// that may change something runs, sessions are neither served from memory
// nor kept (whatever it changes is in force before it answers), and when
// it ends every session held is dropped; reading requests and anonymous
// ones leave the cache alone.
func TestSignedInWritesHoldTheSessionCache(t *testing.T) {
	e := newEnv(t, func(d *Deps) { d.SessionCacheTTL = time.Hour })
	e.waitCatalogWatch()
	u, _ := e.user(hoard.RoleUser)
	c := e.session(u)
	for _, tc := range []struct {
		method      string
		cookie      *http.Cookie
		wantWriting int
		wantHeld    int // sessions held afterwards (the user's, kept by a GET before)
	}{
		{"GET", c, 0, 1},
		{"HEAD", c, 0, 1},
		{"POST", c, 1, 0},
		{"DELETE", c, 1, 0},
		{"POST", nil, 0, 1},
	} {
		if resp, _ := e.do(nil, "GET", "/settings", nil, c); resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /settings: %d", resp.StatusCode)
		}
		var writing int
		h := e.srv.loadSession(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
			e.srv.sessions.mu.Lock()
			writing = e.srv.sessions.writing
			e.srv.sessions.mu.Unlock()
		}))
		req, _ := http.NewRequest(tc.method, "/", nil)
		if tc.cookie != nil {
			req.AddCookie(tc.cookie)
		}
		h.ServeHTTP(httptest.NewRecorder(), req)
		e.srv.sessions.mu.Lock()
		held := len(e.srv.sessions.entries)
		e.srv.sessions.mu.Unlock()
		if got, want := [2]int{writing, held}, [2]int{tc.wantWriting, tc.wantHeld}; got != want {
			t.Fatalf("%s (cookie %v): writes under way during it, sessions held after = %v, want %v", tc.method, tc.cookie != nil, got, want)
		}
	}
}

// TestSessionCacheSharesLookUps: requests that miss a session while its
// look-up is under way (two here) wait for that look-up, unless its result
// could not be kept (a change since it began, a write under way, nobody
// listening); each request gets its own copy; a failure is shared and not kept; a
// request waits no longer than its own context, and the look-up outlives
// the context of the request that began it.
func TestSessionCacheSharesLookUps(t *testing.T) {
	type outcome struct {
		Loads, Joined int64
		Kept          bool
		Errs          [3]string // the first request's, then the two that follow it
	}
	for _, tc := range []struct {
		name      string
		listening bool
		between   func(*sessionCache) // after the first look-up began, before the second request
		fail      bool                // the look-up fails
		cancel    int                 // the request (1 or 2) whose context ends during the look-up
		want      outcome
	}{
		{name: "shared", listening: true, want: outcome{Loads: 1, Joined: 2, Kept: true}},
		// The two that follow share a look-up of their own.
		{name: "not across a change", listening: true, between: (*sessionCache).forget, want: outcome{Loads: 2, Joined: 1, Kept: true}},
		{name: "not while a write is under way", listening: true, between: (*sessionCache).beginWrite, want: outcome{Loads: 3}},
		{name: "not unless listening", want: outcome{Loads: 3}},
		{name: "a failure is shared, not kept", listening: true, fail: true,
			want: outcome{Loads: 1, Joined: 2, Errs: [3]string{"database down", "database down", "database down"}}},
		{name: "a request waits no longer than its context", listening: true, cancel: 2,
			want: outcome{Loads: 1, Joined: 2, Kept: true, Errs: [3]string{"", "context canceled", ""}}},
		{name: "the look-up outlives its first request", listening: true, cancel: 1, want: outcome{Loads: 1, Joined: 2, Kept: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newSessionCache(time.Hour)
			c.setListening(tc.listening)
			var loads atomic.Int64
			started, release := make(chan struct{}, 3), make(chan struct{})
			load := func(ctx context.Context) (*hoard.Session, *hoard.User, error) {
				loads.Add(1)
				started <- struct{}{}
				<-release
				switch {
				case ctx.Err() != nil:
					return nil, nil, ctx.Err()
				case tc.fail:
					return nil, nil, errors.New("database down")
				}
				return &hoard.Session{ID: "s", UserID: 7, ExpiresAt: time.Now().Add(time.Hour)}, &hoard.User{ID: 7}, nil
			}
			var ctxs [3]context.Context
			var cancels [3]context.CancelFunc
			for i := range ctxs {
				ctxs[i], cancels[i] = context.WithCancel(context.Background())
				defer cancels[i]()
			}
			var got outcome
			var sessions [3]*hoard.Session
			var done [3]chan struct{}
			find := func(i int) {
				done[i] = make(chan struct{})
				go func() {
					defer close(done[i])
					s, _, err := c.find(ctxs[i], "s", load)
					if sessions[i] = s; err != nil {
						got.Errs[i] = err.Error()
					}
				}()
			}
			find(0)
			<-started
			if tc.between != nil {
				tc.between(c)
			}
			find(1)
			find(2)
			waitFor(t, func() bool { return loads.Load() == tc.want.Loads && c.joined.Load() == tc.want.Joined })
			if tc.cancel > 0 {
				cancels[tc.cancel-1]()
				if tc.cancel == 2 {
					<-done[1] // before the look-up ends
				}
			}
			close(release)
			for _, d := range done {
				<-d
			}
			_, _, got.Kept = c.get("s")
			got.Loads, got.Joined = loads.Load(), c.joined.Load()
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i, s := range sessions {
				for _, other := range sessions[i+1:] {
					if s != nil && s == other {
						t.Fatal("two requests were handed one session to share")
					}
				}
			}
		})
	}
}

// waitFor polls cond until it holds, failing the test after 5 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
	}
}
