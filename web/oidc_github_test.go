package web

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"golang.org/x/oauth2"
)

// fakeGitHub is a test double of GitHub's OAuth endpoints and REST API, on
// loopback: GET /login/oauth/authorize signs in whoever the test made
// current and sends the browser back with a code; POST
// /login/oauth/access_token checks the client, the redirect URL and the
// PKCE verifier and hands out a token once per code; /api/v3/user and
// /api/v3/user/emails answer for the token's person.
type fakeGitHub struct {
	t        testing.TB
	server   *httptest.Server
	clientID string
	secret   string
	redirect string

	mu      sync.Mutex
	current *fakeGitHubUser
	codes   map[string]fakeGitHubGrant // code → grant, until exchanged
	tokens  map[string]*fakeGitHubUser
}

type fakeGitHubUser struct {
	ID     int64
	Login  string
	Emails []githubEmail
}

type fakeGitHubGrant struct {
	user      *fakeGitHubUser
	challenge string
	redirect  string
}

func newFakeGitHub(t testing.TB, appURL string) *fakeGitHub {
	g := &fakeGitHub{t: t, clientID: "gh-client", secret: "gh secret", redirect: callbackURL(appURL, githubKey),
		codes: map[string]fakeGitHubGrant{}, tokens: map[string]*fakeGitHubUser{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login/oauth/authorize", g.authorize)
	mux.HandleFunc("POST /login/oauth/access_token", g.token)
	mux.HandleFunc("GET /api/v3/user", g.api(func(u *fakeGitHubUser) any {
		return map[string]any{"id": u.ID, "login": u.Login, "email": nil}
	}))
	mux.HandleFunc("GET /api/v3/user/emails", g.api(func(u *fakeGitHubUser) any { return u.Emails }))
	g.server = httptest.NewServer(mux)
	t.Cleanup(g.server.Close)
	return g
}

// config is the GitHubConfig that points hoard at the double (its API
// under /api/v3, as a GitHub Enterprise server's).
func (g *fakeGitHub) config() *GitHubConfig {
	return &GitHubConfig{ClientID: g.clientID, ClientSecret: g.secret, URL: g.server.URL}
}

// signIn makes u the person signed in at GitHub.
func (g *fakeGitHub) signIn(u *fakeGitHubUser) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.current = u
}

func (g *fakeGitHub) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	g.mu.Lock()
	defer g.mu.Unlock()
	type request struct {
		ClientID, Redirect, Method string
		State, SignedIn            bool
	}
	got := request{q.Get("client_id"), q.Get("redirect_uri"), q.Get("code_challenge_method"), q.Get("state") != "", g.current != nil}
	if want := (request{g.clientID, g.redirect, "S256", true, true}); got != want {
		http.Error(w, fmt.Sprintf("bad authorization request: %+v, want %+v", got, want), http.StatusBadRequest)
		return
	}
	code := rand.Text()
	g.codes[code] = fakeGitHubGrant{user: g.current, challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri")}
	http.Redirect(w, r, g.redirect+"?"+url.Values{"code": {code}, "state": {q.Get("state")}}.Encode(), http.StatusFound)
}

// token answers like GitHub: 200 with an "error" member when the code is
// bad.
func (g *fakeGitHub) token(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	grant, ok := g.codes[r.FormValue("code")]
	delete(g.codes, r.FormValue("code"))
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.FormValue("client_id") != g.clientID || r.FormValue("client_secret") != g.secret:
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "incorrect_client_credentials"})
	case !ok || r.FormValue("redirect_uri") != grant.redirect ||
		oauth2.S256ChallengeFromVerifier(r.FormValue("code_verifier")) != grant.challenge:
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "bad_verification_code"})
	default:
		tok := rand.Text()
		g.tokens[tok] = grant.user
		_ = json.NewEncoder(w).Encode(map[string]string{"access_token": tok, "token_type": "bearer", "scope": "read:user,user:email"})
	}
}

func (g *fakeGitHub) api(answer func(*fakeGitHubUser) any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		u := g.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		g.mu.Unlock()
		if u == nil {
			http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(answer(u))
	}
}

