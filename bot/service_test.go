package bot

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
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

// env is a bot service on a fresh database with the fake platform.
type env struct {
	t      *testing.T
	db     *store.DB
	bot    *fakeBot
	svc    *Service
	dest   *hoard.Channel
	nextID atomic.Int64
	told   *told
}

// told is a Metrics that keeps what it was told.
type told struct {
	mu         sync.Mutex
	commands   map[string]int
	deliveries map[string]int
}

func (m *told) BotCommand(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.commands[name]++
}

func (m *told) BotDelivery(outcome string, requests int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.deliveries[outcome] += requests
}

// counts returns copies of what m was told.
func (m *told) counts() (commands, deliveries map[string]int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.commands), maps.Clone(m.deliveries)
}

func newEnv(t *testing.T) *env {
	t.Helper()
	db := storetest.NewDB(t)
	client, err := queue.NewInsertOnly(db.Pool(), nil)
	if err != nil {
		t.Fatal(err)
	}
	fb := newFakeBot()
	tl := &told{commands: map[string]int{}, deliveries: map[string]int{}}
	e := &env{t: t, db: db, bot: fb, told: tl,
		svc: NewService(Deps{DB: db, Bot: fb, AppURL: "https://hoard.example", Metrics: tl}, client, "test")}
	e.svc.self = fb.self
	e.dest = &hoard.Channel{PlatformID: 777, Title: "Hoard Archive", Kind: hoard.ChannelDestination, IsActive: true}
	e.must(db.UpsertChannel(context.Background(), e.dest))
	return e
}

func (e *env) must(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}

// user makes a hoard user and, with a chat id, links that chat to it.
func (e *env) user(email string, chat int64) *hoard.User {
	e.t.Helper()
	ctx := context.Background()
	u, err := e.db.CreateUser(ctx, email, "x", hoard.RoleUser)
	e.must(err)
	if chat != 0 {
		code := e.linkCode(u)
		_, err := e.db.ConsumeLinkCode(ctx, hoard.LinkCodeHash(code), chat, 1, "")
		e.must(err)
	}
	return u
}

// linkCode issues a link code for a user, as the web does.
func (e *env) linkCode(u *hoard.User) string {
	code := fmt.Sprintf("CODE%04d", e.nextID.Add(1))
	e.must(e.db.CreateLinkCode(context.Background(), u.ID, hoard.LinkCodeHash(code), time.Now().Add(10*time.Minute)))
	return code
}

// pkg stores a package published to the destination as parts messages.
func (e *env) pkg(name string, parts int, mutate ...func(*hoard.Package)) *hoard.Package {
	e.t.Helper()
	n := e.nextID.Add(1)
	p := &hoard.Package{FileName: name, FileSize: 1 << 20, ArchiveType: hoard.ArchiveZIP, ContentHash: fmt.Sprintf("%064x", n),
		PartCount: parts, DestChannelID: e.dest.ID}
	for i := range parts {
		p.DestMessageIDs = append(p.DestMessageIDs, n*100+int64(i))
	}
	if parts > 0 {
		p.DestMessageID = p.DestMessageIDs[0]
	}
	for _, m := range mutate {
		m(p)
	}
	e.must(e.db.CreatePackage(context.Background(), p))
	return p
}

// exec changes the database behind the service's back.
func (e *env) exec(sql string) {
	e.t.Helper()
	_, err := e.db.Pool().Exec(context.Background(), sql)
	e.must(err)
}

// say sends text from a chat and returns what the bot answered with.
func (e *env) say(chat int64, text string) []fakeMessage {
	e.t.Helper()
	before := len(e.bot.messages(chat))
	id := int(e.nextID.Add(1))
	e.must(e.svc.HandleMessage(context.Background(), messenger.IncomingMessage{MessageID: id, ChatID: chat, UserID: chat,
		AccessHash: 1, Text: text}))
	return e.bot.messages(chat)[before:]
}

// press presses a button of a bot message and returns the notice.
func (e *env) press(chat int64, msg fakeMessage, label string) string {
	e.t.Helper()
	for _, row := range msg.Keyboard {
		for _, b := range row {
			if strings.Contains(b.Text, label) {
				q := e.nextID.Add(1)
				e.must(e.svc.HandleCallback(context.Background(), messenger.CallbackQuery{QueryID: q, ChatID: chat, UserID: chat,
					MessageID: msg.ID, Data: b.Data}))
				e.bot.mu.Lock()
				defer e.bot.mu.Unlock()
				return e.bot.notices[q]
			}
		}
	}
	e.t.Fatalf("no button %q on %+v", label, msg)
	return ""
}

