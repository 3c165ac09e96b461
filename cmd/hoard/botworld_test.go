package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/emulator"
	"github.com/hoard/hoard/messenger/messengertest"
	"github.com/hoard/hoard/messenger/telegram"
	"github.com/hoard/hoard/queue"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// The bot's end-to-end tests run the real hoard binary (`hoard bot`,
// `hoard web`, `hoard demo --once` to ingest) against an emulator in the
// test process (TELEGRAM_EMULATOR), and talk to the bot as its users with
// the real gotd client (telegram.UserChat).

// botUser is a seeded user who talks to the bot.
type botUser struct{ name, phone string }

// botUsers are the users of the bot worlds.
var botUsers = []botUser{{"alice", "+15550000101"}, {"bob", "+15550000102"}, {"carol", "+15550000103"},
	{"dave", "+15550000104"}, {"erin", "+15550000105"}, {"frank", "+15550000106"}}

// botSeedOptions shape a bot world.
type botSeedOptions struct {
	// packs is how many single-file packages "Pack NN.pdf" the world holds.
	packs int
	// dragons is how many "Dragon Figure NN.pdf" packages it holds.
	dragons int
	// users adds generated users "user01"… beyond botUsers.
	users int
}

// writeBotSeed writes a world for the bot: a source channel with a
// three-part set, an album of three packages, packs and dragons; the
// destination does not have the bot as administrator yet (hoard makes it
// one).
func writeBotSeed(t testing.TB, dir string, o botSeedOptions) string {
	t.Helper()
	date := "2024-01-01T00:00:00Z"
	gen := func(name string, size int64, seed int) map[string]any {
		return map[string]any{"generate": map[string]any{"name": name, "size": size, "seed": seed}, "date": date}
	}
	var posts []any
	// The set's parts and the album live on other DCs than the
	// account's: the platform keeps a file on its uploader's DC, and a
	// delivery re-sends it from there.
	for i := 1; i <= 3; i++ {
		p := gen(fmt.Sprintf("Castle Walls.zip.%03d", i), 20<<10, 100+i)
		p["dc"] = []int{1, 3, 5}[i-1]
		posts = append(posts, p)
	}
	for i, n := range []string{"Knight Helmet", "Knight Sword", "Knight Shield"} {
		p := gen(n+".stl", 4<<10, 200+i)
		p["album"] = 77
		p["dc"] = 4
		posts = append(posts, p)
	}
	for i := 1; i <= o.packs; i++ {
		posts = append(posts, gen(fmt.Sprintf("Pack %02d.pdf", i), 2<<10, 300+i))
	}
	for i := 1; i <= o.dragons; i++ {
		posts = append(posts, gen(fmt.Sprintf("Dragon Figure %02d.pdf", i), 2<<10, 500+i))
	}
	var users []any
	for _, u := range botUsers {
		users = append(users, map[string]any{"phone": u.phone, "username": u.name, "first_name": strings.ToUpper(u.name[:1]) + u.name[1:]})
	}
	for i := 1; i <= o.users; i++ {
		users = append(users, map[string]any{"phone": fmt.Sprintf("+1555100%04d", i), "username": fmt.Sprintf("user%02d", i)})
	}
	return writeSeed(t, dir, map[string]any{
		"account":     map[string]any{"phone": "+15550000001"},
		"bot":         map[string]any{"username": "hoard_bot", "token": "4242:test"},
		"destination": map[string]any{"title": "Hoard Archive", "username": "hoardarchive", "bot_admin": false},
		"channels": []any{map[string]any{"title": "Model Shop", "username": "modelshop", "joined": true, "category": "STL",
			"posts": posts}},
		"users": users,
	})
}

// botWorld is an emulator, a database and the environment of the hoard
// processes that share them.
type botWorld struct {
	env  *messengertest.Env
	seed string
	url  string
	data string
	db   *store.DB
	// inserter enqueues as the web does.
	inserter *queue.Client
	// limits are the bot's rates, on the bot and in the emulator's flood
	// model alike.
	limits messenger.BotLimits
	procs  []*hoardProc
}

