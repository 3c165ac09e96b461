package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store/storetest"
)

func (e *testEnv) link(u *hoard.User, platformID int64) {
	e.t.Helper()
	code, _ := NewLinkCode()
	ctx := context.Background()
	if err := e.db.CreateLinkCode(ctx, u.ID, hoard.LinkCodeHash(code), time.Now().Add(time.Minute)); err != nil {
		e.t.Fatal(err)
	}
	e.authChange(func() error {
		_, err := e.db.ConsumeLinkCode(ctx, hoard.LinkCodeHash(code), platformID, 1, "tg")
		return err
	})
}

func (e *testEnv) postJSON(path, body string, cookie *http.Cookie) (*http.Response, string) {
	e.t.Helper()
	return e.post(path, "application/json", strings.NewReader(body), cookie)
}

// post sends a body with a content type and the session cookie, and returns
// the response with its body read.
func (e *testEnv) post(path, contentType string, body io.Reader, cookie *http.Cookie) (*http.Response, string) {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.ts.URL+path, body)
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Origin", e.ts.URL)
	req.AddCookie(cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestBotSendQueuesRequestJobAndNotification(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pk := e.seedCatalog()
	pack := pk["Red Dragon Pack.zip"]
	user, _ := e.user(hoard.RoleUser)
	other, _ := e.user(hoard.RoleUser)
	admin, _ := e.user(hoard.RoleAdmin)
	uc := e.session(user)

	resp, body := e.postJSON("/api/messenger/bot/send", fmt.Sprintf(`{"package_id":%d}`, pack.ID), uc)
	if resp.StatusCode != 409 || !strings.Contains(body, "Link a messenger account") {
		t.Fatalf("unlinked: %d %s", resp.StatusCode, body)
	}
	e.link(user, 5001)
	resp, body = e.postJSON("/api/messenger/bot/send", fmt.Sprintf(`{"package_id":%d}`, pack.ID), uc)
	if resp.StatusCode != 409 || !strings.Contains(body, "not published") {
		t.Fatalf("unpublished: %d %s", resp.StatusCode, body)
	}
	dest := &hoard.Channel{PlatformID: 900, Title: "Dest", Kind: hoard.ChannelDestination}
	if err := e.db.UpsertChannel(ctx, dest); err != nil {
		t.Fatal(err)
	}
	if err := e.db.SetPackageDestination(ctx, pack.ID, dest.ID, []int64{11, 12}); err != nil {
		t.Fatal(err)
	}

	conn, err := e.db.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN bot_send"); err != nil {
		t.Fatal(err)
	}
	resp, body = e.postJSON("/api/messenger/bot/send", fmt.Sprintf(`{"package_id":%d}`, pack.ID), uc)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("send: %d %s", resp.StatusCode, body)
	}
	var out struct {
		Requests []sendJSON `json:"requests"`
	}
	_ = json.Unmarshal([]byte(body), &out)
	if len(out.Requests) != 1 || out.Requests[0].Status != "PENDING" {
		t.Fatalf("requests = %s", body)
	}
	id := out.Requests[0].ID
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	n, err := conn.Conn().WaitForNotification(wctx)
	if err != nil || !strings.Contains(n.Payload, fmt.Sprint(id)) {
		t.Fatalf("notification: %v %+v", err, n)
	}
	jobs := storetest.Jobs(t, e.db, storetest.JobMatch{Kind: "bot_send"})
	if len(jobs) == 0 {
		t.Fatal("no bot_send job")
	}
	if got := jobs[0].Args["request_id"]; got != float64(id) {
		t.Fatalf("job args %s, want request_id %d", jobs[0].RawArgs, id)
	}
	// A second send while the first is pending queues nothing.
	if resp, _ := e.postJSON("/api/messenger/bot/send", fmt.Sprintf(`{"package_id":%d}`, pack.ID), uc); resp.StatusCode != 409 {
		t.Fatalf("duplicate send = %d", resp.StatusCode)
	}
	// Status: own and admin see it, another user does not.
	if resp, body := e.do(nil, "GET", fmt.Sprintf("/api/messenger/bot/send/%d", id), nil, uc); resp.StatusCode != 200 || !strings.Contains(body, `"status":"PENDING"`) {
		t.Fatalf("own status %d %s", resp.StatusCode, body)
	}
	if resp, _ := e.do(nil, "GET", fmt.Sprintf("/api/messenger/bot/send/%d", id), nil, e.session(other)); resp.StatusCode != 404 {
		t.Fatalf("other user's status = %d", resp.StatusCode)
	}
	ac := e.session(admin)
	if resp, _ := e.do(nil, "GET", fmt.Sprintf("/api/messenger/bot/send/%d", id), nil, ac); resp.StatusCode != 200 {
		t.Fatalf("admin status = %d", resp.StatusCode)
	}
	if _, body := e.do(nil, "GET", "/api/messenger/bot/sends", nil, ac); !strings.Contains(body, "Red Dragon Pack.zip") {
		t.Fatalf("history: %s", body)
	}
	// Only administrators send to someone else.
	if resp, _ := e.postJSON("/api/messenger/bot/send", fmt.Sprintf(`{"package_id":%d,"user_id":%d}`, pack.ID, other.ID), uc); resp.StatusCode != 403 {
		t.Fatalf("user targeting another = %d", resp.StatusCode)
	}
	for _, bad := range []string{`{"package_id":-1}`, `{"nope":1}`, `not json`, `{}`} {
		if resp, body := e.postJSON("/api/messenger/bot/send", bad, uc); resp.StatusCode != 422 || !strings.Contains(body, `"code":"invalid"`) {
			t.Errorf("%s: %d %s", bad, resp.StatusCode, body)
		}
	}
}