// newGitHubEnv is the web application with GitHub sign-in against the
// double.
func newGitHubEnv(t *testing.T, mutate ...func(*Deps)) (*testEnv, *fakeGitHub) {
	var g *fakeGitHub
	e := newEnv(t, append([]func(*Deps){func(d *Deps) {
		g = newFakeGitHub(t, d.AppURL)
		d.SignIn.GitHub = g.config()
	}}, mutate...)...)
	return e, g
}

// githubTrip signs in at GitHub as whoever is current: from the start
// route's answer to hoard's callback answer.
func (e *testEnv) githubTrip(c *http.Client, start *http.Response) (*http.Response, string) {
	e.t.Helper()
	if start.StatusCode != http.StatusSeeOther {
		e.t.Fatalf("start answered %d, want 303 to GitHub", start.StatusCode)
	}
	resp, _ := e.do(c, http.MethodGet, start.Header.Get("Location"), nil, nil)
	if resp.StatusCode != http.StatusFound {
		e.t.Fatalf("GitHub's authorize answered %d", resp.StatusCode)
	}
	return e.do(c, http.MethodGet, resp.Header.Get("Location"), nil, nil)
}

func TestGitHubSignIn(t *testing.T) {
	e, gh := newGitHubEnv(t, func(d *Deps) { d.SignIn.EmailDomains = []string{"allowed.example"} })
	ctx := t.Context()
	existing, password := e.user(hoard.RoleUser)
	code := e.invite(1, time.Hour)

	type want struct {
		Status  int
		Message string
		Email   string // signed in afterwards
		Role    hoard.Role
	}
	tests := []struct {
		name string
		user *fakeGitHubUser
		form url.Values // of POST /auth/github/login
		want want
	}{
		{"first sign-in with an invite", &fakeGitHubUser{ID: 101, Login: "octo", Emails: []githubEmail{
			{Email: "octo@users.example", Primary: true, Verified: true}}}, url.Values{"code": {code}},
			want{Status: 303, Email: "octo@users.example", Role: hoard.RoleUser}},
		{"then again, without the invite", &fakeGitHubUser{ID: 101, Login: "octo-renamed"}, nil,
			want{Status: 303, Email: "octo@users.example", Role: hoard.RoleUser}},
		{"first sign-in without an invite", &fakeGitHubUser{ID: 102, Login: "stranger", Emails: []githubEmail{
			{Email: "stranger@users.example", Primary: true, Verified: true}}}, nil,
			want{Status: 403, Message: "hoard is invite-only: open the invite link an administrator gave you and choose GitHub there."}},
		{"an allowed domain needs no invite", &fakeGitHubUser{ID: 103, Login: "colleague", Emails: []githubEmail{
			{Email: "old@users.example", Primary: true}, {Email: "colleague@Allowed.example", Verified: true}}}, nil,
			want{Status: 303, Email: "colleague@Allowed.example", Role: hoard.RoleUser}},
		{"an unverified address", &fakeGitHubUser{ID: 104, Login: "unverified", Emails: []githubEmail{
			{Email: "someone@allowed.example", Primary: true}}}, nil,
			want{Status: 403, Message: "GitHub has not verified your e-mail address someone@allowed.example: verify it there, then sign in again."}},
		{"the address of an existing account", &fakeGitHubUser{ID: 105, Login: "twin", Emails: []githubEmail{
			{Email: strings.ToUpper(existing.Email), Primary: true, Verified: true}}}, url.Values{"code": {e.invite(1, time.Hour)}},
			want{Status: 409, Message: "An account with the e-mail address " + strings.ToUpper(existing.Email) +
				" exists already: sign in with its password, then link GitHub in Settings."}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.user.Emails == nil {
				tc.user.Emails = []githubEmail{{Email: "octo@users.example", Primary: true, Verified: true}}
			}
			gh.signIn(tc.user)
			c := e.client()
			start, _ := e.do(c, http.MethodPost, "/auth/github/login", tc.form, nil)
			resp, body := e.githubTrip(c, start)
			got := want{Status: resp.StatusCode, Message: pageError(body)}
			got.Email, got.Role = e.signedInAs(c)
			if got != tc.want {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	if _, err := e.db.FindUserByEmail(ctx, "stranger@users.example"); hoard.ErrorCode(err) != hoard.ENOTFOUND {
		t.Fatalf("a refused sign-up left an account: %v", err)
	}
	// The existing account links its GitHub account with its password,
	// though GitHub knows another address, and signs in with it.
	c := e.client()
	resp, _ := e.do(c, http.MethodPost, "/login", url.Values{"email": {existing.Email}, "password": {password}}, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("password sign-in = %d", resp.StatusCode)
	}
	gh.signIn(&fakeGitHubUser{ID: 106, Login: "own", Emails: []githubEmail{{Email: "elsewhere@users.example", Primary: true, Verified: true}}})
	start, _ := e.do(c, http.MethodPost, "/settings/sign-in/github/link", url.Values{"current": {password}}, nil)
	if resp, body := e.githubTrip(c, start); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/settings?done=provider-linked#sign-in" {
		t.Fatalf("link = %d %s %s", resp.StatusCode, resp.Header.Get("Location"), pageError(body))
	}
	c = e.client()
	start, _ = e.do(c, http.MethodPost, "/auth/github/login", nil, nil)
	e.githubTrip(c, start)
	if email, _ := e.signedInAs(c); email != existing.Email {
		t.Fatalf("signed in through the linked GitHub account as %q, want %q", email, existing.Email)
	}
}

// TestGitHubRefusals: a code the double does not know (replayed) and an API
// that refuses the token end on the sign-in page with 401, nobody signed in.
func TestGitHubRefusals(t *testing.T) {
	e, gh := newGitHubEnv(t)
	u, _ := e.user(hoard.RoleUser)
	gh.signIn(&fakeGitHubUser{ID: 201, Login: "linked", Emails: []githubEmail{{Email: u.Email, Primary: true, Verified: true}}})
	if _, err := e.db.LinkIdentity(t.Context(), u.ID, hoard.Identity{Provider: githubKey, Issuer: gh.server.URL, Subject: "201"}); err != nil {
		t.Fatal(err)
	}
	c := e.client()
	start, _ := e.do(c, http.MethodPost, "/auth/github/login", nil, nil)
	resp, _ := e.do(c, http.MethodGet, start.Header.Get("Location"), nil, nil)
	callback := resp.Header.Get("Location")
	// The code is used once by another request with the same state and
	// cookie (an attacker who copied both): the browser's own request
	// finds its flow gone.
	thief := e.client()
	thief.Jar.SetCookies(mustURL(t, e.ts.URL), c.Jar.Cookies(mustURL(t, e.ts.URL)))
	if resp, _ := e.do(thief, http.MethodGet, callback, nil, nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("first use of the callback = %d", resp.StatusCode)
	}
	resp, body := e.do(c, http.MethodGet, callback, nil, nil)
	if got := (struct {
		Status  int
		Message string
	}{resp.StatusCode, pageError(body)}); got.Status != 401 || got.Message != hoard.ErrorMessage(errFlowLost) {
		t.Fatalf("replayed callback = %+v", got)
	}

	// A fresh flow with the old code: GitHub refuses the code.
	start, _ = e.do(c, http.MethodPost, "/auth/github/login", nil, nil)
	state := mustURL(t, start.Header.Get("Location")).Query().Get("state")
	old := mustURL(t, callback).Query().Get("code")
	resp, body = e.do(c, http.MethodGet, callbackURL(e.ts.URL, githubKey)+"?"+url.Values{"code": {old}, "state": {state}}.Encode(), nil, nil)
	if resp.StatusCode != 401 || pageError(body) != "GitHub did not sign you in: the sign-in code was refused (it may have been used already). Start again." {
		t.Fatalf("old code in a new flow = %d %q", resp.StatusCode, pageError(body))
	}
	if email, _ := e.signedInAs(c); email != "" {
		t.Fatalf("signed in as %s after refusals", email)
	}
}

func mustURL(t testing.TB, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestChooseGitHubEmail(t *testing.T) {
	type want struct {
		Email    string
		Verified bool
	}
	tests := []struct {
		name   string
		user   githubUser
		emails []githubEmail
		want   want
	}{
		{"primary and verified", githubUser{}, []githubEmail{{Email: "a@x.example", Verified: true}, {Email: "p@x.example", Primary: true, Verified: true}},
			want{"p@x.example", true}},
		{"first verified when the primary is not", githubUser{}, []githubEmail{{Email: "p@x.example", Primary: true}, {Email: "v@x.example", Verified: true}},
			want{"v@x.example", true}},
		{"unverified primary", githubUser{}, []githubEmail{{Email: "o@x.example"}, {Email: "p@x.example", Primary: true}}, want{"p@x.example", false}},
		{"public profile address", githubUser{Email: "pub@x.example"}, nil, want{"pub@x.example", false}},
		{"nothing", githubUser{}, nil, want{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got want
			got.Email, got.Verified = chooseGitHubEmail(tc.user, tc.emails)
			if got != tc.want {
				t.Fatalf("chooseGitHubEmail = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// FuzzParseGitHubAnswers: whatever GitHub's API answers, the parsers return
// an error or values within bounds, never panic.
func FuzzParseGitHubAnswers(f *testing.F) {
	f.Add([]byte(`{"id": 1, "login": "octo", "email": "o@x.example"}`))
	f.Add([]byte(`[{"email": "o@x.example", "primary": true, "verified": true}]`))
	f.Add([]byte(`{"id": -1}`))
	f.Add([]byte(`[{"email": "\u0000"}]`))
	f.Add([]byte(`{"id": 1e400}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if u, err := parseGitHubUser(body); err == nil && u.ID <= 0 {
			t.Fatalf("user without an id accepted: %+v", u)
		}
		emails, err := parseGitHubEmails(body)
		if err != nil {
			return
		}
		for _, e := range emails {
			if e.Email == "" || len(e.Email) > maxEmailLen || checkText("email", e.Email, maxEmailLen) != nil {
				t.Fatalf("unusable address kept: %q", e.Email)
			}
		}
		email, _ := chooseGitHubEmail(githubUser{}, emails)
		if email != "" && checkText("email", email, maxEmailLen) != nil {
			t.Fatalf("chose an unusable address %q", email)
		}
	})
}

func ExampleGitHubConfig() {
	p, _ := newGitHubProvider(GitHubConfig{ClientID: "id"}, http.DefaultClient, "https://hoard.example/auth/github/callback")
	fmt.Println(p.cfg.URL, p.cfg.APIURL)
	p, _ = newGitHubProvider(GitHubConfig{ClientID: "id", URL: "https://git.example.com/"}, http.DefaultClient, "")
	fmt.Println(p.cfg.URL, p.cfg.APIURL)
	// Output:
	// https://github.com https://api.github.com
	// https://git.example.com https://git.example.com/api/v3
}

// TestProviderRoutesRefuseHostileInput: the route fuzz test's hostile values
// in every parameter of the sign-in routes of a configured provider, as
// anonymous visitor and signed in; no answer is a 5xx.
func TestProviderRoutesRefuseHostileInput(t *testing.T) {
	e, gh := newGitHubEnv(t)
	gh.signIn(&fakeGitHubUser{ID: 301, Login: "fuzzed", Emails: []githubEmail{{Email: "f@x.example", Primary: true, Verified: true}}})
	u, _ := e.user(hoard.RoleUser)
	routes := []struct {
		method, path string
		params       []string
	}{
		{http.MethodPost, "/auth/github/login", []string{"next", "code"}},
		{http.MethodGet, "/auth/github/callback", []string{"state", "code", "error", "error_description"}},
		{http.MethodPost, "/settings/sign-in/github/link", []string{"current"}},
		{http.MethodPost, "/settings/sign-in/github/unlink", nil},
	}
	n := 0
	for _, rt := range routes {
		for _, v := range hostileValues {
			for _, cookie := range []*http.Cookie{nil, e.session(u)} {
				for _, name := range append(rt.params, "") {
					params := url.Values{}
					if name != "" {
						params.Set(name, v)
					}
					path := rt.path
					if name == "" { // the provider's path segment itself
						path = strings.Replace(rt.path, githubKey, url.PathEscape(v), 1)
					}
					var resp *http.Response
					if rt.method == http.MethodGet {
						resp, _ = e.do(nil, rt.method, path+"?"+params.Encode(), nil, cookie)
					} else {
						resp, _ = e.do(nil, rt.method, path, params, cookie)
					}
					n++
					if resp.StatusCode >= 500 {
						t.Errorf("%s %s %s=%.40q = %d", rt.method, path, name, v, resp.StatusCode)
					}
				}
			}
		}
	}
	t.Logf("%d requests", n)
}