// answered is the text of the single answer to a message.
func (e *env) answered(chat int64, text string) string {
	e.t.Helper()
	got := e.say(chat, text)
	if len(got) != 1 {
		e.t.Fatalf("%q: %d answers, want 1: %+v", text, len(got), got)
	}
	return got[0].HTML
}

func TestUnlinkedUsersOnlyLearnHowToLink(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.pkg("Red Dragon.zip", 1)
	const chat = 41
	for _, cmd := range []string{"/search dragon", "/latest", "/package 1", "/group 1", "/sendgroup 1", "/subscribe dragon",
		"/unsubscribe all", "/subscriptions", "/unlink"} {
		if got := e.answered(chat, cmd); got != e.svc.notLinked() {
			t.Errorf("%s from an unlinked chat: %q", cmd, got)
		}
	}
	if !strings.Contains(e.svc.notLinked(), "https://hoard.example/settings") {
		t.Errorf("the linking sentence does not name the web address: %q", e.svc.notLinked())
	}
	for _, cmd := range []string{"/start", "/help", "hello", "/frobnicate"} {
		if got := e.answered(chat, cmd); strings.Contains(got, "Red Dragon") {
			t.Errorf("%s leaked the catalog: %q", cmd, got)
		}
	}
}

func TestLinkingWithTheDeepLinkAndThrottle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u := e.user("linker@example.com", 0)
	code := e.linkCode(u)
	const chat = 42
	if got := e.answered(chat, "/start link_"+code); !strings.Contains(got, "Linked") || !strings.Contains(got, "linker@example.com") {
		t.Fatalf("deep link answer: %q", got)
	}
	link, err := e.db.FindMessengerLink(context.Background(), u.ID)
	e.must(err)
	if link.PlatformUserID != chat {
		t.Fatalf("link = %+v", link)
	}
	if got := e.answered(chat, "/start link_"+code); !strings.Contains(got, "not valid") {
		t.Fatalf("a used code: %q", got)
	}

	// Wrong codes from one chat are throttled; another chat is not.
	for i := range linkMaxFailures - 1 {
		if got := e.answered(43, fmt.Sprintf("/link WRONG%03d", i)); !strings.Contains(got, "not valid") {
			t.Fatalf("wrong code %d: %q", i, got)
		}
	}
	good := e.linkCode(e.user("late@example.com", 0))
	if got := e.answered(43, "/link WRONG999"); !strings.Contains(got, "not valid") {
		t.Fatalf("last wrong code: %q", got)
	}
	if got := e.answered(43, "/link "+good); !strings.Contains(got, "Too many wrong codes") {
		t.Fatalf("a good code after too many wrong ones: %q", got)
	}
	if got := e.answered(44, "/link "+good); !strings.Contains(got, "Linked") {
		t.Fatalf("another chat is not throttled: %q", got)
	}
	if got := e.answered(44, "/unlink"); !strings.Contains(got, "Unlinked") {
		t.Fatalf("/unlink: %q", got)
	}
	if got := e.answered(44, "/latest"); got != e.svc.notLinked() {
		t.Fatalf("after /unlink: %q", got)
	}
}

func TestSearchPagesWithButtons(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const chat = 51
	e.user("searcher@example.com", chat)
	const n = 2*searchPageSize + 3
	for i := range n {
		e.pkg(fmt.Sprintf("Dragon Bust %02d.zip", i), 1)
	}
	e.pkg("Spaceship.zip", 1)

	first := e.say(chat, "/search dragon")
	if len(first) != 1 {
		t.Fatalf("answers: %+v", first)
	}
	msg := first[0]
	type page struct {
		Lines   int
		First   string
		Buttons string
	}
	read := func(m fakeMessage) page {
		var p page
		for _, l := range strings.Split(m.HTML, "\n") {
			if strings.Contains(l, "/package") {
				p.Lines++
				if p.First == "" {
					p.First, _, _ = strings.Cut(l, ".")
				}
			}
		}
		for _, row := range m.Keyboard {
			for _, b := range row {
				p.Buttons += b.Text + ";"
			}
		}
		return p
	}
	steps := []struct {
		press string
		want  page
	}{
		{"", page{searchPageSize, "1", "Next »;"}},
		{"Next", page{searchPageSize, fmt.Sprint(searchPageSize + 1), "« Prev;Next »;"}},
		{"Next", page{3, fmt.Sprint(2*searchPageSize + 1), "« Prev;"}},
		{"Prev", page{searchPageSize, fmt.Sprint(searchPageSize + 1), "« Prev;Next »;"}},
		{"Prev", page{searchPageSize, "1", "Next »;"}},
	}
	seen := map[string]bool{}
	for i, s := range steps {
		if s.press != "" {
			e.press(chat, msg, s.press)
			msg = e.bot.last(chat)
		}
		if got := read(msg); got != s.want {
			t.Fatalf("step %d (%s): %+v, want %+v\n%s", i, s.press, got, s.want, msg.HTML)
		}
		if i < 3 {
			for _, l := range strings.Split(msg.HTML, "\n") {
				if strings.Contains(l, "/package") {
					if seen[l] {
						t.Fatalf("line on two pages: %q", l)
					}
					seen[l] = true
				}
			}
		}
	}
	if len(e.bot.messages(chat)) != 1 {
		t.Fatalf("paging sent new messages instead of editing: %d", len(e.bot.messages(chat)))
	}

	// An expired search says so instead of showing something else.
	storetest.ExpireBotSearchPages(t, e.db)
	if notice := e.press(chat, msg, "Next"); !strings.Contains(notice, "expired") {
		t.Fatalf("expired search: notice %q", notice)
	}
	if got := read(e.bot.last(chat)); got.First != "1" {
		t.Fatalf("the expired press changed the message: %+v", got)
	}
	if got := e.answered(chat, "/search nothingmatchesthis"); !strings.Contains(got, "No packages match") {
		t.Fatalf("empty search: %q", got)
	}
}