// TestSendButtonsNeedALink: pages offer sending only to linked users; the
// others are told how to link, and a send without a link leads to
// Settings, not to an error page.
func TestSendButtonsNeedALink(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pk := e.seedCatalog()
	pack := pk["Red Dragon Pack.zip"]
	dest := &hoard.Channel{PlatformID: 902, Title: "Dest", Kind: hoard.ChannelDestination}
	if err := e.db.UpsertChannel(ctx, dest); err != nil {
		t.Fatal(err)
	}
	if err := e.db.SetPackageDestination(ctx, pack.ID, dest.ID, []int64{7}); err != nil {
		t.Fatal(err)
	}
	user, _ := e.user(hoard.RoleUser)
	uc := e.session(user)
	pages := []string{"/", fmt.Sprintf("/packages/%d", pack.ID)}
	for _, path := range pages {
		_, body := e.do(nil, "GET", path, nil, uc)
		if strings.Contains(body, `formaction="/packages/send"`) || strings.Contains(body, ">Send to my messenger account<") ||
			!strings.Contains(body, "Link your messenger account to send") {
			t.Errorf("%s unlinked: the send button shows, or the link hint does not", path)
		}
	}
	resp, _ := e.do(nil, "POST", "/packages/send", url.Values{"id": {fmt.Sprint(pack.ID)}}, uc)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/settings?done=link-first" {
		t.Fatalf("send unlinked = %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if _, body := e.do(nil, "GET", "/settings?done=link-first", nil, uc); !strings.Contains(body, "Link your messenger account first") {
		t.Fatal("Settings do not say why the user landed there")
	}

	e.link(user, 5101)
	for _, path := range pages {
		if _, body := e.do(nil, "GET", path, nil, uc); strings.Contains(body, "Link your messenger account to send") {
			t.Errorf("%s linked: still offers to link", path)
		}
	}
	resp, _ = e.do(nil, "POST", "/packages/send", url.Values{"id": {fmt.Sprint(pack.ID)}, "back": {fmt.Sprintf("/packages/%d", pack.ID)}}, uc)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != fmt.Sprintf("/packages/%d?sent=1", pack.ID) {
		t.Fatalf("send = %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	// Again while on its way: nothing new, said so on the page.
	resp, _ = e.do(nil, "POST", "/packages/send", url.Values{"id": {fmt.Sprint(pack.ID)}, "back": {fmt.Sprintf("/packages/%d", pack.ID)}}, uc)
	if loc := resp.Header.Get("Location"); !strings.HasSuffix(loc, "sent=0") {
		t.Fatalf("second send went to %q", loc)
	}
	if _, body := e.do(nil, "GET", fmt.Sprintf("/packages/%d?sent=0", pack.ID), nil, uc); !strings.Contains(body, "Nothing new to send") {
		t.Fatal("the package page does not explain that nothing was queued")
	}
	// Settings show the delivery, and the API its progress.
	if _, body := e.do(nil, "GET", "/settings", nil, uc); !strings.Contains(body, "Red Dragon Pack.zip") || !strings.Contains(body, "0/1 parts") {
		t.Fatalf("Settings lack the delivery:\n%s", body)
	}
	_, body := e.do(nil, "GET", "/api/messenger/bot/my-sends", nil, uc)
	var mine struct{ Items []sendJSON }
	if err := json.Unmarshal([]byte(body), &mine); err != nil {
		t.Fatalf("my sends = %s: %v", body, err)
	}
	type progress struct {
		Status                string
		PartsSent, PartsTotal int
	}
	var gotSends []progress
	for _, s := range mine.Items {
		gotSends = append(gotSends, progress{s.Status, s.PartsSent, s.PartsTotal})
	}
	if diff := cmp.Diff([]progress{{"PENDING", 0, 1}}, gotSends); diff != "" {
		t.Fatalf("my sends (-want +got):\n%s", diff)
	}
	if _, body := e.do(nil, "GET", "/api/messenger/bot/my-sends", nil, e.session(must2(e.user(hoard.RoleUser)))); strings.Contains(body, "Red Dragon") {
		t.Fatal("another user sees my deliveries")
	}
}

func must2[A, B any](a A, _ B) A { return a }

// TestGroupSendIsOneOrderedBatch: a group send queues one batch, its
// packages oldest first, with the group's name as its header.
func TestGroupSendIsOneOrderedBatch(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	user, _ := e.user(hoard.RoleUser)
	uc := e.session(user)
	e.link(user, 5201)
	dest := &hoard.Channel{PlatformID: 903, Title: "Dest", Kind: hoard.ChannelDestination}
	if err := e.db.UpsertChannel(ctx, dest); err != nil {
		t.Fatal(err)
	}
	g := &hoard.PackageGroup{Name: "Castle Set", GroupingSource: hoard.GroupManual}
	if err := e.db.CreateGroup(ctx, g); err != nil {
		t.Fatal(err)
	}
	day := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var want []int64
	for i, name := range []string{"Walls.zip", "Towers.zip", "Gate.zip"} {
		p := &hoard.Package{FileName: name, FileSize: 10, ArchiveType: hoard.ArchiveZIP, ContentHash: fmt.Sprintf("%064x", 900+i),
			SourcePostedAt: day.Add(time.Duration(i) * time.Hour), DestChannelID: dest.ID, DestMessageIDs: []int64{int64(100 + i)}}
		if err := e.db.CreatePackage(ctx, p); err != nil {
			t.Fatal(err)
		}
		if err := e.db.SetPackageGroup(ctx, []int64{p.ID}, g.ID); err != nil {
			t.Fatal(err)
		}
		want = append(want, p.ID)
	}
	resp, _ := e.do(nil, "POST", fmt.Sprintf("/groups/%d/send", g.ID), url.Values{}, uc)
	if resp.StatusCode != 303 || !strings.HasSuffix(resp.Header.Get("Location"), "sent=3") {
		t.Fatalf("group send = %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	reqs, err := e.db.ListBotSendRequests(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	type queued struct {
		Packages      []int64 // oldest request first
		Batches, Jobs int
		Title         string
	}
	got := queued{Jobs: len(storetest.Jobs(t, e.db, storetest.JobMatch{Kind: "bot_send"}))}
	batches := map[int64]bool{}
	for i := len(reqs) - 1; i >= 0; i-- {
		got.Packages = append(got.Packages, reqs[i].PackageID)
		batches[reqs[i].BatchID] = true
	}
	got.Batches = len(batches)
	if len(reqs) > 0 && reqs[0].BatchID != 0 {
		b, err := e.db.FindBotSendBatch(ctx, reqs[0].BatchID)
		if err != nil {
			t.Fatal(err)
		}
		got.Title = b.Title
	}
	if diff := cmp.Diff(queued{Packages: want, Batches: 1, Jobs: 1, Title: "🗂 Castle Set"}, got); diff != "" {
		t.Fatalf("group send queued (-want +got):\n%s", diff)
	}
}

func TestSubscriptionsOnSettings(t *testing.T) {
	e := newEnv(t)
	user, _ := e.user(hoard.RoleUser)
	uc := e.session(user)
	resp, _ := e.do(nil, "POST", "/settings/subscriptions", url.Values{"pattern": {"Dragon"}}, uc)
	if resp.StatusCode != 303 {
		t.Fatalf("subscribe = %d", resp.StatusCode)
	}
	for _, bad := range []string{"", "!!!", strings.Repeat("x", 101)} {
		if resp, body := e.do(nil, "POST", "/settings/subscriptions", url.Values{"pattern": {bad}}, uc); resp.StatusCode != 422 || !strings.Contains(body, "subscription") {
			t.Errorf("subscribe %q = %d", bad, resp.StatusCode)
		}
	}
	if resp, body := e.do(nil, "POST", "/settings/subscriptions", url.Values{"pattern": {"dragon"}}, uc); resp.StatusCode != 409 || !strings.Contains(body, "already subscribed") {
		t.Errorf("duplicate subscribe = %d", resp.StatusCode)
	}
	_, body := e.do(nil, "GET", "/settings", nil, uc)
	m := regexp.MustCompile(`/settings/subscriptions/(\d+)/delete`).FindStringSubmatch(body)
	if m == nil || !strings.Contains(body, "<strong>Dragon</strong>") {
		t.Fatalf("Settings do not list the subscription:\n%s", body)
	}
	other, _ := e.user(hoard.RoleUser)
	if resp, _ := e.do(nil, "POST", m[0], url.Values{}, e.session(other)); resp.StatusCode != 404 {
		t.Fatalf("another user removed it: %d", resp.StatusCode)
	}
	if resp, _ := e.do(nil, "POST", m[0], url.Values{}, uc); resp.StatusCode != 303 {
		t.Fatalf("remove = %d", resp.StatusCode)
	}
	if _, body := e.do(nil, "GET", "/settings", nil, uc); strings.Contains(body, "<strong>Dragon</strong>") {
		t.Fatal("the subscription is still listed")
	}
}

// TestAdminSeesTheBotStatus: the messaging admin page shows what the bot
// process last reported, and what to do when it cannot read the
// destination.
func TestAdminSeesTheBotStatus(t *testing.T) {
	e := newEnv(t)
	admin, _ := e.user(hoard.RoleAdmin)
	ac := e.session(admin)
	if _, body := e.do(nil, "GET", "/admin/messenger", nil, ac); !strings.Contains(body, "No bot process has run yet") {
		t.Fatal("no hint before the bot ran")
	}
	no := false
	now := time.Now()
	if err := e.db.SaveBotStatus(context.Background(), hoard.BotStatus{Username: "hoard_bot", SignedIn: true, Holder: "host/42",
		LastUpdateAt: &now, QueueLength: 3, CanReadDest: &no, SetupHint: "add @hoard_bot to that channel as an administrator"}); err != nil {
		t.Fatal(err)
	}
	_, body := e.do(nil, "GET", "/admin/messenger", nil, ac)
	for _, want := range []string{"@hoard_bot", "host/42", `<span data-bot-queue>3</span>`, "add @hoard_bot to that channel as an administrator"} {
		if !strings.Contains(body, want) {
			t.Errorf("admin page lacks %q", want)
		}
	}
	if _, body := e.do(nil, "GET", "/api/messenger/bot/sends", nil, ac); !strings.Contains(body, `"queue_length":3`) {
		t.Errorf("sends API lacks the bot status: %s", body)
	}
}
