package web

import (
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hoard/hoard"
)

var signedInPattern = regexp.MustCompile(`Signed in as <strong>([^<]*)</strong> \(([A-Z]+)\)`)

// signedInAs reads who c is signed in as from Settings ("" when nobody).
func (e *testEnv) signedInAs(c *http.Client) (string, hoard.Role) {
	e.t.Helper()
	resp, body := e.do(c, http.MethodGet, "/settings", nil, nil)
	m := signedInPattern.FindStringSubmatch(body)
	if resp.StatusCode != http.StatusOK || m == nil {
		return "", ""
	}
	return html.UnescapeString(m[1]), hoard.Role(m[2])
}

var pageErrorPattern = regexp.MustCompile(`<(?:p class="error"|span class="field-error") role="alert">([^<]*)</(?:p|span)>`)

// pageError is the error a page shows, at its top or beside the field it is
// about ("" when none).
func pageError(body string) string {
	if m := pageErrorPattern.FindStringSubmatch(body); m != nil {
		return html.UnescapeString(m[1])
	}
	return ""
}

// newOIDCEnv is the web application with sign-in through a test provider.
func newOIDCEnv(t *testing.T, mutate ...func(*Deps)) (*testEnv, *testOP) {
	var o *testOP
	e := newEnv(t, append([]func(*Deps){func(d *Deps) {
		o = newTestOP(t, d.AppURL)
		d.SignIn.OIDC = o.config()
	}}, mutate...)...)
	return e, o
}

// opLogin takes the browser c through the provider: from the start route's
// answer (303 to the provider), after tamper changed the authorization
// URL, through the login page as username, to the callback URL the
// provider sends the browser back to (returned, not followed).
func (e *testEnv) opLogin(c *http.Client, o *testOP, start *http.Response, username string, tamper func(*url.URL)) *url.URL {
	e.t.Helper()
	if start.StatusCode != http.StatusSeeOther {
		e.t.Fatalf("start answered %d, want 303 to the provider", start.StatusCode)
	}
	auth := mustURL(e.t, start.Header.Get("Location"))
	if !strings.HasPrefix(auth.String(), o.issuer+"/") {
		e.t.Fatalf("start sent the browser to %s, not to the provider", auth)
	}
	if tamper != nil {
		tamper(auth)
	}
	next := func(resp *http.Response, base *url.URL) *url.URL {
		e.t.Helper()
		if resp.StatusCode != http.StatusFound && resp.StatusCode != http.StatusSeeOther {
			e.t.Fatalf("provider answered %d at %s", resp.StatusCode, resp.Request.URL)
		}
		return base.ResolveReference(mustURL(e.t, resp.Header.Get("Location")))
	}
	resp, _ := e.do(c, http.MethodGet, auth.String(), nil, nil)
	login := next(resp, auth)
	resp, _ = e.do(c, http.MethodPost, o.issuer+"/login/username", url.Values{
		"id": {login.Query().Get("authRequestID")}, "username": {username}, "password": {testOPPassword}}, nil)
	done := next(resp, login)
	resp, _ = e.do(c, http.MethodGet, done.String(), nil, nil)
	return next(resp, done)
}

// oidcWant is the outcome of a sign-in through the provider.
type oidcWant struct {
	Status     int
	Location   string // of a 303
	Message    string // the page's error
	Email      string // signed in afterwards
	Role       hoard.Role
	InviteUses int // of the case's invite
}