func TestPackageGroupAndSends(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	const chat = 61
	u := e.user("sender@example.com", chat)
	three := e.pkg("Castle <Walls> & Towers.rar", 3, func(p *hoard.Package) {
		p.Creator, p.Tags, p.FileCount, p.PreviewData = "Maker", []string{"terrain", "castle"}, 12, []byte("jpeg")
	})
	unpublished := e.pkg("Draft.zip", 0)
	g := &hoard.PackageGroup{Name: "Castle Set", GroupingSource: hoard.GroupManual}
	e.must(e.db.CreateGroup(ctx, g))
	e.must(e.db.SetPackageGroup(ctx, []int64{three.ID, unpublished.ID}, g.ID))

	got := e.say(chat, fmt.Sprintf("/package %d", three.ID))
	if len(got) != 1 || !got[0].Photo {
		t.Fatalf("/package answers: %+v", got)
	}
	for _, want := range []string{"Castle &lt;Walls&gt; &amp; Towers.rar", "Maker", "3 parts", "12 files", "terrain, castle",
		fmt.Sprintf("/group %d", g.ID)} {
		if !strings.Contains(got[0].HTML, want) {
			t.Errorf("/package caption lacks %q:\n%s", want, got[0].HTML)
		}
	}
	if notice := e.press(chat, got[0], "Send"); !strings.Contains(notice, "On its way") {
		t.Fatalf("Send button: %q", notice)
	}
	if notice := e.press(chat, got[0], "Send"); !strings.Contains(notice, "already on its way") {
		t.Fatalf("Send pressed twice: %q", notice)
	}
	if got := e.answered(chat, fmt.Sprintf("/package %d", unpublished.ID)); !strings.Contains(got, "Not published") {
		t.Fatalf("unpublished package: %q", got)
	}
	if got := e.answered(chat, "/package 999999"); !strings.Contains(got, "no package 999999") {
		t.Fatalf("unknown package: %q", got)
	}
	if got := e.answered(chat, "/group castle"); !strings.Contains(got, fmt.Sprintf("/group %d", g.ID)) {
		t.Fatalf("group by name: %q", got)
	}
	if got := e.answered(chat, fmt.Sprintf("/group %d", g.ID)); !strings.Contains(got, "Castle Set") || !strings.Contains(got, "2 packages") {
		t.Fatalf("group by id: %q", got)
	}
	// The package is already on its way; the group queues nothing else
	// that is published.
	if got := e.answered(chat, fmt.Sprintf("/sendgroup %d", g.ID)); !strings.Contains(got, "Nothing to send") {
		t.Fatalf("/sendgroup with everything queued: %q", got)
	}
	reqs, err := e.db.ListBotSendRequests(ctx, u.ID, 10)
	e.must(err)
	if len(reqs) != 1 || reqs[0].PackageID != three.ID || reqs[0].PartsTotal != 3 {
		t.Fatalf("requests = %+v", reqs)
	}
	n, err := e.db.CountQueuedBotSends(ctx)
	e.must(err)
	if n != 1 {
		t.Fatalf("%d bot_send jobs queued, want 1", n)
	}
}