// newBotWorld starts the emulator and a fresh database.
func newBotWorld(t testing.TB, o botSeedOptions, limits messenger.BotLimits) *botWorld {
	t.Helper()
	dir := t.TempDir()
	w := &botWorld{seed: writeBotSeed(t, dir, o), url: storetest.URL(t), data: dataDir(t), limits: limits}
	w.env = messengertest.StartIn(t, w.seed, dir)
	w.env.Emu.SetBotFlood(emulator.BotFlood{PerChat: limits.PerChat, PerChatBurst: limits.PerChatBurst, Global: limits.Global,
		GlobalBurst: max(1, int(limits.Global))})
	db, err := store.Open(context.Background(), w.url, store.Options{MaxConns: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	if err := db.Migrate(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	w.db = db
	if w.inserter, err = queue.NewInsertOnly(db.Pool(), nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, p := range w.procs {
			p.kill()
			if t.Failed() {
				t.Logf("%s (pid %d)'s log:\n%s", p.name, p.pid, logSummary(p.stderr.String()))
			}
		}
	})
	return w
}

// vars is the environment of a hoard process in this world.
func (w *botWorld) vars(extra map[string]string) map[string]string {
	v := map[string]string{"DATABASE_URL": w.url, "DATA_DIR": w.data, "TELEGRAM_EMULATOR": envInfo(w.env), "LOG_LEVEL": "warn",
		"AUTH_SECRET": strings.Repeat("s", 40), "WORKER_SETTLE_MINUTES": "0", "AUTO_GROUP_TIME_WINDOW_MINUTES": "0",
		"APP_URL": "http://hoard.test", "BOT_SEND_TIMEOUT_SECONDS": "2", "SESSION_LEASE_SECONDS": "5",
		"BOT_CHAT_RATE": fmt.Sprint(w.limits.PerChat), "BOT_CHAT_BURST": fmt.Sprint(w.limits.PerChatBurst),
		"BOT_GLOBAL_RATE": fmt.Sprint(w.limits.Global)}
	for k, x := range extra {
		v[k] = x
	}
	return v
}

// ingest runs one ingestion cycle (`hoard demo --once`).
func (w *botWorld) ingest(t testing.TB) onceSummary {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd, stdout, stderr := hoardCmd(ctx, w.vars(nil), "demo", "--once", "--seed", w.seed)
	if err := cmd.Run(); err != nil {
		t.Fatalf("demo --once: %v\n%s", err, tail(stderr.String(), 4000))
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var sum onceSummary
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
		t.Fatalf("summary: %v\n%s", err, stdout)
	}
	return sum
}

// hoardProc is a hoard process of the world.
type hoardProc struct {
	name           string
	cmd            interface{ Wait() error }
	pid            int
	stdout, stderr *syncBuffer
	done           chan struct{}
	once           sync.Once
}

// start starts `hoard args…` with the world's environment plus extra.
func (w *botWorld) start(t testing.TB, name string, extra map[string]string, args ...string) *hoardProc {
	t.Helper()
	cmd, stdout, stderr := hoardCmd(context.Background(), w.vars(extra), args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &hoardProc{name: name, cmd: cmd, pid: cmd.Process.Pid, stdout: stdout, stderr: stderr, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	w.procs = append(w.procs, p)
	return p
}

// startBot starts a `hoard bot` process named id (its WORKER_ID).
func (w *botWorld) startBot(t testing.TB, id string) *hoardProc {
	return w.start(t, id, map[string]string{"WORKER_ID": id}, "bot")
}

// kill ends the process with SIGKILL and waits for it.
func (p *hoardProc) kill() {
	p.once.Do(func() { _ = syscall.Kill(p.pid, syscall.SIGKILL) })
	<-p.done
}

// stop ends the process with SIGINT (a clean shutdown) and waits for it.
func (p *hoardProc) stop() {
	p.once.Do(func() { _ = syscall.Kill(p.pid, syscall.SIGINT) })
	<-p.done
}

// waitUntil polls cond until it holds, failing after limit.
func waitUntil(t testing.TB, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitAnswering waits until a bot process answers commands and can read
// the destination.
func (w *botWorld) waitAnswering(t testing.TB, p *hoardProc) {
	t.Helper()
	waitUntil(t, p.name+" to answer and read the destination", 60*time.Second, func() bool {
		st, err := w.db.FindBotStatus(context.Background())
		select {
		case <-p.done:
			t.Fatalf("%s exited:\n%s", p.name, tail(p.stderr.String(), 4000))
		default:
		}
		return err == nil && strings.HasPrefix(st.Holder, p.name+"/") && st.CanReadDest != nil && *st.CanReadDest
	})
}

// chatter is a user's chat with the bot.
type chatter struct {
	t    testing.TB
	name string
	uc   *telegram.UserChat
	id   int64
}

func (w *botWorld) chat(t testing.TB, u botUser) *chatter {
	t.Helper()
	uc := w.env.UserChat(t, u.phone)
	return &chatter{t: t, name: u.name, uc: uc, id: uc.Self().ID}
}

// next waits for the bot's next new or edited message.
func (c *chatter) next() telegram.ChatMessage {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := c.uc.Next(ctx)
	if err != nil {
		c.t.Fatalf("%s: no message from the bot: %v", c.name, err)
	}
	return m
}

// say sends text and returns the bot's answer: its next text message
// after the one sent (documents and edits on the way are skipped).
func (c *chatter) say(text string) telegram.ChatMessage {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id, err := c.uc.Send(ctx, text)
	if err != nil {
		c.t.Fatalf("%s: send %q: %v", c.name, text, err)
	}
	return c.after(id)
}

// after returns the bot's next text message newer than id.
func (c *chatter) after(id int) telegram.ChatMessage {
	c.t.Helper()
	for {
		if m := c.next(); !m.Edited && m.ID > id && m.Document == nil {
			return m
		}
	}
}

// press presses the button labelled label on m and returns the notice.
func (c *chatter) press(m telegram.ChatMessage, label string) string {
	c.t.Helper()
	for _, row := range m.Keyboard {
		for _, b := range row {
			if strings.Contains(b.Text, label) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				notice, err := c.uc.Press(ctx, m.ID, b.Data)
				if err != nil {
					c.t.Fatalf("%s: press %q: %v", c.name, label, err)
				}
				return notice
			}
		}
	}
	c.t.Fatalf("%s: no button %q on %q", c.name, label, m.Text)
	return ""
}

// received returns the bot's messages in the chat, oldest first.
func (c *chatter) received() []telegram.ChatMessage {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h, err := c.uc.History(ctx, 1000)
	for fw, ok := messenger.AsFloodWait(err); ok; fw, ok = messenger.AsFloodWait(err) {
		// The chat's user reads its history often while it waits, and on
		// a busy machine meets the platform's flood model: wait as a
		// client must, then read again.
		select {
		case <-ctx.Done():
			c.t.Fatalf("%s: reading the chat: %v", c.name, err)
		case <-time.After(fw.RetryAfter):
		}
		h, err = c.uc.History(ctx, 1000)
	}
	if err != nil {
		c.t.Fatal(err)
	}
	var out []telegram.ChatMessage
	for _, m := range h {
		if !m.Out {
			out = append(out, m)
		}
	}
	return out
}

// message returns the bot's message id as the chat shows it now.
func (c *chatter) message(id int) telegram.ChatMessage {
	c.t.Helper()
	for _, m := range c.received() {
		if m.ID == id {
			return m
		}
	}
	c.t.Fatalf("%s: no message %d in the chat", c.name, id)
	return telegram.ChatMessage{}
}

// documents returns the file names of every document the bot sent to the
// chat, oldest first.
func (c *chatter) documents() []string {
	var out []string
	for _, m := range c.received() {
		if m.Document != nil {
			out = append(out, m.Document.FileName)
		}
	}
	return out
}

// texts returns the texts of the bot's other messages, oldest first.
func (c *chatter) texts() []string {
	var out []string
	for _, m := range c.received() {
		if m.Document == nil {
			out = append(out, m.Text)
		}
	}
	return out
}

// link links a user's chat with a fresh code (as the web issues it) sent
// with /link.
func (w *botWorld) link(t testing.TB, c *chatter, email string) *hoard.User {
	t.Helper()
	ctx := context.Background()
	u, err := w.db.FindUserByEmail(ctx, email) // a kept benchmark database has it
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		u, err = w.db.CreateUser(ctx, email, "x", hoard.RoleUser)
	}
	if err != nil {
		t.Fatal(err)
	}
	code := strings.ToUpper(strings.ReplaceAll(c.name, "_", "")) + "2345"
	if err := w.db.CreateLinkCode(ctx, u.ID, hoard.LinkCodeHash(code), time.Now().Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := c.say("/link " + code); !strings.Contains(got.Text, "Linked") {
		t.Fatalf("%s: /link answered %q", c.name, got.Text)
	}
	// The answer goes out just before its transaction commits.
	waitUntil(t, c.name+"'s link", 10*time.Second, func() bool {
		_, err := w.db.FindMessengerLink(ctx, u.ID)
		return err == nil
	})
	return u
}

// parts returns the file names of packages' parts, in delivery order, as
// the user receives them: a single file's name, or its set's part names
// (file name plus .001, .002, …).
func (w *botWorld) parts(t testing.TB, packageIDs ...int64) []string {
	t.Helper()
	var out []string
	for _, id := range packageIDs {
		p, err := w.db.FindPackageByID(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if p.PartCount <= 1 {
			out = append(out, p.FileName)
			continue
		}
		for i := range p.PartCount {
			out = append(out, fmt.Sprintf("%s.%03d", p.FileName, i+1))
		}
	}
	return out
}

// packageID finds a package by file name.
func (w *botWorld) packageID(t testing.TB, name string) int64 {
	t.Helper()
	var id int64
	if err := w.db.Pool().QueryRow(context.Background(), `SELECT id FROM packages WHERE file_name = $1`, name).Scan(&id); err != nil {
		t.Fatalf("package %q: %v", name, err)
	}
	return id
}

// queueSends queues packages for a user's link as the web does (one batch,
// one bot_send job).
func (w *botWorld) queueSends(t testing.TB, u *hoard.User, title string, ids ...int64) []hoard.BotSendRequest {
	t.Helper()
	ctx := context.Background()
	link, err := w.db.FindMessengerLink(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := w.db.QueueBotSends(ctx, store.SendOrder{UserID: u.ID, RequestedBy: u.ID, PlatformUserID: link.PlatformUserID,
		PackageIDs: ids, Title: title}, queue.InsertBotSends(ctx, w.inserter))
	if err != nil || len(reqs) != len(ids) {
		t.Fatalf("queue %d packages: %d requests, %v", len(ids), len(reqs), err)
	}
	return reqs
}

// statuses counts a user's requests by status.
func (w *botWorld) statuses(t testing.TB, u *hoard.User) map[hoard.SendStatus]int {
	t.Helper()
	reqs, err := w.db.ListBotSendRequests(context.Background(), u.ID, 500)
	if err != nil {
		t.Fatal(err)
	}
	out := map[hoard.SendStatus]int{}
	for _, r := range reqs {
		out[r.Status]++
	}
	return out
}

// partsSent sums the parts delivered of a user's requests.
func (w *botWorld) partsSent(t testing.TB, u *hoard.User) int {
	t.Helper()
	n := 0
	for _, r := range storetest.SendRequests(t, w.db) {
		if r.UserID == u.ID {
			n += r.PartsSent
		}
	}
	return n
}

// unfinishedJobs counts unfinished jobs of kinds.
func (w *botWorld) unfinishedJobs(t testing.TB, kinds ...string) int {
	t.Helper()
	n, err := w.db.CountUnfinishedJobs(context.Background(), kinds...)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