func TestOIDCSignIn(t *testing.T) {
	e, o := newOIDCEnv(t, func(d *Deps) {
		d.SignIn.EmailDomains = []string{"@Allowed.Example"}
		d.SignIn.OIDC.AdminClaim, d.SignIn.OIDC.AdminValues = "groups", []string{"hoard-admins"}
	})
	ctx := t.Context()
	link := func(u *hoard.User, sub string) {
		t.Helper()
		o.addUser(testOPUser{ID: sub, Email: u.Email, EmailVerified: true})
		if _, err := e.db.LinkIdentity(ctx, u.ID, hoard.Identity{Provider: oidcKey, Issuer: o.issuer, Subject: sub}); err != nil {
			t.Fatal(err)
		}
	}
	linked, _ := e.user(hoard.RoleUser)
	link(linked, "linked")
	adminA, _ := e.user(hoard.RoleAdmin)
	link(adminA, "admin-a")
	e.user(hoard.RoleAdmin) // another administrator: admin-a may lose the role
	taken, _ := e.user(hoard.RoleUser)
	lost := hoard.ErrorMessage(errFlowLost)

	tests := []struct {
		name           string
		user           *testOPUser // a new person at the provider (nil: one linked above)
		username       string
		next           string
		invite         hoard.Role // an invite of this role rides along ("": none)
		inviteUsedUp   bool
		tamperAuth     func(*url.URL)
		tamperCallback func(*url.URL)
		otherBrowser   bool
		anotherKey     bool
		want           oidcWant
	}{
		{name: "a linked account signs in", username: "linked", next: "/packages/7",
			want: oidcWant{Status: 303, Location: "/packages/7", Email: linked.Email, Role: hoard.RoleUser}},
		{name: "first sign-in with an invite", user: &testOPUser{ID: "newcomer", Email: "newcomer@example.com", EmailVerified: true},
			invite: hoard.RoleUser, want: oidcWant{Status: 303, Location: "/", Email: "newcomer@example.com", Role: hoard.RoleUser, InviteUses: 1}},
		{name: "first sign-in without an invite", user: &testOPUser{ID: "uninvited", Email: "uninvited@example.com", EmailVerified: true},
			want: oidcWant{Status: 403, Message: "hoard is invite-only: open the invite link an administrator gave you and choose Test IdP there."}},
		{name: "an allowed domain keeps the invite", user: &testOPUser{ID: "colleague", Email: "colleague@allowed.example", EmailVerified: true},
			invite: hoard.RoleUser, want: oidcWant{Status: 303, Location: "/", Email: "colleague@allowed.example", Role: hoard.RoleUser}},
		{name: "an unverified e-mail", user: &testOPUser{ID: "unverified", Email: "unverified@allowed.example"}, invite: hoard.RoleUser,
			want: oidcWant{Status: 403, Message: "Test IdP has not verified your e-mail address unverified@allowed.example: verify it there, then sign in again."}},
		{name: "the e-mail of an existing account", user: &testOPUser{ID: "twin", Email: taken.Email, EmailVerified: true}, invite: hoard.RoleUser,
			want: oidcWant{Status: 409, Message: "An account with the e-mail address " + taken.Email + " exists already: sign in with its password, then link Test IdP in Settings."}},
		{name: "the group claim makes an administrator", invite: hoard.RoleUser,
			user: &testOPUser{ID: "boss", Email: "boss@example.com", EmailVerified: true, Groups: []string{"staff", "hoard-admins"}},
			want: oidcWant{Status: 303, Location: "/", Email: "boss@example.com", Role: hoard.RoleAdmin, InviteUses: 1}},
		{name: "without the group an administrator is a user", username: "admin-a",
			want: oidcWant{Status: 303, Location: "/", Email: adminA.Email, Role: hoard.RoleUser}},
		{name: "an invite of an administrator", invite: hoard.RoleAdmin, user: &testOPUser{ID: "climber", Email: "c@example.com", EmailVerified: true},
			want: oidcWant{Status: 422, Message: "This invite code registers an administrator: register with a password instead."}},
		{name: "a used-up invite", invite: hoard.RoleUser, inviteUsedUp: true, user: &testOPUser{ID: "late", Email: "late@example.com", EmailVerified: true},
			want: oidcWant{Status: 422, Message: "This invite code has been used up.", InviteUses: 1}},
		{name: "a wrong state", username: "linked", tamperCallback: func(u *url.URL) { setQuery(u, "state", randomToken(32)) },
			want: oidcWant{Status: 401, Message: lost}},
		{name: "the callback in another browser", username: "linked", otherBrowser: true, want: oidcWant{Status: 401, Message: lost}},
		{name: "the nonce of another sign-in", username: "linked", tamperAuth: func(u *url.URL) { setQuery(u, "nonce", randomToken(24)) },
			want: oidcWant{Status: 401, Message: "Test IdP did not sign you in: its ID token belongs to another sign-in."}},
		{name: "a token signed by another key", username: "linked", anotherKey: true,
			want: oidcWant{Status: 401, Message: "Test IdP did not sign you in: its ID token could not be verified."}},
		{name: "the provider refuses", username: "linked", tamperCallback: func(u *url.URL) {
			u.RawQuery = url.Values{"state": {u.Query().Get("state")}, "error": {"access_denied"}, "error_description": {"The user said no"}}.Encode()
		}, want: oidcWant{Status: 401, Message: "Test IdP did not sign you in (access_denied: The user said no)."}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := e.db.ClearThrottle(ctx, "ip:127.0.0.1"); err != nil {
				t.Fatal(err)
			}
			username := tc.username
			if tc.user != nil {
				o.addUser(*tc.user)
				username = tc.user.ID
			}
			form := url.Values{"next": {tc.next}}
			var code string
			if tc.invite != "" {
				codes, err := CreateInvites(ctx, e.db, InviteOptions{Count: 1, MaxUses: 1, Role: tc.invite})
				if err != nil {
					t.Fatal(err)
				}
				code = codes[0].Code
				form.Set("code", code)
				if tc.inviteUsedUp {
					if _, err := e.db.RegisterWithInvite(ctx, code, "first-"+tc.user.Email, "hash"); err != nil {
						t.Fatal(err)
					}
				}
			}
			c := e.client()
			resp, body := e.do(c, http.MethodPost, "/auth/oidc/login", form, nil)
			if resp.StatusCode == http.StatusSeeOther {
				callback := e.opLogin(c, o, resp, username, tc.tamperAuth)
				if tc.tamperCallback != nil {
					tc.tamperCallback(callback)
				}
				finisher := c
				if tc.otherBrowser {
					finisher = e.client()
				}
				// The provider signs the ID token when hoard exchanges the
				// code, at the callback.
				o.signWithAnotherKey(tc.anotherKey)
				resp, body = e.do(finisher, http.MethodGet, callback.String(), nil, nil)
				o.signWithAnotherKey(false)
			}
			got := oidcWant{Status: resp.StatusCode, Message: pageError(body)}
			if resp.StatusCode == http.StatusSeeOther {
				got.Location = resp.Header.Get("Location")
			}
			got.Email, got.Role = e.signedInAs(c)
			if code != "" {
				inv, err := e.db.FindInviteByCode(ctx, code)
				if err != nil {
					t.Fatal(err)
				}
				got.InviteUses = inv.UseCount
			}
			if got != tc.want {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
	for _, email := range []string{"uninvited@example.com", "unverified@allowed.example", "c@example.com", "late@example.com"} {
		if _, err := e.db.FindUserByEmail(ctx, email); hoard.ErrorCode(err) != hoard.ENOTFOUND {
			t.Errorf("a refused sign-up left an account for %s (%v)", email, err)
		}
	}
}

func setQuery(u *url.URL, key, value string) {
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
}

// TestOIDCReplayedCode: a callback is finished once; its code in a fresh
// flow is refused by the provider.
func TestOIDCReplayedCode(t *testing.T) {
	e, o := newOIDCEnv(t)
	u, _ := e.user(hoard.RoleUser)
	o.addUser(testOPUser{ID: "replayer", Email: u.Email, EmailVerified: true})
	if _, err := e.db.LinkIdentity(t.Context(), u.ID, hoard.Identity{Provider: oidcKey, Issuer: o.issuer, Subject: "replayer"}); err != nil {
		t.Fatal(err)
	}
	c := e.client()
	start, _ := e.do(c, http.MethodPost, "/auth/oidc/login", nil, nil)
	callback := e.opLogin(c, o, start, "replayer", nil)
	// An attacker who copied the URL and the flow cookie uses them first.
	thief := e.client()
	thief.Jar.SetCookies(mustURL(t, e.ts.URL), c.Jar.Cookies(mustURL(t, e.ts.URL)))
	if resp, _ := e.do(thief, http.MethodGet, callback.String(), nil, nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("first use = %d", resp.StatusCode)
	}
	type outcome struct {
		Status  int
		Message string
	}
	resp, body := e.do(c, http.MethodGet, callback.String(), nil, nil)
	if got, want := (outcome{resp.StatusCode, pageError(body)}), (outcome{401, hoard.ErrorMessage(errFlowLost)}); got != want {
		t.Fatalf("replayed callback = %+v, want %+v", got, want)
	}
	start, _ = e.do(c, http.MethodPost, "/auth/oidc/login", nil, nil)
	fresh := e.opLogin(c, o, start, "replayer", nil)
	setQuery(fresh, "code", callback.Query().Get("code"))
	resp, body = e.do(c, http.MethodGet, fresh.String(), nil, nil)
	want := outcome{401, "Test IdP did not sign you in: the sign-in code was refused (it may have been used already). Start again."}
	if got := (outcome{resp.StatusCode, pageError(body)}); got != want {
		t.Fatalf("old code in a fresh flow = %+v, want %+v", got, want)
	}
	if email, _ := e.signedInAs(c); email != "" {
		t.Fatalf("signed in as %s", email)
	}
}

func TestOIDCLinking(t *testing.T) {
	e, o := newOIDCEnv(t)
	ctx := t.Context()
	other, _ := e.user(hoard.RoleUser)
	o.addUser(testOPUser{ID: "someone-elses", Email: other.Email, EmailVerified: true})
	if _, err := e.db.LinkIdentity(ctx, other.ID, hoard.Identity{Provider: oidcKey, Issuer: o.issuer, Subject: "someone-elses"}); err != nil {
		t.Fatal(err)
	}
	type want struct {
		Status   int
		Location string
		Message  string
		Linked   string // the subject linked to the user afterwards
	}
	tests := []struct {
		name     string
		opUser   func(me *hoard.User) testOPUser
		password string // "" none, "right", or a wrong one
		signOut  bool   // the user signs out before the provider sends them back
		want     want
	}{
		{"with the password, any account", func(me *hoard.User) testOPUser {
			return testOPUser{Email: "elsewhere@example.com"}
		}, "right", false, want{Status: 303, Location: "/settings?done=provider-linked#sign-in", Linked: "own"}},
		{"without it, the own verified address", func(me *hoard.User) testOPUser {
			return testOPUser{Email: strings.ToUpper(me.Email), EmailVerified: true}
		}, "", false, want{Status: 303, Location: "/settings?done=provider-linked#sign-in", Linked: "own"}},
		{"without it, the own address unverified", func(me *hoard.User) testOPUser {
			return testOPUser{Email: me.Email}
		}, "", false, want{Status: 403, Message: "Test IdP does not vouch for your e-mail address {me} on that account: type your password to link it anyway."}},
		{"without it, another address", func(me *hoard.User) testOPUser {
			return testOPUser{Email: "elsewhere@example.com", EmailVerified: true}
		}, "", false, want{Status: 403, Message: "Test IdP does not vouch for your e-mail address {me} on that account: type your password to link it anyway."}},
		{"a wrong password", nil, "wrong password", false, want{Status: 401, Message: "The password is wrong."}},
		{"an account linked to someone else", func(me *hoard.User) testOPUser {
			return testOPUser{ID: "someone-elses"}
		}, "right", false, want{Status: 409, Message: "That account is already linked to another hoard user."}},
		{"signed out meanwhile", func(me *hoard.User) testOPUser {
			return testOPUser{Email: me.Email, EmailVerified: true}
		}, "", true, want{Status: 401, Message: hoard.ErrorMessage(errFlowLost)}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			me, password := e.user(hoard.RoleUser)
			c := e.client()
			if resp, _ := e.do(c, http.MethodPost, "/login", url.Values{"email": {me.Email}, "password": {password}}, nil); resp.StatusCode != 303 {
				t.Fatalf("sign-in = %d", resp.StatusCode)
			}
			form := url.Values{}
			switch tc.password {
			case "right":
				form.Set("current", password)
			case "":
			default:
				form.Set("current", tc.password)
			}
			resp, body := e.do(c, http.MethodPost, "/settings/sign-in/oidc/link", form, nil)
			if resp.StatusCode == http.StatusSeeOther {
				u := tc.opUser(me)
				if u.ID == "" {
					u.ID = "own-" + itoa(int64(i))
					o.addUser(u)
				} else if u.ID != "someone-elses" {
					o.addUser(u)
				}
				callback := e.opLogin(c, o, resp, u.ID, nil)
				if tc.signOut {
					e.do(c, http.MethodPost, "/logout", url.Values{}, nil)
				}
				resp, body = e.do(c, http.MethodGet, callback.String(), nil, nil)
			}
			got := want{Status: resp.StatusCode, Message: pageError(body)}
			if resp.StatusCode == http.StatusSeeOther {
				got.Location = resp.Header.Get("Location")
			}
			ids, err := e.db.ListIdentities(ctx, me.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(ids) == 1 && strings.HasPrefix(ids[0].Subject, "own-") {
				got.Linked = "own"
			}
			tc.want.Message = strings.ReplaceAll(tc.want.Message, "{me}", me.Email)
			if got != tc.want {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestPasswordlessAccount: an account made through a provider has no
// password (the dummy hash's password included), cannot unlink its only
// way in, sets a password without a current one, then may unlink.
func TestPasswordlessAccount(t *testing.T) {
	e, o := newOIDCEnv(t)
	o.addUser(testOPUser{ID: "solo", Email: "solo@example.com", EmailVerified: true})
	c := e.client()
	start, _ := e.do(c, http.MethodPost, "/auth/oidc/login", url.Values{"code": {e.invite(1, time.Hour)}}, nil)
	if resp, _ := e.do(c, http.MethodGet, e.opLogin(c, o, start, "solo", nil).String(), nil, nil); resp.StatusCode != 303 {
		t.Fatalf("sign-up = %d", resp.StatusCode)
	}
	type step struct {
		Status  int
		Message string
	}
	steps := []struct {
		name   string
		client *http.Client
		path   string
		form   url.Values
		want   step
	}{
		{"the dummy password", e.client(), "/login", url.Values{"email": {"solo@example.com"}, "password": {"not a real password, only for timing"}},
			step{401, "Wrong email or password."}},
		{"an empty-looking password", e.client(), "/login", url.Values{"email": {"solo@example.com"}, "password": {" "}}, step{401, "Wrong email or password."}},
		{"unlinking the only way in", c, "/settings/sign-in/oidc/unlink", url.Values{},
			step{409, "This is your only way to sign in: set a password or link another account first."}},
		{"a short first password", c, "/settings/password", url.Values{"new": {"short"}}, step{422, "The password must be at least 10 characters long."}},
		{"a first password", c, "/settings/password", url.Values{"new": {"a first password"}}, step{303, ""}},
		{"a second one needs the first", c, "/settings/password", url.Values{"new": {"a second password"}}, step{401, "The current password is wrong."}},
		{"now unlinking", c, "/settings/sign-in/oidc/unlink", url.Values{}, step{303, ""}},
		{"unlinking again", c, "/settings/sign-in/oidc/unlink", url.Values{}, step{404, "No account of this provider is linked."}},
		{"signing in with the password", e.client(), "/login", url.Values{"email": {"solo@example.com"}, "password": {"a first password"}}, step{303, ""}},
	}
	for _, st := range steps {
		resp, body := e.do(st.client, http.MethodPost, st.path, st.form, nil)
		if got := (step{resp.StatusCode, pageError(body)}); got != st.want {
			t.Fatalf("%s: got %+v, want %+v", st.name, got, st.want)
		}
	}
}

func TestProviderDown(t *testing.T) {
	e := newEnv(t, func(d *Deps) {
		d.SignIn.OIDC = &OIDCConfig{Issuer: "http://127.0.0.1:1", ClientID: "c", DisplayName: "Far IdP"}
	})
	resp, body := e.do(nil, http.MethodPost, "/auth/oidc/login", nil, nil)
	if resp.StatusCode != http.StatusBadGateway || pageError(body) != "Far IdP could not be reached: try again in a moment." {
		t.Fatalf("start with the provider down = %d %q", resp.StatusCode, pageError(body))
	}
}

// TestProviderStartsAreThrottled: each start counts against the address,
// like a failed password; a finished sign-in gives its start back.
func TestProviderStartsAreThrottled(t *testing.T) {
	e, o := newOIDCEnv(t)
	u, _ := e.user(hoard.RoleUser)
	o.addUser(testOPUser{ID: "regular", Email: u.Email, EmailVerified: true})
	if _, err := e.db.LinkIdentity(t.Context(), u.ID, hoard.Identity{Provider: oidcKey, Issuer: o.issuer, Subject: "regular"}); err != nil {
		t.Fatal(err)
	}
	for i := range maxFailuresAddress + 5 {
		c := e.client()
		start, _ := e.do(c, http.MethodPost, "/auth/oidc/login", nil, nil)
		if resp, _ := e.do(c, http.MethodGet, e.opLogin(c, o, start, "regular", nil).String(), nil, nil); resp.StatusCode != 303 {
			t.Fatalf("finished sign-in %d = %d", i, resp.StatusCode)
		}
	}
	var statuses []int
	for range maxFailuresAddress + 1 {
		resp, _ := e.do(nil, http.MethodPost, "/auth/oidc/login", nil, nil)
		statuses = append(statuses, resp.StatusCode)
	}
	want := append(slices.Repeat([]int{303}, maxFailuresAddress), 429)
	if !slices.Equal(statuses, want) {
		t.Fatalf("unfinished starts answered %v, want %v", statuses, want)
	}
}

// TestSignInPagesOfferProviders: the sign-in, registration and settings
// pages show a button per configured provider and let the page post to it
// (form-action); with none configured, nothing changes.
func TestSignInPagesOfferProviders(t *testing.T) {
	type want struct {
		Buttons    []string
		FormAction string
		Settings   bool // Settings has the "Ways to sign in" section
		Start      int  // status of POST /auth/oidc/login
	}
	var o *testOP
	var gh *fakeGitHub
	both := newEnv(t, func(d *Deps) {
		o, gh = newTestOP(t, d.AppURL), newFakeGitHub(t, d.AppURL)
		d.SignIn.OIDC, d.SignIn.GitHub = o.config(), gh.config()
	})
	none := newEnv(t)
	buttons := regexp.MustCompile(`data-provider="([a-z]+)"`)
	for _, tc := range []struct {
		name string
		e    *testEnv
		want want
	}{
		{"both providers", both, want{Buttons: []string{"oidc", "github"},
			FormAction: "form-action 'self' " + o.issuer + " " + gh.server.URL, Settings: true, Start: 303}},
		{"none", none, want{FormAction: "form-action 'self';", Start: 404}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, _ := tc.e.user(hoard.RoleUser)
			var got want
			for _, path := range []string{"/login", "/register?code=abcdef"} {
				resp, body := tc.e.do(nil, http.MethodGet, path, nil, nil)
				var keys []string
				for _, m := range buttons.FindAllStringSubmatch(body, -1) {
					keys = append(keys, m[1])
				}
				if path == "/login" {
					got.Buttons = keys
					csp := resp.Header.Get("Content-Security-Policy")
					i := strings.Index(csp, "form-action")
					got.FormAction = csp[i : i+strings.Index(csp[i:], ";")+1]
					if tc.want.FormAction != "form-action 'self';" {
						got.FormAction = strings.TrimSuffix(got.FormAction, ";")
					}
				} else if !slices.Equal(keys, got.Buttons) {
					t.Errorf("register page buttons %v, login page %v", keys, got.Buttons)
				}
			}
			_, body := tc.e.do(nil, http.MethodGet, "/settings", nil, tc.e.session(u))
			got.Settings = strings.Contains(body, `id="sign-in"`)
			resp, _ := tc.e.do(nil, http.MethodPost, "/auth/oidc/login", nil, nil)
			got.Start = resp.StatusCode
			if !slices.Equal(got.Buttons, tc.want.Buttons) || got.FormAction != tc.want.FormAction || got.Settings != tc.want.Settings || got.Start != tc.want.Start {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestAccountFromClaims(t *testing.T) {
	admins := []string{"hoard-admins", "https://example.com/admin"}
	tests := []struct {
		name   string
		claims string
		claim  string // the role claim ("" = no mapping)
		want   providerAccount
		err    bool
	}{
		{"plain", `{"sub":"s1","email":"a@x.example","email_verified":true}`, "", providerAccount{Subject: "s1", Email: "a@x.example", EmailVerified: true}, false},
		{"verified as a string", `{"sub":"s1","email":"a@x.example","email_verified":"TRUE"}`, "", providerAccount{Subject: "s1", Email: "a@x.example", EmailVerified: true}, false},
		{"unverified", `{"sub":"s1","email":"a@x.example","email_verified":"yes"}`, "", providerAccount{Subject: "s1", Email: "a@x.example"}, false},
		{"groups list grants", `{"sub":"s1","groups":["staff","hoard-admins"]}`, "groups", providerAccount{Subject: "s1", Role: hoard.RoleAdmin}, false},
		{"groups list without it", `{"sub":"s1","groups":["staff"]}`, "groups", providerAccount{Subject: "s1", Role: hoard.RoleUser}, false},
		{"a single string", `{"sub":"s1","role":"hoard-admins"}`, "role", providerAccount{Subject: "s1", Role: hoard.RoleAdmin}, false},
		{"a nested path", `{"sub":"s1","realm_access":{"roles":["hoard-admins"]}}`, "realm_access.roles", providerAccount{Subject: "s1", Role: hoard.RoleAdmin}, false},
		{"a claim named with dots", `{"sub":"s1","https://example.com/roles":["https://example.com/admin"]}`, "https://example.com/roles",
			providerAccount{Subject: "s1", Role: hoard.RoleAdmin}, false},
		{"a missing claim", `{"sub":"s1"}`, "groups", providerAccount{Subject: "s1", Role: hoard.RoleUser}, false},
		{"a claim of another type", `{"sub":"s1","groups":{"hoard-admins":true}}`, "groups", providerAccount{Subject: "s1", Role: hoard.RoleUser}, false},
		{"no subject", `{"email":"a@x.example"}`, "", providerAccount{}, true},
		{"a subject with a NUL", `{"sub":"a\u0000b"}`, "", providerAccount{}, true},
		{"a subject too long", `{"sub":"` + strings.Repeat("s", maxSubjectLen+1) + `"}`, "", providerAccount{}, true},
		{"an e-mail with a control character", `{"sub":"s1","email":"a\u0007@x.example"}`, "", providerAccount{Subject: "s1"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			claims := map[string]any{}
			if err := json.Unmarshal([]byte(tc.claims), &claims); err != nil {
				t.Fatal(err)
			}
			got, err := accountFromClaims(claims, tc.claim, admins)
			if got != tc.want || (err != nil) != tc.err {
				t.Fatalf("accountFromClaims = %+v, %v; want %+v, error %v", got, err, tc.want, tc.err)
			}
		})
	}
}

// FuzzAccountFromClaims: whatever claims a provider sends, the account read
// from them has a clean, bounded subject and e-mail, or there is an error.
func FuzzAccountFromClaims(f *testing.F) {
	f.Add([]byte(`{"sub":"s1","email":"a@x.example","email_verified":true,"groups":["hoard-admins"]}`), "groups")
	f.Add([]byte(`{"sub":"s1","realm_access":{"roles":"hoard-admins"}}`), "realm_access.roles")
	f.Add([]byte(`{"sub":["s"],"email":7}`), "a..b")
	f.Fuzz(func(t *testing.T, raw []byte, claim string) {
		claims := map[string]any{}
		if json.Unmarshal(raw, &claims) != nil {
			return
		}
		acct, err := accountFromClaims(claims, claim, []string{"hoard-admins"})
		if err != nil {
			return
		}
		if acct.Subject == "" || checkText("sub", acct.Subject, maxSubjectLen) != nil || checkText("email", acct.Email, maxEmailLen) != nil {
			t.Fatalf("unusable account accepted: %+v", acct)
		}
		if (claim == "") != (acct.Role == "") {
			t.Fatalf("role %q with claim %q", acct.Role, claim)
		}
	})
}