func TestSubscribeCommands(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const chat = 71
	e.user("subscriber@example.com", chat)
	for _, step := range []struct{ say, want string }{
		{"/subscriptions", "no subscriptions"},
		{"/subscribe Dragon", "Subscribed to “Dragon”"},
		{"/subscribe dragon", "already subscribed"},
		{"/subscribe <b>castle</b>", "Subscribed to “&lt;b&gt;castle&lt;/b&gt;”"},
		{"/subscriptions", "2. &lt;b&gt;castle&lt;/b&gt;"},
		{"/unsubscribe unicorn", "no subscription to “unicorn”"},
		{"/unsubscribe DRAGON", "Unsubscribed from “DRAGON”"},
		{"/unsubscribe all", "Removed 1 subscription"},
		{"/subscribe !!!", "needs a word"},
	} {
		if got := e.answered(chat, step.say); !strings.Contains(got, step.want) {
			t.Errorf("%s: %q, want it to contain %q", step.say, got, step.want)
		}
	}
}

// TestAnswersOnce hands the same update to the service twice, and from two
// goroutines at once: it is answered once.
func TestAnswersOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const chat = 81
	e.user("once@example.com", chat)
	m := messenger.IncomingMessage{MessageID: 5, ChatID: chat, UserID: chat, Text: "/help"}
	done := make(chan error, 3)
	for range 3 {
		go func() { done <- e.svc.HandleMessage(context.Background(), m) }()
	}
	for range 3 {
		e.must(<-done)
	}
	if got := e.bot.messages(chat); len(got) != 1 {
		t.Fatalf("one update, %d answers", len(got))
	}
	if commands, _ := e.told.counts(); !maps.Equal(commands, map[string]int{"help": 1}) {
		t.Fatalf("one update answered, commands counted %v", commands)
	}
	// A crash between the send and the commit: the claim is undone, the
	// next process answers with the same random id, and the platform does
	// not deliver it again.
	storetest.Clear(t, e.db, "bot_handled_updates")
	e.must(e.svc.HandleMessage(context.Background(), m))
	if got := e.bot.messages(chat); len(got) != 1 {
		t.Fatalf("answered again after a lost claim: %d answers", len(got))
	}
}

// TestCommandsAreCounted checks the command label of every kind of
// message: commands by name, whatever the link, others in bounded groups.
func TestCommandsAreCounted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const linked, stranger = 71, 72
	e.user("counted@example.com", linked)
	p := e.pkg("Dragon.zip", 1)
	for _, say := range []struct {
		chat int64
		text string
	}{
		{stranger, "/start"}, {stranger, "/help"}, {stranger, "/search dragon"}, {stranger, "hello there"},
		{stranger, "/frobnicate 12345"}, {linked, "/latest"}, {linked, "/search@hoard_bot dragon"}, {linked, "/link"},
	} {
		e.say(say.chat, say.text)
	}
	e.press(linked, e.say(linked, fmt.Sprintf("/package %d", p.ID))[0], "Send")
	commands, _ := e.told.counts()
	want := map[string]int{"start": 1, "help": 1, "search": 2, "text": 1, "unknown": 1, "latest": 1, "link": 1,
		"package": 1, "button": 1}
	if !maps.Equal(commands, want) {
		t.Errorf("commands counted:\n got  %v\n want %v", commands, want)
	}
}

func TestCommandList(t *testing.T) {
	for _, c := range Commands {
		if _, ok := parseCommand("/"+c.Command, ""); !ok {
			t.Errorf("command %q does not parse", c.Command)
		}
		if _, linked := linkedCommands[c.Command]; !linked && c.Command != "link" && c.Command != "help" {
			t.Errorf("command %q is listed but has no handler", c.Command)
		}
	}
	if !strings.Contains(helpText(), "/sendgroup") {
		t.Errorf("help lacks /sendgroup: %q", helpText())
	}
}

// TestSearchShowsMatchingFiles: /search finds a package by the paths inside
// its archive (the catalog's one search) and names the files, escaped.
func TestSearchShowsMatchingFiles(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const chat = 52
	e.user("files@example.com", chat)
	p := e.pkg("Hoard Collection.zip", 1)
	e.must(e.db.ReplacePackageFiles(context.Background(), p.ID, []hoard.PackageFile{
		{Path: "Hoard Set/chest.stl"}, {Path: "Hoard Set/goblin.stl"}, {Path: "<b>Hoard</b> & Co/chest.stl"}}))
	tests := []struct {
		query, want string
	}{
		{"chest.stl", fmt.Sprintf("<b>Hoard Collection.zip</b> · 1.0 MB · /package %d\n   2 files match: Hoard Set/chest.stl, &lt;b&gt;Hoard&lt;/b&gt; &amp; Co/chest.stl", p.ID)},
		{"goblin", fmt.Sprintf("<b>Hoard Collection.zip</b> · 1.0 MB · /package %d\n   1 file matches: Hoard Set/goblin.stl", p.ID)},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			got := e.answered(chat, "/search "+tt.query)
			if _, line, _ := strings.Cut(got, "1. "); line != tt.want {
				t.Fatalf("/search %s:\n%s\nwant the line\n%s", tt.query, got, tt.want)
			}
		})
	}
}
