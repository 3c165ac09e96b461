package web

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

// call sends a request as a program does: an optional form (a POST says
// hoard's origin), cookie and Authorization header.
func (e *testEnv) call(method, path string, form url.Values, cookie *http.Cookie, authorization string) (*http.Response, string) {
	e.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, e.ts.URL+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if method != http.MethodGet && method != http.MethodHead {
		req.Header.Set("Origin", e.ts.URL)
	}
	if cookie != nil {
		req.AddCookie(cookie)
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := e.client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// token makes an app token of u and returns its secret.
func (e *testEnv) token(u *hoard.User, name string) (*hoard.AppToken, string) {
	e.t.Helper()
	tok, secret, err := e.db.CreateAppToken(context.Background(), u.ID, name)
	if err != nil {
		e.t.Fatal(err)
	}
	return tok, secret
}

// lockedBuffer collects a server's log lines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// authOutcome is what a request's authentication came to.
type authOutcome struct {
	Status    int
	Challenge string // WWW-Authenticate
	Code      string // the JSON error's code
}

func outcomeOf(resp *http.Response, body string) authOutcome {
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.Unmarshal([]byte(body), &e)
	return authOutcome{Status: resp.StatusCode, Challenge: resp.Header.Get("WWW-Authenticate"), Code: e.Error.Code}
}

// TestTokenAuthentication: a bearer token acts as its user on the routes
// that take tokens, for reading only; revoked tokens, tokens of removed
// users and unknown secrets get 401; tokens never reach administration
// and never fall back to a cookie; cookies work as before.
func TestTokenAuthentication(t *testing.T) {
	logs := &lockedBuffer{}
	e := newEnv(t, func(d *Deps) {
		d.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	ctx := context.Background()
	user, _ := e.user(hoard.RoleUser)
	other, _ := e.user(hoard.RoleUser)
	admin, _ := e.user(hoard.RoleAdmin)
	gone, _ := e.user(hoard.RoleUser)
	tok, good := e.token(user, "good")
	_, adminToken := e.token(admin, "admin's")
	revokedTok, revoked := e.token(user, "revoked")
	if err := e.db.RevokeAppToken(ctx, revokedTok.ID, user.ID); err != nil {
		t.Fatal(err)
	}
	_, goneToken := e.token(gone, "gone")
	if err := e.db.DeleteUser(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	mine := &hoard.Crowdfund{UserID: user.ID, Name: "Mine", DeliveryStatus: hoard.DeliveryNone, PaymentStatus: hoard.PaymentUnpaid}
	theirs := &hoard.Crowdfund{UserID: other.ID, Name: "Theirs", DeliveryStatus: hoard.DeliveryNone, PaymentStatus: hoard.PaymentUnpaid}
	for _, c := range []*hoard.Crowdfund{mine, theirs} {
		if err := e.db.SaveCrowdfund(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	search := func(c *hoard.Crowdfund) string {
		return "/api/crowdfunds/" + strconv.FormatInt(c.ID, 10) + "/packages/search"
	}
	userCookie, adminCookie := e.session(user), e.session(admin)
	bearer := func(s string) string { return "Bearer " + s }

	ok := authOutcome{Status: 200}
	invalid := authOutcome{Status: 401, Challenge: bearerInvalidToken, Code: hoard.EUNAUTHORIZED}
	refused := authOutcome{Status: 403, Challenge: bearerInsufficientUse, Code: hoard.EFORBIDDEN}
	refusedPage := authOutcome{Status: 403, Challenge: bearerInsufficientUse} // an HTML error page, as for browsers
	for _, tc := range []struct {
		name          string
		method, path  string
		cookie        *http.Cookie
		authorization string
		want          authOutcome
	}{
		{"no auth", "GET", "/api/packages", nil, "", authOutcome{Status: 401, Challenge: bearerChallenge, Code: hoard.EUNAUTHORIZED}},
		{"cookie as before", "GET", "/api/packages", userCookie, "", ok},
		{"good token", "GET", "/api/packages?q=dragon&limit=5", nil, bearer(good), ok},
		{"scheme in any case", "GET", "/api/packages", nil, "bearer " + good, ok},
		{"good token acts as its user", "GET", search(mine), nil, bearer(good), ok},
		{"good token, another user's record", "GET", search(theirs), nil, bearer(good), authOutcome{Status: 404, Code: hoard.ENOTFOUND}},
		{"revoked token", "GET", "/api/packages", nil, bearer(revoked), invalid},
		{"token of a deleted user", "GET", "/api/packages", nil, bearer(goneToken), invalid},
		{"unknown secret", "GET", "/api/packages", nil, bearer("hoard_" + strings.Repeat("a", 52)), invalid},
		{"empty bearer", "GET", "/api/packages", nil, "Bearer ", invalid},
		{"revoked token beside a good cookie", "GET", "/api/packages", userCookie, bearer(revoked), invalid},
		{"token on a POST", "POST", "/settings/tokens", nil, bearer(good), refusedPage},
		{"token on an API POST", "POST", "/api/messenger/bot/send", nil, bearer(good), refused},
		{"token on a signed-in page", "GET", "/settings", nil, bearer(good), refusedPage},
		{"admin's token on an admin route", "GET", "/api/ingestion/status", nil, bearer(adminToken), refused},
		{"admin's token on an admin page", "GET", "/admin/invites", nil, bearer(adminToken), refusedPage},
		{"admin's token beside the admin's cookie", "GET", "/api/ingestion/status", adminCookie, bearer(adminToken), refused},
		{"admin's cookie on the admin route", "GET", "/api/ingestion/status", adminCookie, "", ok},
		{"admin's token on an opted-in route", "GET", "/api/packages", nil, bearer(adminToken), ok},
		{"revoked token on an admin route", "GET", "/api/ingestion/status", nil, bearer(revoked), refused},
		{"OpenAPI without auth", "GET", "/api/openapi.json", nil, "", ok},
		{"OpenAPI with a token", "GET", "/api/openapi.json", nil, bearer(good), ok},
		{"OpenAPI with a revoked token", "GET", "/api/openapi.json", nil, bearer(revoked), invalid},
		{"public page ignores a bearer", "GET", "/status", nil, bearer(revoked), ok},
		{"basic auth is no token", "GET", "/api/packages", nil, "Basic dTpw", authOutcome{Status: 401, Challenge: bearerChallenge, Code: hoard.EUNAUTHORIZED}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var form url.Values
			if tc.method == http.MethodPost {
				form = url.Values{"name": {"x"}}
			}
			if got := outcomeOf(e.call(tc.method, tc.path, form, tc.cookie, tc.authorization)); got != tc.want {
				t.Errorf("%s %s = %+v, want %+v", tc.method, tc.path, got, tc.want)
			}
		})
	}
	// Nothing was made by the refused POST; the good token's use is on
	// record; no secret reached the log.
	if list, err := e.db.ListAppTokens(ctx, user.ID); err != nil || len(list) != 1 || list[0].ID != tok.ID || list[0].LastUsedAt == nil {
		t.Errorf("tokens after the requests = %+v (%v)", list, err)
	}
	for _, secret := range []string{good, revoked, adminToken, goneToken} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("a secret reached the log:\n%s", logs.String())
		}
	}
}

// TestAdminTokenActsAsUser: inside handlers too, an administrator's token
// has a user's rights (userFromToken hands out the role USER).
func TestAdminTokenActsAsUser(t *testing.T) {
	e := newEnv(t)
	admin, _ := e.user(hoard.RoleAdmin)
	_, secret := e.token(admin, "script")
	req := httptestRequest(t, "Bearer "+secret)
	u, ok, err := e.srv.tokenUser(req)
	if err != nil || !ok || u.ID != admin.ID || u.IsAdmin() {
		t.Fatalf("tokenUser = %+v, %v, %v", u, ok, err)
	}
	if u, ok, err := e.srv.tokenUser(httptestRequest(t, "")); u != nil || ok || err != nil {
		t.Fatalf("tokenUser without a header = %+v, %v, %v", u, ok, err)
	}
	u, err = e.srv.userFromToken(httptestRequest(t, ""), secret)
	if err != nil || u.ID != admin.ID || u.IsAdmin() {
		t.Fatalf("userFromToken = %+v, %v", u, err)
	}
}

func httptestRequest(t *testing.T, authorization string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://hoard.test/api/packages", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.RemoteAddr = "192.0.2.7:5555"
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	return req
}

// TestTokenThrottle: unknown secrets count against the address's sign-in
// throttle; once it is locked, every token from there is refused (429), a
// good one too, and so are password sign-ins.
func TestTokenThrottle(t *testing.T) {
	e := newEnv(t)
	user, password := e.user(hoard.RoleUser)
	_, good := e.token(user, "good")
	bad := "Bearer hoard_" + strings.Repeat("b", 52)
	for i := range maxFailuresAddress {
		if got := outcomeOf(e.call("GET", "/api/packages", nil, nil, bad)); got.Status != 401 {
			t.Fatalf("failure %d = %+v, want 401", i+1, got)
		}
	}
	tooMany := authOutcome{Status: 429, Code: hoard.ERATELIMITED}
	if got := outcomeOf(e.call("GET", "/api/packages", nil, nil, bad)); got != tooMany {
		t.Fatalf("failure past the limit = %+v, want %+v", got, tooMany)
	}
	if got := outcomeOf(e.call("GET", "/api/packages", nil, nil, "Bearer "+good)); got != tooMany {
		t.Errorf("good token from a locked address = %+v, want %+v", got, tooMany)
	}
	resp, _ := e.call("POST", "/login", url.Values{"email": {user.Email}, "password": {password}}, nil, "")
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("password sign-in from the locked address = %d, want 429", resp.StatusCode)
	}
	// Another address is not locked.
	req := httptestRequest(t, "Bearer "+good)
	if u, _, err := e.srv.tokenUser(req); err != nil || u.ID != user.ID {
		t.Errorf("good token from another address = %+v, %v", u, err)
	}
}

// TestTokenRoutes: tokens are read-only and never administration: the
// routes that take them are exactly the API's GET routes that are not
// Admin (and the OpenAPI document among them).
func TestTokenRoutes(t *testing.T) {
	s := &Server{}
	for _, rt := range s.routes() {
		key := rt.Method + " " + rt.Pattern
		download := strings.HasSuffix(rt.Pattern, "/download")
		want := rt.Method == http.MethodGet && (strings.HasPrefix(rt.Pattern, "/api/") || download) && rt.Access != Admin
		if rt.Tokens != want {
			t.Errorf("%s: Tokens %v, want %v", key, rt.Tokens, want)
		}
		if rt.Tokens && (rt.Method != http.MethodGet || rt.Access == Admin || rt.Mount) {
			t.Errorf("%s takes tokens but is not a read-only, non-admin route", key)
		}
	}
}

var secretOnPage = regexp.MustCompile(`hoard_[a-z2-7]{52}`)

// TestSettingsTokens: Settings makes a named token and shows its secret
// once, lists tokens with their prefix, and revokes them: the owner or an
// administrator, nobody else.
func TestSettingsTokens(t *testing.T) {
	e := newEnv(t)
	user, _ := e.user(hoard.RoleUser)
	other, _ := e.user(hoard.RoleUser)
	admin, _ := e.user(hoard.RoleAdmin)
	cookie := e.session(user)

	resp, body := e.do(nil, "POST", "/settings/tokens", url.Values{"name": {"  backup <script>  "}}, cookie)
	secret := secretOnPage.FindString(body)
	if resp.StatusCode != 200 || secret == "" || !strings.Contains(body, "shown only this once") || !strings.Contains(body, `data-copy="`+secret+`"`) {
		t.Fatalf("create = %d, secret %q\n%.2000s", resp.StatusCode, secret, body)
	}
	if resp.Header.Get("Cache-Control") != "no-store" || strings.Contains(body, "backup <script>") {
		t.Errorf("the page with the secret is stored or unescaped: %q", resp.Header.Get("Cache-Control"))
	}
	list, err := e.db.ListAppTokens(context.Background(), user.ID)
	if err != nil || len(list) != 1 || list[0].Name != "backup <script>" {
		t.Fatalf("tokens = %+v, %v", list, err)
	}
	id := strconv.FormatInt(list[0].ID, 10)
	_, page := e.do(nil, "GET", "/settings", nil, cookie)
	if secretOnPage.MatchString(page) || !strings.Contains(page, list[0].Prefix+"…") || !strings.Contains(page, "/settings/tokens/"+id+"/revoke") {
		t.Errorf("Settings shows the secret again, or not the token:\n%.3000s", page)
	}
	if got := outcomeOf(e.call("GET", "/api/packages", nil, nil, "Bearer "+secret)); got.Status != 200 {
		t.Fatalf("the new token = %+v", got)
	}

	for _, tc := range []struct {
		name string
		want int
	}{{"", 422}, {"   ", 422}, {strings.Repeat("n", 65), 422}} {
		if resp, body := e.do(nil, "POST", "/settings/tokens", url.Values{"name": {tc.name}, "back": {"/settings"}}, cookie); resp.StatusCode != tc.want ||
			!strings.Contains(body, "App tokens") {
			t.Errorf("name %q = %d, want %d on Settings\n%.500s", tc.name, resp.StatusCode, tc.want, body)
		}
	}

	// Another user cannot revoke it; its owner can, and it stops at once.
	if resp, _ := e.do(nil, "POST", "/settings/tokens/"+id+"/revoke", url.Values{}, e.session(other)); resp.StatusCode != 404 {
		t.Errorf("another user's revoke = %d, want 404", resp.StatusCode)
	}
	if resp, _ := e.do(nil, "POST", "/settings/tokens/"+id+"/revoke", url.Values{}, cookie); resp.StatusCode != 303 ||
		resp.Header.Get("Location") != "/settings?done=token-revoked#tokens" {
		t.Errorf("revoke = %d → %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if got := outcomeOf(e.call("GET", "/api/packages", nil, nil, "Bearer "+secret)); got.Status != 401 {
		t.Errorf("the revoked token = %+v, want 401", got)
	}
	// An administrator may revoke anyone's.
	otherTok, otherSecret := e.token(other, "theirs")
	if resp, _ := e.do(nil, "POST", "/settings/tokens/"+strconv.FormatInt(otherTok.ID, 10)+"/revoke", url.Values{}, e.session(admin)); resp.StatusCode != 303 {
		t.Errorf("administrator's revoke = %d, want 303", resp.StatusCode)
	}
	if got := outcomeOf(e.call("GET", "/api/packages", nil, nil, "Bearer "+otherSecret)); got.Status != 401 {
		t.Errorf("the token an administrator revoked = %+v, want 401", got)
	}

	// At most MaxAppTokensPerUser live tokens: then 409 on Settings.
	for i := range store.MaxAppTokensPerUser {
		e.token(other, "t"+strconv.Itoa(i))
	}
	if resp, body := e.do(nil, "POST", "/settings/tokens", url.Values{"name": {"one more"}, "back": {"/settings"}}, e.session(other)); resp.StatusCode != 409 ||
		!strings.Contains(body, "revoke one first") {
		t.Errorf("past the limit = %d\n%.500s", resp.StatusCode, body)
	}
}
