package web

import (
	"context"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store/storetest"
)

func form(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

func (e *testEnv) invite(maxUses int, expiresIn time.Duration) string {
	e.t.Helper()
	codes, err := CreateInvites(context.Background(), e.db, InviteOptions{Count: 1, MaxUses: maxUses, ExpiresIn: expiresIn, Role: hoard.RoleUser})
	if err != nil {
		e.t.Fatal(err)
	}
	return codes[0].Code
}

func TestRegisterSignInSignOut(t *testing.T) {
	e := newEnv(t)
	code := e.invite(1, time.Hour)
	browser := e.client()

	// The invite link pre-fills the code.
	resp, body := e.do(browser, "GET", "/register?code="+code, nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(body, `value="`+code+`"`) {
		t.Fatalf("register form: %d, code not pre-filled", resp.StatusCode)
	}
	resp, body = e.do(browser, "POST", "/register", form("code", code, "email", "new@example.com", "password", "a long enough password"), nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("register = %d\n%s", resp.StatusCode, body)
	}
	u, err := e.db.FindUserByEmail(context.Background(), "NEW@example.com")
	if err != nil || u.Role != hoard.RoleUser {
		t.Fatalf("registered user = %+v, %v", u, err)
	}
	cookie := resp.Cookies()[0]
	if !cookie.HttpOnly || cookie.SameSite != http.SameSiteLaxMode || cookie.Secure {
		t.Fatalf("session cookie flags: %+v", cookie)
	}
	resp, body = e.do(browser, "GET", "/settings", nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(body, "new@example.com") {
		t.Fatalf("settings after registration = %d", resp.StatusCode)
	}
	// The code is used up now.
	resp, body = e.do(nil, "POST", "/register", form("code", code, "email", "other@example.com", "password", "a long enough password"), nil)
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "used up") {
		t.Fatalf("second registration with a one-use code = %d", resp.StatusCode)
	}

	resp, _ = e.do(browser, "POST", "/logout", url.Values{}, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout = %d", resp.StatusCode)
	}
	if resp, _ = e.do(browser, "GET", "/settings", nil, nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("settings after logout = %d, want a redirect to sign in", resp.StatusCode)
	}

	resp, body = e.do(browser, "POST", "/login", form("email", "new@example.com", "password", "wrong password!"), nil)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "Wrong email or password") {
		t.Fatalf("wrong password = %d", resp.StatusCode)
	}
	resp, _ = e.do(browser, "POST", "/login", form("email", "New@Example.com", "password", "a long enough password", "next", "/settings"), nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/settings" {
		t.Fatalf("sign in = %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp.Cookies()[0].Value == cookie.Value {
		t.Fatal("the session id was not rotated at sign-in")
	}
}

func TestRegistrationRefusals(t *testing.T) {
	e := newEnv(t)
	expired := storetest.Invite(t, e.db, storetest.InviteOpts{MaxUses: 5, ExpiresAt: time.Now().Add(-time.Minute)}).Code
	valid := e.invite(5, time.Hour)
	taken, _ := e.user(hoard.RoleUser)
	tests := []struct {
		name   string
		f      url.Values
		status int
		msg    string
	}{
		{"no code", form("email", "a@example.com", "password", "long enough pw"), 422, "needs an invite code"},
		{"unknown code", form("code", "nope", "email", "a@example.com", "password", "long enough pw"), 422, "not valid"},
		{"expired code", form("code", expired, "email", "a@example.com", "password", "long enough pw"), 422, "expired"},
		{"bad email", form("code", valid, "email", "not-an-email", "password", "long enough pw"), 422, "valid email"},
		{"short password", form("code", valid, "email", "a@example.com", "password", "short"), 422, "at least 10"},
		{"passwords differ", form("code", valid, "email", "a@example.com", "password", "long enough pw", "confirm", "long enough pv"), 422, "two passwords differ"},
		{"email taken", form("code", valid, "email", strings.ToUpper(taken.Email), "password", "long enough pw"), 409, "already exists"},
		{"markup is escaped", form("code", "<script>x</script>", "email", "a@example.com", "password", "long enough pw"), 422, "&lt;script&gt;"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := e.do(nil, "POST", "/register", tt.f, nil)
			if resp.StatusCode != tt.status || !strings.Contains(body, tt.msg) {
				t.Fatalf("status %d (want %d), body lacks %q", resp.StatusCode, tt.status, tt.msg)
			}
			if strings.Contains(body, "<script>x</script>") {
				t.Fatal("unescaped markup in the page")
			}
		})
	}
}

// TestInviteRace: 50 concurrent registrations on a code with 5 uses; exactly
// 5 succeed and the code counts 5 uses.
func TestInviteRace(t *testing.T) {
	e := newEnv(t)
	code := e.invite(5, time.Hour)
	var wg sync.WaitGroup
	statuses := make([]int, 50)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, _ := e.do(nil, "POST", "/register", form("code", code, "email", "racer"+itoa(int64(i))+"@example.com",
				"password", "a long enough password"), nil)
			statuses[i] = resp.StatusCode
		}()
	}
	wg.Wait()
	ok := 0
	for _, s := range statuses {
		switch s {
		case http.StatusSeeOther:
			ok++
		case http.StatusUnprocessableEntity:
		default:
			t.Errorf("unexpected status %d", s)
		}
	}
	inv, err := e.db.FindInviteByCode(context.Background(), code)
	if err != nil {
		t.Fatal(err)
	}
	if ok != 5 || inv.UseCount != 5 {
		t.Fatalf("%d registrations succeeded, use count %d; want 5 and 5", ok, inv.UseCount)
	}
}

