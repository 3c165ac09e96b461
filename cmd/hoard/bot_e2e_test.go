package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
)

// fastBotLimits let the functional tests run quickly; the emulator's flood
// model is raised to match.
var fastBotLimits = messenger.BotLimits{PerChat: 20, PerChatBurst: 5, Global: 200}

// TestBotEndToEnd walks the bot's acceptance from the outside: users link
// (one with the web's deep link), subscribe, see one notice and one digest
// when the catalog is ingested and none on a re-run, page a search with
// buttons, receive a three-part package and a group in order, get the
// web's sends (Send to me, group, crowdfund Send All), and an unlinked user
// gets nothing but the linking sentence.
func TestBotEndToEnd(t *testing.T) {
	t.Parallel()
	w := newBotWorld(t, botSeedOptions{packs: 4, dragons: 30}, fastBotLimits)
	bot := w.startBot(t, "bot-a")
	waitUntil(t, "the bot to answer", 60*time.Second, func() bool {
		h, _ := w.db.LeaseHolder(context.Background(), "bot")
		return strings.HasPrefix(h, "bot-a/")
	})
	webAddr := freeAddr(t)
	w.start(t, "web", map[string]string{"LISTEN_ADDR": webAddr, "HOARD_ADMIN_EMAIL": "alice@example.com",
		"HOARD_ADMIN_PASSWORD": "a long enough password"}, "web")
	alice, bob, carol := w.chat(t, botUsers[0]), w.chat(t, botUsers[1]), w.chat(t, botUsers[2])

	// Alice links with the deep link the web shows her.
	site := signIn(t, "http://"+webAddr, "alice@example.com", "a long enough password")
	var code struct {
		Code     string `json:"code"`
		DeepLink string `json:"deep_link"`
	}
	site.json(t, "POST", "/settings/messenger/link-code", nil, &code)
	payload, ok := strings.CutPrefix(code.DeepLink, "https://t.me/hoard_bot?start=")
	if !ok {
		t.Fatalf("deep link %q does not name the bot", code.DeepLink)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := alice.uc.Start(ctx, payload); err != nil {
		t.Fatal(err)
	}
	if got := alice.after(0); !strings.Contains(got.Text, "Linked to alice@example.com") {
		t.Fatalf("deep link answered %q", got.Text)
	}
	aliceUser, err := w.db.FindUserByEmail(context.Background(), "alice@example.com")
	if err != nil {
		t.Fatal(err)
	}
	bobUser := w.link(t, bob, "bob@example.com")

	// An unlinked user gets nothing but the linking sentence.
	for _, cmd := range []string{"/search dragon", "/latest", "/package 1", "/sendgroup 1", "/subscribe dragon"} {
		if got := carol.say(cmd); !strings.HasPrefix(got.Text, "This chat is not linked to a hoard account yet") ||
			!strings.Contains(got.Text, "http://hoard.test/settings") || len(got.Keyboard) > 0 {
			t.Fatalf("unlinked %s: %q", cmd, got.Text)
		}
	}

	// Subscriptions, then the catalog arrives: one notice, one digest.
	if got := alice.say("/subscribe dragon"); !strings.Contains(got.Text, "Subscribed") {
		t.Fatalf("/subscribe: %q", got.Text)
	}
	if got := bob.say("/subscribe castle"); !strings.Contains(got.Text, "Subscribed") {
		t.Fatalf("/subscribe: %q", got.Text)
	}
	sum := w.ingest(t)
	if sum.RunStatus != "COMPLETED" || sum.Ingested != 4+30+3+1 {
		t.Fatalf("ingestion: %+v", sum)
	}
	digest := alice.next()
	if !strings.Contains(digest.Text, "30 new packages") || strings.Count(digest.Text, "/package") != 30 {
		t.Fatalf("alice's digest: %q", digest.Text)
	}
	castle := w.packageID(t, "Castle Walls.zip")
	notice := bob.next()
	if !strings.Contains(notice.Text, "Castle Walls.zip") || !strings.Contains(notice.Text, fmt.Sprintf("/package %d", castle)) {
		t.Fatalf("bob's notice: %q", notice.Text)
	}
	bot.waitIdle(t, w)
	again := w.ingest(t)
	if again.Ingested != 0 {
		t.Fatalf("second ingestion: %+v", again)
	}
	w.waitAnswering(t, bot)

	// Search pages forward and back with buttons.
	page := alice.say("/search dragon")
	type shown struct {
		First   string
		Lines   int
		Buttons string
	}
	read := func(text string, kb messenger.Keyboard) shown {
		var s shown
		for _, l := range strings.Split(text, "\n") {
			if strings.Contains(l, "/package") {
				if s.Lines == 0 {
					s.First, _, _ = strings.Cut(l, ".")
				}
				s.Lines++
			}
		}
		for _, row := range kb {
			for _, b := range row {
				s.Buttons += b.Text + ";"
			}
		}
		return s
	}
	for i, step := range []struct {
		press string
		want  shown
	}{
		{"", shown{"1", 8, "Next »;"}},
		{"Next", shown{"9", 8, "« Prev;Next »;"}},
		{"Next", shown{"17", 8, "« Prev;Next »;"}},
		{"Prev", shown{"9", 8, "« Prev;Next »;"}},
	} {
		if step.press != "" {
			if notice := alice.press(page, step.press); notice != "" {
				t.Fatalf("search step %d: the button answered %q", i, notice)
			}
			// The chat shows the edited page (read from the chat's history:
			// the emulator's getDifference carries no edits, so a pushed
			// edit lost to a gap would never arrive as an update).
			waitUntil(t, fmt.Sprintf("search step %d to show", i), 30*time.Second, func() bool {
				page = alice.message(page.ID)
				return read(page.Text, page.Keyboard) == step.want
			})
		}
		if got := read(page.Text, page.Keyboard); got != step.want {
			t.Fatalf("search step %d (%s): %+v, want %+v\n%s", i, step.press, got, step.want, page.Text)
		}
	}
	if n := len(alice.received()); n != 4 { // the link answer, the digest, the subscribe answer, the search
		t.Fatalf("paging sent new messages instead of editing the page: alice holds %d", n)
	}

	// A three-part package arrives as three documents, in part order.
	shownPkg := alice.say(fmt.Sprintf("/package %d", castle))
	if !strings.Contains(shownPkg.Text, "3 parts") {
		t.Fatalf("/package: %q", shownPkg.Text)
	}
	if n := alice.press(shownPkg, "Send"); !strings.Contains(n, "On its way") {
		t.Fatalf("Send: %q", n)
	}
	wantDocs := w.parts(t, castle)
	waitDocs(t, alice, wantDocs)

	// A group arrives whole, in order, after one header.
	helmet, err := w.db.FindPackageByID(context.Background(), w.packageID(t, "Knight Helmet.stl"))
	if err != nil {
		t.Fatal(err)
	}
	groupID := helmet.PackageGroupID
	members, err := w.db.ListGroupDeliveryOrder(context.Background(), groupID)
	if err != nil || len(members) < 3 {
		t.Fatalf("the album's group: %v, %v", members, err)
	}
	if got := alice.say(fmt.Sprintf("/sendgroup %d", groupID)); !strings.Contains(got.Text, fmt.Sprintf("Sending %d packages", len(members))) {
		t.Fatalf("/sendgroup: %q", got.Text)
	}
	wantDocs = append(wantDocs, w.parts(t, members...)...)
	waitDocs(t, alice, wantDocs)

	// The web's sends arrive: Send to me, group send, crowdfund Send All.
	pack1, pack2 := w.packageID(t, "Pack 01.pdf"), w.packageID(t, "Pack 02.pdf")
	site.form(t, "/packages/send", url.Values{"id": {fmt.Sprint(pack1)}}, "sent=1")
	wantDocs = append(wantDocs, w.parts(t, pack1)...)
	waitDocs(t, alice, wantDocs)
	site.form(t, fmt.Sprintf("/groups/%d/send", groupID), nil, fmt.Sprintf("sent=%d", len(members)))
	wantDocs = append(wantDocs, w.parts(t, members...)...)
	waitDocs(t, alice, wantDocs)
	cf := site.form(t, "/crowdfunds", url.Values{"name": {"Castle Kickstarter"}, "delivery_status": {"NOT_DELIVERED"},
		"payment_status": {"PAID"}}, "/crowdfunds/")
	cfPath := regexp.MustCompile(`/crowdfunds/\d+`).FindString(cf)
	site.form(t, cfPath+"/packages", url.Values{"id": {fmt.Sprint(pack2), fmt.Sprint(castle)}}, "")
	site.form(t, cfPath+"/send-all", nil, "sent=2")
	waitDocs(t, alice, append(slices.Clone(wantDocs), w.parts(t, castle, pack2)...), append(slices.Clone(wantDocs), w.parts(t, pack2, castle)...))
	waitUntil(t, "alice's requests to end SENT", 30*time.Second, func() bool {
		st := w.statuses(t, aliceUser)
		return st[hoard.SendSent] == 1+len(members)+1+len(members)+2 && len(st) == 1
	})

	// The terminal client: Dave links, asks for a package, presses its
	// Send button by number, and the document lands in his folder.
	chatDocument(t, w, botUsers[3], pack2)

	// Bob's link is removed between his request and its delivery: he
	// gets nothing and the request fails.
	bot.stop()
	reqs := w.queueSends(t, bobUser, "", pack1)
	if err := w.db.DeleteMessengerLink(context.Background(), bobUser.ID); err != nil {
		t.Fatal(err)
	}
	w.startBot(t, "bot-a")
	waitUntil(t, "bob's request to fail", 60*time.Second, func() bool {
		r, err := w.db.FindBotSendRequest(context.Background(), reqs[0].ID)
		return err == nil && r.Status == hoard.SendFailed
	})
	if docs := bob.documents(); len(docs) != 0 {
		t.Fatalf("bob, unlinked, received %q", docs)
	}
	if n := w.env.Emu.BotFloodTrips(); n != 0 {
		t.Fatalf("the bot tripped the flood model %d times", n)
	}
	// One notice each, ever: the second ingestion and everything since
	// sent no other.
	for _, c := range []struct{ chat *chatter }{{alice}, {bob}} {
		var notices []string
		for _, text := range c.chat.texts() {
			if strings.HasPrefix(text, "🔔") && strings.Contains(strings.ToLower(text), "new package") {
				notices = append(notices, text)
			}
		}
		if len(notices) != 1 {
			t.Errorf("%s got %d notices, want 1: %q", c.chat.name, len(notices), notices)
		}
	}
}

// waitIdle waits until the bot has no notice or delivery left to do.
func (p *hoardProc) waitIdle(t *testing.T, w *botWorld) {
	t.Helper()
	waitUntil(t, p.name+" to finish its jobs", 60*time.Second, func() bool {
		return w.unfinishedJobs(t, hoard.NotifySubscribersArgs{}.Kind(), hoard.BotSendArgs{}.Kind()) == 0
	})
}

// waitDocs waits until a chat holds exactly one of the wanted document
// sequences, failing on anything else once it holds as many.
func waitDocs(t *testing.T, c *chatter, wants ...[]string) {
	t.Helper()
	var got []string
	waitUntil(t, c.name+"'s documents", 60*time.Second, func() bool {
		got = c.documents()
		return len(got) >= len(wants[0])
	})
	time.Sleep(200 * time.Millisecond) // a duplicate on its way would land now
	got = c.documents()
	for _, want := range wants {
		if slices.Equal(got, want) {
			return
		}
	}
	t.Fatalf("%s received\n %q\nwant\n %q", c.name, got, wants[0])
}

// site is a signed-in browser session on `hoard web`.
type site struct {
	base   string
	client *http.Client
}

// signIn waits for the web process at base and signs in.
func signIn(t *testing.T, base, email, password string) *site {
	t.Helper()
	waitUntil(t, "the web to answer", 60*time.Second, func() bool {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == http.StatusOK
	})
	jar, _ := cookiejar.New(nil)
	s := &site{base: base, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
	s.form(t, "/login", url.Values{"email": {email}, "password": {password}}, "")
	return s
}

// form posts a form and returns where it redirected, which must contain
// want.
func (s *site) form(t *testing.T, path string, v url.Values, want string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.base+path, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", s.base) // as a browser on hoard's page: the web refuses changes without it
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.Contains(loc, want) {
		t.Fatalf("POST %s = %d to %q, want a redirect containing %q\n%s", path, resp.StatusCode, loc, want, tail(string(body), 2000))
	}
	return loc
}

// json calls a JSON endpoint.
func (s *site) json(t *testing.T, method, path string, body io.Reader, out any) {
	t.Helper()
	req, _ := http.NewRequest(method, s.base+path, body)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Origin", s.base)
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s = %d: %s", method, path, resp.StatusCode, data)
	}
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatalf("%s %s: %v: %s", method, path, err, data)
	}
}

