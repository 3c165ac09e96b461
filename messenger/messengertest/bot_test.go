package messengertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/emulator"
	"github.com/hoard/hoard/messenger/telegram"
)

// recorder is a BotHandler that hands every update to the test.
type recorder struct {
	msgs chan messenger.IncomingMessage
	cbs  chan messenger.CallbackQuery
	// onMessage, when set, handles each message instead of queueing it.
	onMessage func(ctx context.Context, m messenger.IncomingMessage) error
	// onCallback, when set, answers each button press.
	onCallback func(ctx context.Context, q messenger.CallbackQuery) error
}

func newRecorder() *recorder {
	return &recorder{msgs: make(chan messenger.IncomingMessage, 100), cbs: make(chan messenger.CallbackQuery, 100)}
}

func (r *recorder) HandleMessage(ctx context.Context, m messenger.IncomingMessage) error {
	if r.onMessage != nil {
		return r.onMessage(ctx, m)
	}
	r.msgs <- m
	return nil
}

func (r *recorder) HandleCallback(ctx context.Context, q messenger.CallbackQuery) error {
	r.cbs <- q
	if r.onCallback != nil {
		return r.onCallback(ctx, q)
	}
	return nil
}

// next waits for the next message.
func (r *recorder) next(t *testing.T) messenger.IncomingMessage {
	t.Helper()
	select {
	case m := <-r.msgs:
		return m
	case <-time.After(15 * time.Second):
		t.Fatal("the bot received nothing")
	}
	return messenger.IncomingMessage{}
}

// none checks that no message is queued (call after a later message was
// received: updates arrive in order).
func (r *recorder) none(t *testing.T) {
	t.Helper()
	select {
	case m := <-r.msgs:
		t.Fatalf("unexpected message %+v", m)
	default:
	}
}

// listening runs bot.Listen until the test ends (or stop is called) and
// returns stop, which waits for Listen to return.
func listening(t testing.TB, bot *telegram.Bot, h messenger.BotHandler) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- bot.Listen(ctx, h) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Listen: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// newBot connects the seeded bot with cfg.
func newBot(t testing.TB, env *Env, cfg telegram.Config) *telegram.Bot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bot, err := telegram.NewBot(ctx, cfg, env.Info.BotToken)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bot.Close() })
	return bot
}