func TestSignInThrottling(t *testing.T) {
	e := newEnv(t)
	u, password := e.user(hoard.RoleUser)
	for i := 0; i < maxFailuresAccount; i++ {
		resp, _ := e.do(nil, "POST", "/login", form("email", u.Email, "password", "wrong password"), nil)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("failure %d = %d", i+1, resp.StatusCode)
		}
	}
	resp, body := e.do(nil, "POST", "/login", form("email", u.Email, "password", password), nil)
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, "Too many failed sign-ins") {
		t.Fatalf("after %d failures the right password got %d", maxFailuresAccount, resp.StatusCode)
	}
	other, otherPassword := e.user(hoard.RoleUser)
	if resp, _ := e.do(nil, "POST", "/login", form("email", other.Email, "password", otherPassword), nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("another account is locked too: %d", resp.StatusCode)
	}
}

// fromAddress is a client whose connections come from another loopback
// address (the server throttles sign-ins per peer address).
func (e *testEnv) fromAddress(ip string) *http.Client {
	c := e.client()
	c.Transport = &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).DialContext}
	return c
}

// TestSignInThrottleRace: 40 wrong passwords at once for one account from
// one address — exactly maxFailuresAccount of them reach the password
// check, the rest are refused before it; meanwhile the owner signs in from
// another address, and after the burst the lock holds for the attackers'
// address only.
func TestSignInThrottleRace(t *testing.T) {
	e := newEnv(t)
	u, password := e.user(hoard.RoleUser)
	owner := e.fromAddress("127.0.0.2")
	statuses := make(chan int, 40)
	var ownerStatus atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 40 {
		wg.Go(func() {
			<-start
			resp, _ := e.do(nil, "POST", "/login", form("email", u.Email, "password", "wrong password"), nil)
			statuses <- resp.StatusCode
		})
	}
	wg.Go(func() {
		<-start
		resp, _ := e.do(owner, "POST", "/login", form("email", u.Email, "password", password), nil)
		ownerStatus.Store(int64(resp.StatusCode))
	})
	close(start)
	wg.Wait()
	close(statuses)
	got := map[int]int{}
	for st := range statuses {
		got[st]++
	}
	if want := map[int]int{http.StatusUnauthorized: maxFailuresAccount, http.StatusTooManyRequests: 40 - maxFailuresAccount}; !maps.Equal(got, want) {
		t.Errorf("statuses of 40 concurrent wrong passwords = %v, want %v", got, want)
	}
	// The attackers' checks plus the owner's one.
	if n := e.srv.passwordChecks.Load(); n != maxFailuresAccount+1 {
		t.Errorf("%d password checks, want exactly %d + the owner's 1", n, maxFailuresAccount)
	}
	if st := ownerStatus.Load(); st != http.StatusSeeOther {
		t.Errorf("the owner signing in from another address meanwhile = %d, want 303", st)
	}
	// Afterwards: the attackers' address stays locked for this account,
	// even with the right password; the owner's address is not.
	if resp, _ := e.do(nil, "POST", "/login", form("email", u.Email, "password", password), nil); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("the right password from the locked address = %d, want 429", resp.StatusCode)
	}
	if resp, _ := e.do(owner, "POST", "/login", form("email", u.Email, "password", password), nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the owner from their address after the burst = %d, want 303", resp.StatusCode)
	}
	if n := e.srv.passwordChecks.Load(); n != maxFailuresAccount+2 {
		t.Errorf("%d password checks after the burst, want %d: a locked attempt reached its password check", n, maxFailuresAccount+2)
	}
}