// chatDocument runs `hoard chat --as USER`: it links the user, shows a
// package, presses its Send button by number and checks the saved
// document.
func chatDocument(t *testing.T, w *botWorld, u botUser, packageID int64) {
	t.Helper()
	ctx := context.Background()
	user, err := w.db.CreateUser(ctx, u.name+"@example.com", "x", hoard.RoleUser)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.db.CreateLinkCode(ctx, user.ID, hoard.LinkCodeHash("CHAT2345"), time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	p, err := w.db.FindPackageByID(ctx, packageID)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd, stdout, stderr := hoardCmd(cctx, w.vars(nil), "chat", "--as", u.name, "--dir", dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	expect := func(what string) {
		t.Helper()
		waitUntil(t, "hoard chat to show "+what, time.Minute, func() bool { return strings.Contains(stdout.String(), what) })
	}
	type_ := func(line string) {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatalf("type %q: %v\n%s", line, err, stderr)
		}
	}
	expect("Signed in as")
	type_("/link CHAT2345")
	expect("Linked to " + u.name + "@example.com")
	type_(fmt.Sprintf("/package %d", packageID))
	expect("[1] 📥 Send it to me")
	type_("1")
	saved := fmt.Sprintf("[document %s (%d bytes) saved to %s/%s]", p.FileName, p.FileSize, dir, p.FileName)
	expect(saved)
	data, err := os.ReadFile(filepath.Join(dir, p.FileName))
	if err != nil || int64(len(data)) != p.FileSize {
		t.Fatalf("saved document: %d bytes, %v; want %d", len(data), err, p.FileSize)
	}
}
