package web

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
	"github.com/riverqueue/river/rivertype"
)

// signedInAccount creates an AUTHENTICATED account.
func (e *testEnv) signedInAccount(phone string) *hoard.Account {
	e.t.Helper()
	ctx := context.Background()
	acc, err := e.db.CreateAccount(ctx, phone)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.db.SetAccountAuthState(ctx, acc.ID, hoard.AuthAuthenticated, ""); err != nil {
		e.t.Fatal(err)
	}
	acc.AuthState = hoard.AuthAuthenticated
	return acc
}

func (e *testEnv) count(table string) int {
	e.t.Helper()
	return storetest.Count(e.t, e.db, table)
}

func TestJoinChannelAction(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	admin, _ := e.user(hoard.RoleAdmin)
	c := e.session(admin)
	kind := hoard.JoinChannelArgs{}.Kind()

	// No signed-in account yet: refused, nothing inserted.
	if resp, body := e.do(nil, "POST", "/admin/messenger/joins", url.Values{"ref": {"@mammothfactory"}}, c); resp.StatusCode != 422 ||
		!strings.Contains(body, "No messenger account is signed in") {
		t.Fatalf("without an account = %d %.300s", resp.StatusCode, body)
	}
	pending, _ := e.db.CreateAccount(ctx, "+15550000009")
	acc := e.signedInAccount("+15550000001")

	for _, tc := range []struct{ name, ref, category, account, want string }{
		{"empty", "", "", "", "empty reference"},
		{"foreign link", "https://example.com/mammoth", "", "", "not a messenger link"},
		{"private message link", "https://t.me/c/123/45", "", "", "private message links"},
		{"short name", "@abc", "", "", "4–32 letters"},
		{"bad invite", "t.me/+bad hash!", "", "", "malformed invite"},
		{"long category", "@mammothfactory", strings.Repeat("x", 65), "", "category is too long"},
		{"account not signed in", "@mammothfactory", "", itoa(pending.ID), "not signed in"},
		{"unknown account", "@mammothfactory", "", "999999", "No such account"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			form := url.Values{"ref": {tc.ref}, "category": {tc.category}, "account_id": {tc.account}}
			resp, body := e.postAs("application/json", "/admin/messenger/joins", form, c)
			var out struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			if err := json.Unmarshal([]byte(body), &out); resp.StatusCode != 422 || err != nil || out.Error.Code != hoard.EINVALID ||
				!strings.Contains(out.Error.Message, tc.want) {
				t.Fatalf("= %d %.300s, want 422 JSON error with %q", resp.StatusCode, body, tc.want)
			}
		})
	}
	if n := e.count("channel_joins"); n != 0 || len(e.jobs(kind)) != 0 {
		t.Fatalf("refusals inserted %d requests and %d jobs", n, len(e.jobs(kind)))
	}

	// A link is normalised; the row and its job come together.
	resp, _ := e.do(nil, "POST", "/admin/messenger/joins", url.Values{"ref": {" https://t.me/MammothFactory/12 "}, "category": {" STL "}}, c)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/admin/messenger?done=join#joins" {
		t.Fatalf("join = %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	joins, err := e.db.ListChannelJoins(ctx, 0)
	if err != nil || len(joins) != 1 {
		t.Fatalf("joins = %+v, %v", joins, err)
	}
	j := joins[0]
	jobs := storetest.Jobs(t, e.db, storetest.JobMatch{Kind: kind})
	if len(jobs) != 1 || jobs[0].Queue != hoard.QueueIngest || jobs[0].Args["join_id"] != float64(j.ID) {
		t.Fatalf("jobs = %+v", jobs)
	}
	want := hoard.ChannelJoin{ID: j.ID, Ref: "@mammothfactory", AccountID: acc.ID, Category: "STL", Status: hoard.JoinPending,
		RiverJobID: jobs[0].ID, RequestedBy: admin.ID}
	if diff := cmp.Diff(want, j, cmpopts.IgnoreFields(hoard.ChannelJoin{}, "CreatedAt", "UpdatedAt")); diff != "" {
		t.Fatalf("join row (-want +got):\n%s", diff)
	}

	// Asking again while it is pending returns the same request.
	resp, body := e.postAs("application/json", "/admin/messenger/joins", url.Values{"ref": {"@mammothfactory"}}, c)
	var again struct {
		Join    joinJSON `json:"join"`
		Created bool     `json:"created"`
	}
	if err := json.Unmarshal([]byte(body), &again); resp.StatusCode != 200 || err != nil || again.Created || again.Join.ID != j.ID {
		t.Fatalf("second join = %d %s", resp.StatusCode, body)
	}
	// An invite link with a chosen account.
	resp, body = e.postAs("application/json", "/admin/messenger/joins",
		url.Values{"ref": {"t.me/joinchat/AbCd123"}, "account_id": {itoa(acc.ID)}}, c)
	if err := json.Unmarshal([]byte(body), &again); err != nil {
		t.Fatalf("invite join = %d %s: %v", resp.StatusCode, body, err)
	}
	type answer struct {
		Status     int
		Created    bool
		Ref, State string
	}
	if diff := cmp.Diff(answer{202, true, "https://t.me/+AbCd123", "PENDING"},
		answer{resp.StatusCode, again.Created, again.Join.Ref, again.Join.Status}); diff != "" {
		t.Fatalf("invite join (-want +got):\n%s", diff)
	}
	if n := len(e.jobs(kind)); n != 2 {
		t.Fatalf("%d jobs, want 2", n)
	}

	// The list the page polls, and the page itself.
	resp, body = e.do(nil, "GET", "/api/messenger/joins", nil, c)
	var list struct {
		Items   []joinJSON `json:"items"`
		Pending bool       `json:"pending"`
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil || len(list.Items) == 0 {
		t.Fatalf("joins API = %d %s (%v)", resp.StatusCode, body, err)
	}
	type joinList struct {
		Status, Items int
		Pending       bool
		NewestRef     string
	}
	if diff := cmp.Diff(joinList{200, 2, true, "https://t.me/+AbCd123"},
		joinList{resp.StatusCode, len(list.Items), list.Pending, list.Items[0].Ref}); diff != "" {
		t.Fatalf("joins API (-want +got):\n%s", diff)
	}
	if _, err := e.db.FinishChannelJoin(ctx, j.ID, hoard.JoinNotFound, 0, "", "No channel is called @mammothfactory."); err != nil {
		t.Fatal(err)
	}
	resp, body = e.do(nil, "GET", "/admin/messenger", nil, c)
	if resp.StatusCode != 200 || !strings.Contains(body, "NOT_FOUND") || !strings.Contains(body, "No channel is called @mammothfactory.") ||
		!strings.Contains(body, "data-pending") {
		t.Fatalf("page = %d, want the outcome and polling", resp.StatusCode)
	}
}

func TestAccountLoginActions(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	admin, _ := e.user(hoard.RoleAdmin)
	c := e.session(admin)
	login, signIn := hoard.AccountLoginArgs{}.Kind(), hoard.AccountSignInArgs{}.Kind()

	for _, phone := range []string{"", "15551234567", "+0123456789", "+1555", "+1 555 123 4567 8901 2", "+1555abc4567"} {
		if resp, body := e.postAs("application/json", "/admin/messenger/accounts", url.Values{"phone": {phone}}, c); resp.StatusCode != 422 ||
			!strings.Contains(body, `"code":"invalid"`) {
			t.Fatalf("phone %q = %d %s", phone, resp.StatusCode, body)
		}
	}
	if e.count("messenger_accounts") != 0 || len(e.jobs(login)) != 0 {
		t.Fatal("refused phones inserted rows or jobs")
	}
	resp, _ := e.do(nil, "POST", "/admin/messenger/accounts", url.Values{"phone": {"+1 (555) 000-0001"}}, c)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/admin/messenger?done=account-added#accounts" {
		t.Fatalf("add = %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	acc, err := e.db.FindAccountByPhone(ctx, "+15550000001")
	if err != nil || acc.AuthState != hoard.AuthPending {
		t.Fatalf("account = %+v, %v", acc, err)
	}
	if jobs := e.jobs(login); len(jobs) != 1 || jobs[0].Args["account_id"] != float64(acc.ID) {
		t.Fatalf("login jobs = %+v", jobs)
	}
	if resp, _ := e.do(nil, "POST", "/admin/messenger/accounts", url.Values{"phone": {"+15550000001"}}, c); resp.StatusCode != 409 {
		t.Fatalf("same phone again = %d", resp.StatusCode)
	}
	if e.count("messenger_accounts") != 1 || len(e.jobs(login)) != 1 {
		t.Fatal("a refused duplicate inserted a row or a job")
	}

	path := "/admin/messenger/accounts/" + itoa(acc.ID)
	secrets := func() (code, password []byte) {
		t.Helper()
		s, err := e.db.FindAccountLoginSecrets(ctx, acc.ID)
		if err != nil {
			t.Fatal(err)
		}
		return s.Code, s.Password
	}
	// Not waiting for a code yet: refused, nothing stored.
	if resp, _ := e.do(nil, "POST", path+"/code", url.Values{"code": {"24680"}}, c); resp.StatusCode != 409 {
		t.Fatalf("code while PENDING = %d", resp.StatusCode)
	}
	if code, _ := secrets(); code != nil || len(e.jobs(signIn)) != 0 {
		t.Fatal("a refused code was stored or queued")
	}
	// The worker sent the code.
	if err := e.db.SetAccountCodeSent(ctx, acc.ID, []byte("sealed request")); err != nil {
		t.Fatal(err)
	}
	storetest.SetJobState(t, e.db, storetest.JobMatch{Kind: login}, rivertype.JobStateCompleted)
	for _, bad := range []string{"", "12", "12a45", strings.Repeat("1", 13)} {
		if resp, _ := e.do(nil, "POST", path+"/code", url.Values{"code": {bad}}, c); resp.StatusCode != 422 {
			t.Fatalf("code %q = %d", bad, resp.StatusCode)
		}
	}
	resp, body := e.postAs("application/json", path+"/code", url.Values{"code": {"24 680"}}, c)
	if resp.StatusCode != 202 || strings.Contains(body, "24680") || !strings.Contains(body, `"login_pending":true`) {
		t.Fatalf("code = %d %s", resp.StatusCode, body)
	}
	code, _ := secrets()
	if code == nil || strings.Contains(string(code), "24680") {
		t.Fatalf("stored code = %q: want it sealed", code)
	}
	sealer, _ := messenger.NewSealer(testAuthSecret)
	if plain, err := sealer.Open(messenger.LoginLabel(acc.ID, messenger.SecretCode), code); err != nil || string(plain) != "24680" {
		t.Fatalf("sealed code opens to %q, %v", plain, err)
	}
	jobs := e.jobs(signIn)
	if len(jobs) != 1 || len(jobs[0].Args) != 1 || jobs[0].Args["account_id"] != float64(acc.ID) {
		t.Fatalf("sign-in jobs = %+v (the args hold the account only)", jobs)
	}
	// While it is being checked, another code is refused.
	if resp, _ := e.do(nil, "POST", path+"/code", url.Values{"code": {"11111"}}, c); resp.StatusCode != 409 {
		t.Fatalf("second code = %d", resp.StatusCode)
	}
	// The page says it is checking and never shows the code.
	resp, body = e.do(nil, "GET", "/admin/messenger", nil, c)
	if resp.StatusCode != 200 || strings.Contains(body, "24680") || !strings.Contains(body, "checking…") {
		t.Fatalf("page = %d", resp.StatusCode)
	}
	resp, body = e.do(nil, "GET", "/api/messenger/accounts", nil, c)
	if resp.StatusCode != 200 || strings.Contains(body, "24680") || !strings.Contains(body, `"busy":true`) {
		t.Fatalf("accounts API = %d %s", resp.StatusCode, body)
	}

	// The worker asked for the password (and completed its job in the same
	// transaction).
	if err := e.db.FinishAccountLogin(ctx, acc.ID, hoard.AuthAwaitingPassword, ""); err != nil {
		t.Fatal(err)
	}
	storetest.SetJobState(t, e.db, storetest.JobMatch{Kind: signIn}, rivertype.JobStateCompleted)
	if c, p := secrets(); c != nil || p != nil {
		t.Fatal("secrets survived the step")
	}
	if resp, _ := e.do(nil, "POST", path+"/password", url.Values{"password": {""}}, c); resp.StatusCode != 422 {
		t.Fatalf("empty password = %d", resp.StatusCode)
	}
	if resp, _ := e.do(nil, "POST", path+"/code", url.Values{"code": {"24680"}}, c); resp.StatusCode != 409 {
		t.Fatalf("code while AWAITING_PASSWORD = %d", resp.StatusCode)
	}
	resp, _ = e.do(nil, "POST", path+"/password", url.Values{"password": {"correct horse"}}, c)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/admin/messenger?done=login-password#accounts" {
		t.Fatalf("password = %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if _, p := secrets(); p == nil || strings.Contains(string(p), "correct horse") {
		t.Fatalf("stored password = %q: want it sealed", p)
	}
	if n := len(e.jobs(signIn)); n != 2 {
		t.Fatalf("%d sign-in jobs, want 2", n)
	}

	// Log in again: back to PENDING, secrets forgotten, a login job.
	if resp, _ := e.do(nil, "POST", "/admin/messenger/accounts/999999/login", url.Values{}, c); resp.StatusCode != 404 {
		t.Fatalf("re-login of no account = %d", resp.StatusCode)
	}
	resp, _ = e.do(nil, "POST", path+"/login", url.Values{}, c)
	if resp.StatusCode != 303 {
		t.Fatalf("re-login = %d", resp.StatusCode)
	}
	acc, _ = e.db.FindAccountByID(ctx, acc.ID)
	s, err := e.db.FindAccountLoginSecrets(ctx, acc.ID)
	if err != nil || acc.AuthState != hoard.AuthPending {
		t.Fatalf("after re-login: %+v, %v", acc, err)
	}
	if diff := cmp.Diff(store.LoginSecrets{}, s); diff != "" {
		t.Fatalf("secrets after re-login (-want +got):\n%s", diff)
	}
	if n := len(e.jobs(login)); n != 2 {
		t.Fatalf("%d login jobs, want 2", n)
	}
}

func TestSetDestinationAction(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	admin, _ := e.user(hoard.RoleAdmin)
	c := e.session(admin)
	acc := e.signedInAccount("+15550000001")
	other := e.signedInAccount("+15550000002")
	old := &hoard.Channel{PlatformID: 100, Title: "Old Archive", Kind: hoard.ChannelDestination}
	next := &hoard.Channel{PlatformID: 200, Title: "New Archive"}
	for _, ch := range []*hoard.Channel{old, next} {
		if err := e.db.UpsertChannel(ctx, ch); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.db.UpsertChannelMap(ctx, acc.ID, old.ID, 1, hoard.MapWriter); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.UpsertChannelMap(ctx, acc.ID, next.ID, 2, hoard.MapReader); err != nil {
		t.Fatal(err)
	}
	resp, body := e.do(nil, "GET", "/admin/messenger", nil, c)
	if resp.StatusCode != 200 || !strings.Contains(body, `value="`+itoa(next.ID)+`:`+itoa(acc.ID)+`"`) {
		t.Fatalf("page = %d, want the choice of New Archive", resp.StatusCode)
	}
	// Refusals change nothing: no choice, an account without access.
	for _, form := range []url.Values{{}, {"choice": {"x:y"}}, {"channel_id": {itoa(next.ID)}, "account_id": {itoa(other.ID)}}} {
		if resp, body := e.do(nil, "POST", "/admin/messenger/destination", form, c); resp.StatusCode != 422 {
			t.Fatalf("%v = %d %.200s", form, resp.StatusCode, body)
		}
	}
	if d, err := e.db.FindDestinationChannel(ctx); err != nil || d.ID != old.ID {
		t.Fatalf("destination after refusals = %+v, %v", d, err)
	}
	resp, _ = e.do(nil, "POST", "/admin/messenger/destination", url.Values{"choice": {itoa(next.ID) + ":" + itoa(acc.ID)}}, c)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/admin/messenger?done=destination" {
		t.Fatalf("set = %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	d, err := e.db.FindDestinationChannel(ctx)
	if err != nil || d.ID != next.ID || d.Kind != hoard.ChannelDestination || !d.IsActive {
		t.Fatalf("destination = %+v, %v", d, err)
	}
	if o, _ := e.db.FindChannelByID(ctx, old.ID); o.IsActive {
		t.Fatal("the old destination stayed active")
	}
	if m, err := e.db.FindWriterMap(ctx, next.ID, 0); err != nil || m.AccountID != acc.ID || m.AccessHash != 2 {
		t.Fatalf("writer map = %+v, %v", m, err)
	}
}

// TestJoinOfAKnownChannelSaysItExists: adding a channel hoard has already
// (by @username or invite link) with another category, or with the account
// that reads it already, is refused beside the link field, the form keeps
// what was typed and links to the channel's settings; nothing is queued and
// the category stays. Another account joining it with the same category
// goes on.
func TestJoinOfAKnownChannelSaysItExists(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	admin, _ := e.user(hoard.RoleAdmin)
	c := e.session(admin)
	reader := e.signedInAccount("+15550000001")
	other := e.signedInAccount("+15550000002")
	ch := &hoard.Channel{PlatformID: 4711, Title: "Mammoth Factory", Username: "mammothfactory", InviteLink: "https://t.me/+AbCd123",
		Kind: hoard.ChannelSource, IsActive: true, Category: "3D"}
	if err := e.db.UpsertChannel(ctx, ch); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.UpsertChannelMap(ctx, reader.ID, ch.ID, 1, hoard.MapReader); err != nil {
		t.Fatal(err)
	}
	settings := fmt.Sprintf(`<a href="/admin/messenger/channels/%d" data-field-link>Open its settings</a>`, ch.ID)
	type answer struct {
		Status   int
		Message  bool
		Link     bool
		Kept     bool // the form shows what was typed
		Joins    int
		Category string
	}
	for _, tt := range []struct {
		name    string
		form    url.Values
		message string
		want    answer
	}{
		{"another category", url.Values{"ref": {"@MammothFactory"}, "category": {"STL"}, "account_id": {fmt.Sprint(other.ID)}},
			"@mammothfactory is already added as “Mammoth Factory” (category 3D): change its category in its settings.",
			answer{409, true, true, true, 0, "3D"}},
		{"the account reads it already", url.Values{"ref": {"https://t.me/+AbCd123"}, "account_id": {fmt.Sprint(reader.ID)}},
			"https://t.me/+AbCd123 is already added as “Mammoth Factory” (category 3D).",
			answer{409, true, true, true, 0, "3D"}},
		{"another account, same category", url.Values{"ref": {"@mammothfactory"}, "category": {"3D"}, "account_id": {fmt.Sprint(other.ID)}},
			"", answer{303, false, false, false, 1, "3D"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.form.Set("back", "/admin/messenger#joins")
			resp, body := e.do(nil, "POST", "/admin/messenger/joins", tt.form, c)
			got, err := e.db.FindChannelByID(ctx, ch.ID)
			if err != nil {
				t.Fatal(err)
			}
			// As html/template writes text: escaped, "+" too.
			esc := func(s string) string { return strings.ReplaceAll(html.EscapeString(s), "+", "&#43;") }
			a := answer{resp.StatusCode, tt.message != "" && strings.Contains(body, esc(tt.message)),
				strings.Contains(body, settings), strings.Contains(body, `value="`+esc(tt.form.Get("ref"))+`"`),
				e.count("channel_joins"), got.Category}
			if a != tt.want {
				i := strings.Index(body, "data-join-form")
				t.Errorf("got %+v, want %+v\n%s", a, tt.want, body[max(i, 0):min(len(body), max(i, 0)+1500)])
			}
		})
	}
}