func TestChangePasswordEndsOtherSessions(t *testing.T) {
	e := newEnv(t)
	u, password := e.user(hoard.RoleUser)
	mine, other := e.session(u), e.session(u)
	resp, _ := e.do(nil, "POST", "/settings/password", form("current", "nope", "new", "another long password"), mine)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong current password = %d", resp.StatusCode)
	}
	resp, _ = e.do(nil, "POST", "/settings/password", form("current", password, "new", "short"), mine)
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("short new password = %d", resp.StatusCode)
	}
	resp, _ = e.do(nil, "POST", "/settings/password", form("current", password, "new", "another long password"), mine)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("change = %d", resp.StatusCode)
	}
	if resp, _ := e.do(nil, "GET", "/settings", nil, mine); resp.StatusCode != 200 {
		t.Fatalf("own session ended: %d", resp.StatusCode)
	}
	if resp, _ := e.do(nil, "GET", "/settings", nil, other); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("other session still valid: %d", resp.StatusCode)
	}
	if resp, _ := e.do(nil, "POST", "/login", form("email", u.Email, "password", "another long password"), nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in with the new password = %d", resp.StatusCode)
	}
}

func TestCrossOriginPostIsRefused(t *testing.T) {
	e := newEnv(t)
	admin, _ := e.user(hoard.RoleAdmin)
	req, _ := http.NewRequest("POST", e.ts.URL+"/admin/invites", strings.NewReader("count=1"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	req.AddCookie(e.session(admin))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-origin POST = %d, want 403", resp.StatusCode)
	}
	invites, _ := e.db.ListInvites(context.Background())
	for _, inv := range invites {
		if inv.Role == hoard.RoleUser {
			t.Fatal("a cross-origin request created an invite")
		}
	}
}

// hostileNext are redirect targets an attacker might put in "next" or
// "back", each with the local path that must be sent instead ("/" when
// nothing of it can be kept).
var hostileNext = []struct{ next, want string }{
	{"/x/../\\evil.example", "/"},
	{"/x/../%5Cevil.example", "/"},
	{`/\evil.example`, "/"},
	{`\\evil.example`, "/"},
	{`/\/evil.example`, "/"},
	{"/%5Cevil.example", "/"},
	{"/%5C%5Cevil.example", "/"},
	{"//evil.example", "/"},
	{"///evil.example", "/"},
	{"//evil.example/%2e%2e", "/"},
	{"/%2F%2Fevil.example", "/"},
	{"/%2F/evil.example", "/"},
	{"/%2f%5cevil.example", "/"},
	{"https://evil.example/", "/"},
	{"http:evil.example", "/"},
	{"http:/evil.example", "/"},
	{"//user@evil.example", "/"},
	{"javascript:alert(1)", "/"},
	{"JaVaScRiPt:alert(1)", "/"},
	{"data:text/html,<script>alert(1)</script>", "/"},
	{"/\t/evil.example", "/"},
	{"/\n/evil.example", "/"},
	{"/\r/evil.example", "/"},
	{"/\r\n/evil.example", "/"},
	{"/%09/evil.example", "/"},
	{"/%0A/evil.example", "/"},
	{"/ /evil.example", "/"},
	{"/\u3000/evil.example", "/"},
	{"\t//evil.example", "/"},
	{"/\x00/evil.example", "/"},
	{"/%00/evil.example", "/"},
	{"\x00", "/"},
	{"/\xff\xfe", "/"},
	{"/" + strings.Repeat("a", maxLocalPathLen), "/"},
	{"", "/"},
	{"settings", "/"},
	{"./settings", "/"},
	{"../evil.example", "/"},
	{"evil.example", "/"},
	// Local targets are kept, cleaned as the redirect would clean them.
	{"/settings", "/settings"},
	{"/a?b=c", "/a?b=c"},
	{"/?next=//evil.example", "/?next=//evil.example"},
	{"/admin/messenger?done=join#joins", "/admin/messenger?done=join#joins"},
	{"/uploads/", "/uploads/"},
	{"/x/../settings", "/settings"},
	{"/x/../../evil.example", "/evil.example"},
	{"/.//evil.example", "/evil.example"},
	{"/x/..//evil.example", "/evil.example"},
	{"/@evil.example", "/@evil.example"},
	{"/x/..%2F%2Fevil.example", "/x/..%2F%2Fevil.example"},
	{"/crème", "/cr%C3%A8me"},
}

func TestLocalPath(t *testing.T) {
	for _, c := range hostileNext {
		if got := localPath(c.next); got != c.want {
			t.Errorf("localPath(%q) = %q, want %q", c.next, got, c.want)
		}
	}
}

// TestSignInRedirectStaysLocal sends every hostile "next" through the real
// redirects (signed in: GET /login; signing in: POST /login; a form's
// "back") and checks what the browser receives: a Location that resolves to
// this site and starts with exactly one slash.
func TestSignInRedirectStaysLocal(t *testing.T) {
	e := newEnv(t)
	u, password := e.user(hoard.RoleUser)
	cookie := e.session(u)
	base, _ := url.Parse(e.ts.URL + "/login")
	check := func(how, next string, resp *http.Response) {
		t.Helper()
		loc := resp.Header.Get("Location")
		target, err := base.Parse(loc)
		type redirect struct {
			Status                                       int
			ParseErr                                     error
			SameHost, Rooted, SchemeRelative, UnsafeChar bool
		}
		got := redirect{resp.StatusCode, err, err == nil && target.Host == base.Host, strings.HasPrefix(loc, "/"),
			strings.HasPrefix(loc, "//"), strings.ContainsFunc(loc, unsafeInPath)}
		want := redirect{Status: http.StatusSeeOther, SameHost: true, Rooted: true}
		if diff := cmp.Diff(want, got, cmpopts.EquateErrors()); diff != "" {
			t.Errorf("%s next=%q: Location %q (-want +got):\n%s", how, next, loc, diff)
		}
	}
	for i, c := range hostileNext {
		if len(c.next) > 2048 {
			continue // refused by the parameter bound (422), tested there
		}
		resp, _ := e.do(nil, "GET", "/login?next="+url.QueryEscape(c.next), nil, cookie)
		if checkText("next", c.next, maxParamBytes) != nil {
			// Not text at all (NUL, invalid UTF-8): refused before any
			// redirect.
			if resp.StatusCode != http.StatusUnprocessableEntity || resp.Header.Get("Location") != "" {
				t.Errorf("GET /login?next=%q = %d %q, want 422", c.next, resp.StatusCode, resp.Header.Get("Location"))
			}
			continue
		}
		if loc := resp.Header.Get("Location"); loc != c.want {
			t.Errorf("GET /login?next=%q: Location %q, want %q", c.next, loc, c.want)
		}
		check("GET /login", c.next, resp)
		if i%8 == 0 { // a sign-in costs a password hash: a sample is enough
			resp, _ = e.do(nil, "POST", "/login", form("email", u.Email, "password", password, "next", c.next), nil)
			check("POST /login", c.next, resp)
		}
	}
}

func TestFirstAdminAndEnsureAdmin(t *testing.T) {
	e := newEnv(t) // Start already made the first-administrator link
	ctx := context.Background()
	link, err := FirstAdminLink(ctx, e.db, e.srv.deps.AppURL)
	if err != nil || link == "" {
		t.Fatalf("link = %q, %v", link, err)
	}
	again, _ := FirstAdminLink(ctx, e.db, e.srv.deps.AppURL)
	if again != link {
		t.Fatalf("a second call made another link: %s vs %s", again, link)
	}
	code := strings.TrimPrefix(link, e.srv.deps.AppURL+"/register?code=")
	resp, _ := e.do(nil, "POST", "/register", form("code", code, "email", "boss@example.com", "password", "a long enough password"), nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("register with the first-admin link = %d", resp.StatusCode)
	}
	boss, _ := e.db.FindUserByEmail(ctx, "boss@example.com")
	if !boss.IsAdmin() {
		t.Fatal("the first-admin link did not make an administrator")
	}
	if link, _ := FirstAdminLink(ctx, e.db, e.srv.deps.AppURL); link != "" {
		t.Fatal("a link was made although a user exists")
	}

	created, err := EnsureAdmin(ctx, e.db, "ops@example.com", "ops password long")
	if err != nil || !created {
		t.Fatalf("EnsureAdmin = %v, %v", created, err)
	}
	if created, err = EnsureAdmin(ctx, e.db, "ops@example.com", "ops password long"); err != nil || created {
		t.Fatalf("second EnsureAdmin = %v, %v", created, err)
	}
	u, _ := e.user(hoard.RoleUser)
	if _, err := EnsureAdmin(ctx, e.db, u.Email, "irrelevant here"); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.db.FindUserByID(ctx, u.ID); !got.IsAdmin() || got.PasswordHash != u.PasswordHash {
		t.Fatal("EnsureAdmin did not promote the user, or changed its password")
	}
	if _, err := EnsureAdmin(ctx, e.db, "x@example.com", "short"); hoard.ErrorCode(err) != hoard.EINVALID {
		t.Fatalf("short password: %v", err)
	}
}

func TestPasswordHashing(t *testing.T) {
	ctx := context.Background()
	h, err := hashPassword(ctx, "correct horse")
	if err != nil || !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("hash = %q, %v", h, err)
	}
	h2, _ := hashPassword(ctx, "correct horse")
	if h == h2 {
		t.Fatal("two hashes of one password are equal: no salt")
	}
	for pw, want := range map[string]bool{"correct horse": true, "correct horsE": false, "": false} {
		if ok, err := verifyPassword(ctx, h, pw); err != nil || ok != want {
			t.Errorf("verify(%q) = %v, %v", pw, ok, err)
		}
	}
	for _, bad := range []string{"", "plain", "$argon2i$v=19$m=1,t=1,p=1$AA$AA", "$argon2id$v=19$m=999999999,t=1,p=1$AA$AA", "$argon2id$v=19$m=8,t=1,p=1$!!$AA"} {
		if _, err := verifyPassword(ctx, bad, "x"); err == nil {
			t.Errorf("verify accepted malformed hash %q", bad)
		}
	}
}