// postDocuments uploads n small documents to the destination and returns
// their message ids.
func postDocuments(t *testing.T, f *fixture, n int) []int {
	t.Helper()
	var ids []int
	for i := range n {
		size := int64(1000 + i)
		id, err := f.acc.Upload(ctxT(t), messenger.UploadRequest{Channel: f.dest, FileName: fmt.Sprintf("part%d.zip", i+1),
			Data: io.NewSectionReader(bytes.NewReader(generated(size)), 0, size)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// waitCanRead waits until the bot has learned a channel from its updates.
func waitCanRead(t *testing.T, bot *telegram.Bot, channelID int64) {
	t.Helper()
	ctx := ctxT(t)
	for deadline := time.Now().Add(15 * time.Second); ; {
		ok, err := bot.CanRead(ctx, channelID)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the bot never learned channel %d", channelID)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// botEnv is a running emulator with the seeded account signed in, the bot
// listening and Alice's chat with it open.
type botEnv struct {
	*fixture
	bot   *telegram.Bot
	rec   *recorder
	alice *telegram.UserChat
	// aliceID is Alice's user id (her chat's id for the bot).
	aliceID int64
}

// fastLimits are bot limits raised for tests, on the bot and in the
// emulator's flood model alike.
var fastLimits = messenger.BotLimits{PerChat: 50, PerChatBurst: 5, Global: 200}

// newBotEnv starts a botEnv with fastLimits; mutate adjusts the bot's
// config.
func newBotEnv(t *testing.T, mutate func(*telegram.Config)) *botEnv {
	t.Helper()
	f := newFixture(t, nil)
	f.env.Emu.SetBotFlood(emulator.BotFlood{PerChat: fastLimits.PerChat, PerChatBurst: fastLimits.PerChatBurst, Global: fastLimits.Global})
	cfg := f.env.Config("bot")
	cfg.BotLimits = fastLimits
	if mutate != nil {
		mutate(&cfg)
	}
	b := &botEnv{fixture: f, bot: newBot(t, f.env, cfg), rec: newRecorder()}
	listening(t, b.bot, b.rec)
	b.alice = f.env.UserChat(t, AlicePhone)
	b.aliceID = b.alice.Self().ID
	return b
}

// hello makes Alice write to the bot and waits for it to arrive.
func (b *botEnv) hello(t *testing.T) messenger.IncomingMessage {
	t.Helper()
	if _, err := b.alice.Send(ctxT(t), "hello"); err != nil {
		t.Fatal(err)
	}
	return b.rec.next(t)
}

// nextChat waits for the bot's next message in a user's chat.
func nextChat(t testing.TB, uc *telegram.UserChat) telegram.ChatMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	m, err := uc.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// shown is what a test checks of a chat message.
type shown struct {
	Text      string
	Entities  []string
	Keyboard  messenger.Keyboard
	Document  string // file name
	Photo     bool
	Forwarded bool
	Edited    bool
}

func show(m telegram.ChatMessage) shown {
	s := shown{Text: m.Text, Entities: m.Entities, Keyboard: m.Keyboard, Photo: m.Photo != nil, Forwarded: m.Forwarded, Edited: m.Edited}
	if m.Document != nil {
		s.Document = m.Document.FileName
	}
	return s
}

// received returns the messages the bot sent to a chat (history minus what
// the user sent), oldest first.
func received(t *testing.T, uc *telegram.UserChat) []shown {
	t.Helper()
	h, err := uc.History(ctxT(t), 500)
	if err != nil {
		t.Fatal(err)
	}
	var out []shown
	for _, m := range h {
		if !m.Out {
			out = append(out, show(m))
		}
	}
	return out
}

func TestBotConversation(t *testing.T) {
	t.Parallel()
	b := newBotEnv(t, nil)
	ctx := ctxT(t)
	self, err := b.bot.Self(ctx)
	if want := (messenger.User{ID: b.env.Emu.BotID(), Username: "hoard_bot", FirstName: "hoard_bot", Bot: true}); err != nil || self != want {
		t.Fatalf("Self = %+v, %v; want %+v", self, err, want)
	}
	if _, err := telegram.NewBot(ctx, b.env.Config("other"), "111:wrong"); err == nil {
		t.Fatal("a wrong token was accepted")
	}
	if _, err := b.bot.Send(ctx, b.env.Emu.UserID(BobPhone), messenger.OutgoingMessage{HTML: "hi"}); !errors.Is(err, messenger.ErrNotFound) {
		t.Fatalf("Send to a user who never wrote: %v, want ErrNotFound", err)
	}

	if _, err := b.alice.Start(ctx, "link_AB12-x"); err != nil {
		t.Fatal(err)
	}
	in := b.rec.next(t)
	if want := (messenger.IncomingMessage{MessageID: in.MessageID, ChatID: b.aliceID, UserID: b.aliceID, AccessHash: in.AccessHash,
		Username: "alice", FirstName: "Alice", Text: "/start link_AB12-x", Date: in.Date}); in != want || in.AccessHash == 0 || in.MessageID == 0 {
		t.Fatalf("incoming = %+v, want %+v", in, want)
	}
	if _, err := b.alice.Start(ctx, "no spaces allowed"); hoard.ErrorCode(err) != hoard.EINVALID {
		t.Fatalf("start parameter with spaces: %v, want invalid", err)
	}

	cmds := []messenger.BotCommand{{Command: "search", Description: "Search the catalog"}, {Command: "help", Description: "How to use the bot"}}
	if err := b.bot.SetCommands(ctx, cmds); err != nil {
		t.Fatal(err)
	}
	if got, want := b.env.Emu.BotCommands(), []emulator.BotCommand{{Command: "search", Description: "Search the catalog"}, {Command: "help", Description: "How to use the bot"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("commands = %+v, want %+v", got, want)
	}

	page := func(n int) messenger.OutgoingMessage {
		return messenger.OutgoingMessage{HTML: fmt.Sprintf("<b>Results</b> page %d of <i>%s</i>", n, messenger.EscapeHTML("Tom & <Jerry>")),
			Keyboard: messenger.Keyboard{{{Text: "Next", Data: []byte(fmt.Sprintf("p:%d", n+1))}}, {{Text: "Web", URL: "https://example.org/s"}}}}
	}
	rid := messenger.DeriveRandomID(in.ChatID, int64(in.MessageID))
	first := page(1)
	first.RandomID = rid
	id, err := b.bot.Send(ctx, in.ChatID, first)
	if err != nil || id == 0 {
		t.Fatalf("Send = %d, %v", id, err)
	}
	if _, err := b.bot.Send(ctx, in.ChatID, first); !errors.Is(err, messenger.ErrDuplicate) {
		t.Fatalf("Send with a used random id: %v, want ErrDuplicate", err)
	}
	got := nextChat(t, b.alice)
	wantPage1 := shown{Text: "Results page 1 of Tom & <Jerry>", Entities: []string{"messageEntityBold", "messageEntityItalic"},
		Keyboard: page(1).Keyboard}
	if !reflect.DeepEqual(show(got), wantPage1) {
		t.Fatalf("Alice sees %+v, want %+v", show(got), wantPage1)
	}

	t.Run("button press answered and message edited", func(t *testing.T) {
		b.rec.onCallback = func(ctx context.Context, q messenger.CallbackQuery) error {
			if err := b.bot.AnswerCallback(ctx, q.QueryID, "page 2"); err != nil {
				return err
			}
			return b.bot.Edit(ctx, q.ChatID, q.MessageID, page(2))
		}
		answer, err := b.alice.Press(ctx, got.ID, []byte("p:2"))
		if err != nil || answer != "page 2" {
			t.Fatalf("Press = %q, %v", answer, err)
		}
		q := <-b.rec.cbs
		if want := (messenger.CallbackQuery{QueryID: q.QueryID, ChatID: b.aliceID, UserID: b.aliceID, AccessHash: in.AccessHash,
			MessageID: id, Data: []byte("p:2")}); !reflect.DeepEqual(q, want) {
			t.Fatalf("callback = %+v, want %+v", q, want)
		}
		edited := nextChat(t, b.alice)
		want := shown{Text: "Results page 2 of Tom & <Jerry>", Entities: []string{"messageEntityBold", "messageEntityItalic"},
			Keyboard: page(2).Keyboard, Edited: true}
		if edited.ID != got.ID || !reflect.DeepEqual(show(edited), want) {
			t.Fatalf("edited message %d = %+v, want %d = %+v", edited.ID, show(edited), got.ID, want)
		}
		if err := b.bot.AnswerCallback(ctx, q.QueryID, "late"); !errors.Is(err, messenger.ErrNotFound) && hoard.ErrorCode(err) != hoard.ENOTFOUND {
			t.Fatalf("answering twice: %v, want not found", err)
		}
		if err := b.bot.Edit(ctx, in.ChatID, id, page(2)); err != nil {
			t.Fatalf("an edit that changes nothing: %v", err)
		}
		if _, err := b.alice.Press(ctx, got.ID, []byte("p:9")); err == nil {
			t.Fatal("pressing a button the message does not have succeeded")
		}
		b.rec.onCallback = func(context.Context, messenger.CallbackQuery) error { return nil } // never answers
		b.env.Emu.SetCallbackTimeout(100 * time.Millisecond)
		if _, err := b.alice.Press(ctx, got.ID, []byte("p:3")); err == nil || !strings.Contains(err.Error(), "BOT_RESPONSE_TIMEOUT") {
			t.Fatalf("a press the bot never answers: %v, want BOT_RESPONSE_TIMEOUT", err)
		}
		if q := <-b.rec.cbs; b.bot.AnswerCallback(ctx, q.QueryID, "too late") == nil {
			t.Fatal("answering a press that timed out succeeded")
		}
	})

	t.Run("refused before sending", func(t *testing.T) {
		calls := b.env.Emu.Calls("messages.sendMessage")
		long := strings.Repeat("😀", messenger.MaxMessageText/2+1) // 2 UTF-16 units each
		for _, m := range []messenger.OutgoingMessage{
			{HTML: "x", Keyboard: messenger.Keyboard{{{Text: "big", Data: bytes.Repeat([]byte("d"), messenger.MaxButtonData+1)}}}},
			{HTML: "x", Keyboard: messenger.Keyboard{{{Text: "both", Data: []byte("d"), URL: "https://example.org"}}}},
			{HTML: long},
			{HTML: "  "},
		} {
			if _, err := b.bot.Send(ctx, in.ChatID, m); hoard.ErrorCode(err) != hoard.EINVALID {
				t.Errorf("Send(%.40q…) = %v, want invalid", m.HTML, err)
			}
		}
		if n := b.env.Emu.Calls("messages.sendMessage"); n != calls {
			t.Fatalf("%d requests were sent for refused messages", n-calls)
		}
	})

	t.Run("photo with caption and button", func(t *testing.T) {
		m := messenger.OutgoingMessage{HTML: "<i>preview</i>", Photo: JPEG(t, 32, 32), Keyboard: messenger.Keyboard{{{Text: "Send", Data: []byte("s:1")}}}}
		if _, err := b.bot.Send(ctx, in.ChatID, m); err != nil {
			t.Fatal(err)
		}
		want := shown{Text: "preview", Entities: []string{"messageEntityItalic"}, Keyboard: m.Keyboard, Photo: true}
		if got := show(nextChat(t, b.alice)); !reflect.DeepEqual(got, want) {
			t.Fatalf("Alice sees %+v, want %+v", got, want)
		}
	})

	t.Run("copy in order, once", func(t *testing.T) {
		ids := postDocuments(t, b.fixture, 3)
		waitCanRead(t, b.bot, b.dest.ID)
		rids := []int64{messenger.DeriveRandomID(9, 1), messenger.DeriveRandomID(9, 2), messenger.DeriveRandomID(9, 3)}
		before := len(received(t, b.alice))
		for range 2 {
			if n, err := b.bot.Copy(ctx, in.ChatID, b.dest.ID, ids, rids); err != nil || n != 3 {
				t.Fatalf("Copy = %d, %v; want 3 (the second time: delivered before)", n, err)
			}
		}
		want := []shown{{Document: "part1.zip"}, {Document: "part2.zip"}, {Document: "part3.zip"}}
		h, err := b.alice.History(ctx, 3)
		if err != nil {
			t.Fatal(err)
		}
		if got := received(t, b.alice)[before:]; !reflect.DeepEqual(got, want) {
			t.Fatalf("Alice received %+v, want %+v", got, want)
		}
		if n := b.env.Emu.BotForwards(b.aliceID); n != 3 {
			t.Fatalf("the emulator counted %d copies, want 3", n)
		}
		if at := b.env.Emu.BotForwardTimes(b.aliceID, 1); len(at) != 2 || at[1].Before(at[0]) || time.Since(at[0]) > time.Minute {
			t.Fatalf("the copies from the second on arrived at %v", at)
		}
		var w bytes.Buffer
		if err := b.alice.Download(ctx, *h[1].Document, &w); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(w.Bytes(), generated(1001)) {
			t.Fatal("the downloaded copy differs from the posted file")
		}
		if _, err := b.bot.Copy(ctx, in.ChatID, b.mammoth.ID, []int{1}, []int64{7}); !errors.Is(err, messenger.ErrAccessLost) {
			t.Fatalf("Copy from a channel the bot cannot read: %v, want ErrAccessLost", err)
		}
		for _, bad := range [][]int64{rids[:2], {5, 6, 5}, {5, 0, 6}} {
			if _, err := b.bot.Copy(ctx, in.ChatID, b.dest.ID, ids, bad); hoard.ErrorCode(err) != hoard.EINVALID {
				t.Fatalf("Copy with random ids %v: %v, want invalid", bad, err)
			}
		}
	})
	if n := b.env.Emu.BotFloodTrips(); n != 0 {
		t.Fatalf("the bot tripped the flood model %d times", n)
	}
}

func TestBotExactlyOnce(t *testing.T) {
	t.Parallel()
	b := newBotEnv(t, func(cfg *telegram.Config) {
		cfg.SendTimeout = 300 * time.Millisecond // the dropped answers below
		cfg.BotLimits.PerChatBurst = 1           // one message per request: partial progress
	})
	ctx := ctxT(t)
	in := b.hello(t)
	ids := postDocuments(t, b.fixture, 3)
	waitCanRead(t, b.bot, b.dest.ID)
	rids := func(req int64) []int64 {
		return []int64{messenger.DeriveRandomID(req, 1), messenger.DeriveRandomID(req, 2), messenger.DeriveRandomID(req, 3)}
	}

	t.Run("dropped answer, then the retry", func(t *testing.T) {
		b.env.Emu.InjectFault(emulator.Fault{Method: "messages.forwardMessages", DropAnswer: true, Times: 1})
		b.env.Emu.InjectFault(emulator.Fault{Method: "messages.sendMessage", DropAnswer: true, Times: 1})
		before := b.env.Emu.BotForwards(b.aliceID)
		if n, err := b.bot.Copy(ctx, in.ChatID, b.dest.ID, ids, rids(1)); err != nil || n != 3 {
			t.Fatalf("Copy = %d, %v", n, err)
		}
		if n := b.env.Emu.BotForwards(b.aliceID) - before; n != 3 {
			t.Fatalf("%d messages delivered, want 3", n)
		}
		_, err := b.bot.Send(ctx, in.ChatID, messenger.OutgoingMessage{HTML: "once", RandomID: 42})
		if !errors.Is(err, messenger.ErrDuplicate) {
			t.Fatalf("Send whose answer was lost: %v, want ErrDuplicate (delivered by the first attempt)", err)
		}
		n := 0
		for _, m := range received(t, b.alice) {
			if m.Text == "once" {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("Alice got the message %d times", n)
		}
	})

	t.Run("flood wait mid-copy reports progress", func(t *testing.T) {
		b.env.Emu.InjectFault(emulator.Fault{Method: "messages.forwardMessages", Error: "FLOOD_WAIT_120", After: 1, Times: 1})
		n, err := b.bot.Copy(ctx, in.ChatID, b.dest.ID, ids, rids(2))
		fw, ok := messenger.AsFloodWait(err)
		if n != 1 || !ok || fw.RetryAfter != 120*time.Second {
			t.Fatalf("Copy = %d, %v; want 1 delivered and a 120 s flood wait", n, err)
		}
		if n, err := b.bot.Copy(ctx, in.ChatID, b.dest.ID, ids, rids(2)); err != nil || n != 3 {
			t.Fatalf("Copy resumed = %d, %v", n, err)
		}
	})

	t.Run("blocked", func(t *testing.T) {
		if err := b.env.Emu.SetBlocked(b.aliceID, true); err != nil {
			t.Fatal(err)
		}
		if _, err := b.bot.Send(ctx, in.ChatID, messenger.OutgoingMessage{HTML: "hi"}); !errors.Is(err, messenger.ErrBlocked) {
			t.Fatalf("Send to a user who blocked the bot: %v, want ErrBlocked", err)
		}
		if n, err := b.bot.Copy(ctx, in.ChatID, b.dest.ID, ids, rids(3)); !errors.Is(err, messenger.ErrBlocked) || n != 0 {
			t.Fatalf("Copy to a user who blocked the bot: %d, %v; want 0, ErrBlocked", n, err)
		}
		if _, err := b.alice.Start(ctx, ""); err != nil {
			t.Fatal(err)
		}
		if m := b.rec.next(t); m.Text != "/start" {
			t.Fatalf("got %q, want /start", m.Text)
		}
		if _, err := b.bot.Send(ctx, in.ChatID, messenger.OutgoingMessage{HTML: "welcome back"}); err != nil {
			t.Fatalf("Send after Start unblocked the bot: %v", err)
		}
	})
	total := 0
	for _, m := range received(t, b.alice) {
		if m.Document != "" {
			total++
		}
	}
	if total != 6 {
		t.Fatalf("Alice holds %d copies, want 6 (two requests of 3, each exactly once)", total)
	}
}

// TestBotFloodModel: with the default limits and pacer the bot never trips
// the platform's flood model; with its limits raised, it does, and the
// FLOOD_WAIT comes back as a *FloodWait at once.
func TestBotFloodModel(t *testing.T) {
	t.Parallel()
	env := Start(t, "") // the emulator's default model: 1/s per chat (burst 3), 30/s overall
	ctx := ctxT(t)
	cfg := env.Config("bot")
	paced := newBot(t, env, cfg)
	rec := newRecorder()
	stop := listening(t, paced, rec)
	alice := env.UserChat(t, AlicePhone)
	if _, err := alice.Send(ctx, "hi"); err != nil {
		t.Fatal(err)
	}
	chat := rec.next(t).ChatID
	stop()
	for i := range 6 { // the burst of 3, then 3 paced a second apart
		if _, err := paced.Send(ctx, chat, messenger.OutgoingMessage{HTML: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if n := env.Emu.BotFloodTrips(); n != 0 {
		t.Fatalf("the paced bot tripped the flood model %d times", n)
	}

	cfg.BotLimits = messenger.BotLimits{PerChat: 10000, PerChatBurst: 1000, Global: 10000}
	cfg.MaxInlineFloodWait = time.Nanosecond
	unpaced := newBot(t, env, cfg)
	var fw *messenger.FloodWait
	for i := 0; i < 10 && fw == nil; i++ {
		_, err := unpaced.Send(ctx, chat, messenger.OutgoingMessage{HTML: fmt.Sprint("fast ", i)})
		if err != nil && !errors.As(err, &fw) {
			t.Fatal(err)
		}
	}
	if fw == nil || fw.RetryAfter < time.Second || env.Emu.BotFloodTrips() != 1 {
		t.Fatalf("unpaced messages: flood wait %v after %d trips; want one trip answered with a flood wait", fw, env.Emu.BotFloodTrips())
	}
}

// TestBotListenHandover: the update state lives in the shared session store,
// so a second process of the bot that listens after the first stopped
// receives, exactly once, what arrived in between.
func TestBotListenHandover(t *testing.T) {
	t.Parallel()
	env := Start(t, "")
	ctx := ctxT(t)
	cfg := env.Config("bot") // one session store for both processes
	a := newBot(t, env, cfg)
	recA := newRecorder()
	stopA := listening(t, a, recA)
	alice := env.UserChat(t, AlicePhone)
	send := func(text string) {
		if _, err := alice.Send(ctx, text); err != nil {
			t.Fatal(err)
		}
	}
	send("one")
	if m := recA.next(t); m.Text != "one" {
		t.Fatalf("A got %q", m.Text)
	}
	stopA() // A stays connected but no longer listens
	send("two")
	send("three")

	b := newBot(t, env, cfg)
	if n := env.Emu.Calls("auth.importBotAuthorization"); n != 1 {
		t.Fatalf("the token was imported %d times, want once (the session is shared)", n)
	}
	// B addresses Alice before it ever listened: A learned her.
	if _, err := b.Send(ctx, alice.Self().ID, messenger.OutgoingMessage{HTML: "from B"}); err != nil {
		t.Fatal(err)
	}
	if got := nextChat(t, alice); got.Text != "from B" {
		t.Fatalf("Alice got %q", got.Text)
	}
	recB := newRecorder()
	listening(t, b, recB)
	send("four")
	var got []string
	for len(got) < 3 {
		got = append(got, recB.next(t).Text)
	}
	slices.Sort(got) // each update is handled in its own goroutine
	if want := []string{"four", "three", "two"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("B received %q, want %q", got, want)
	}
	recB.none(t)
	recA.none(t)

	// A push lost on the way: the next one reveals the gap, getDifference
	// fills it.
	env.Emu.LosePushes(env.Emu.BotID(), 1)
	send("five")
	send("six")
	got = []string{recB.next(t).Text, recB.next(t).Text}
	slices.Sort(got)
	if want := []string{"five", "six"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after a lost push B received %q, want %q", got, want)
	}
}

// TestBotPrivateDestination: the bot learns a private destination when the
// account makes it an administrator, even while no process listens.
func TestBotPrivateDestination(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seed := DefaultSeedWith(t, dir, func(s map[string]any) {
		s["destination"] = map[string]any{"title": "Private Archive", "bot_admin": false}
	})
	env := StartIn(t, seed, dir)
	ctx := ctxT(t)
	acc := env.Account(t, env.Config("account"))
	id := env.Emu.DestinationID()
	dest, err := acc.ChannelInfo(ctx, messenger.Channel{ID: id, AccessHash: env.Emu.AccountAccessHash(id)})
	if err != nil {
		t.Fatal(err)
	}
	bot := newBot(t, env, env.Config("bot"))
	f := &fixture{env: env, acc: acc, dest: dest}
	ids := postDocuments(t, f, 1)
	if ok, err := bot.CanRead(ctx, id); err != nil || ok {
		t.Fatalf("CanRead before being made administrator = %v, %v", ok, err)
	}
	mammoth, err := acc.ResolveChannel(ctx, mustRef(t, "@mammothfactory"))
	if err != nil {
		t.Fatal(err)
	}
	if err := acc.AddBotAdmin(ctx, mammoth, "@hoard_bot"); !errors.Is(err, messenger.ErrAdminRequired) {
		t.Fatalf("AddBotAdmin in a channel the account only joined: %v, want ErrAdminRequired", err)
	}
	if err := acc.AddBotAdmin(ctx, dest, "alice"); hoard.ErrorCode(err) != hoard.EINVALID {
		t.Fatalf("AddBotAdmin of a user: %v, want invalid", err)
	}
	if err := acc.AddBotAdmin(ctx, dest, "@hoard_bot"); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	listening(t, bot, rec) // started after: the update waits for it
	waitCanRead(t, bot, id)
	alice := env.UserChat(t, AlicePhone)
	if _, err := alice.Send(ctx, "hi"); err != nil {
		t.Fatal(err)
	}
	chat := rec.next(t).ChatID
	if n, err := bot.Copy(ctx, chat, id, ids, []int64{5}); err != nil || n != 1 {
		t.Fatalf("Copy from the private destination = %d, %v", n, err)
	}
	if got := nextChat(t, alice); got.Document == nil || got.Document.FileName != "part1.zip" {
		t.Fatalf("Alice got %+v", show(got))
	}
}