// TestStateChangingRequestsNeedAnOrigin: a state-changing request that
// says neither its Origin nor its Sec-Fetch-Site is refused, whether a
// session cookie authenticates it or it would sign in or register (issue
// #26); what browsers send on hoard's own pages passes, and reading needs
// neither.
func TestStateChangingRequestsNeedAnOrigin(t *testing.T) {
	e := newEnv(t)
	admin, password := e.user(hoard.RoleAdmin)
	cookie := e.session(admin)
	const refused = "neither an Origin nor a Sec-Fetch-Site header"
	before, err := e.db.ListInvites(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, method, path, body string
		cookie                   bool
		headers                  map[string]string
		status                   int
		says                     string
	}{
		{"cookie, no headers", "POST", "/admin/invites", "count=1", true, nil, 403, refused},
		{"cookie, DELETE without headers", "DELETE", "/admin/invites/1", "", true, nil, 403, refused},
		{"sign-in, no headers", "POST", "/login", "email=" + url.QueryEscape(admin.Email) + "&password=" + url.QueryEscape(password), false, nil, 403, refused},
		{"registration, no headers", "POST", "/register", "code=x&email=a%40example.com&password=long+enough+pw", false, nil, 403, refused},
		{"provider sign-in, no headers", "POST", "/auth/github/login", "", false, nil, 403, refused},
		{"cookie, our Origin", "POST", "/admin/invites", "count=1", true, map[string]string{"Origin": "{base}"}, 303, ""},
		{"cookie, same-origin fetch", "POST", "/admin/invites", "count=1", true, map[string]string{"Sec-Fetch-Site": "same-origin"}, 303, ""},
		{"cookie, cross-site fetch", "POST", "/admin/invites", "count=1", true, map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, "Cross-origin"},
		{"cookie, another Origin", "POST", "/admin/invites", "count=1", true, map[string]string{"Origin": "https://evil.example"}, 403, "Cross-origin"},
		{"sign-in, our Origin", "POST", "/login", "email=" + url.QueryEscape(admin.Email) + "&password=" + url.QueryEscape(password), false,
			map[string]string{"Origin": "{base}"}, 303, ""},
		{"reading, no headers", "GET", "/settings", "", true, nil, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, e.ts.URL+tt.path, strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			for k, v := range tt.headers {
				req.Header.Set(k, strings.ReplaceAll(v, "{base}", e.ts.URL))
			}
			if tt.cookie {
				req.AddCookie(cookie)
			}
			resp, err := e.client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.says) {
				t.Errorf("= %d %.300s, want %d with %q", resp.StatusCode, body, tt.status, tt.says)
			}
		})
	}
	// Only the two requests that said their origin made invites.
	if invites, _ := e.db.ListInvites(context.Background()); len(invites)-len(before) != 2 {
		t.Errorf("%d invites made, want 2", len(invites)-len(before))
	}
}
