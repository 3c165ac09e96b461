package messengertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/emulator"
	"github.com/hoard/hoard/messenger/telegram"
)

// botMsg is what a test checks of a private message.
type botMsg struct {
	Text     string
	Entities []string
	Buttons  []string
	Photo    bool
	Document bool
}

func summarize(ms []emulator.PrivateMessage) []botMsg {
	out := make([]botMsg, len(ms))
	for i, m := range ms {
		out[i] = botMsg{Text: m.Text, Entities: m.Entities, Buttons: m.Buttons, Photo: m.HasPhoto, Document: m.HasDocument}
	}
	return out
}

// recorder is a BotHandler that hands every update to the test.
type recorder struct {
	msgs chan messenger.IncomingMessage
	cbs  chan messenger.CallbackQuery
	// onCallback, when set, answers each button press.
	onCallback func(ctx context.Context, q messenger.CallbackQuery) error
}

func newRecorder() *recorder {
	return &recorder{msgs: make(chan messenger.IncomingMessage, 100), cbs: make(chan messenger.CallbackQuery, 100)}
}

func (r *recorder) HandleMessage(_ context.Context, m messenger.IncomingMessage) error {
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
func listening(t *testing.T, bot *telegram.Bot, h messenger.BotHandler) (stop func()) {
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
func newBot(t *testing.T, env *Env, cfg telegram.Config) *telegram.Bot {
	t.Helper()
	bot, err := telegram.NewBot(ctxT(t), cfg, env.Info.BotToken)
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

func TestBotListenSendCopy(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	ctx := ctxT(t)
	if _, err := telegram.NewBot(ctx, f.env.Config("bot"), "111:wrong"); err == nil {
		t.Fatal("wrong token accepted")
	}
	bot := newBot(t, f.env, f.env.Config("bot"))
	self, err := bot.Self(ctx)
	if want := (messenger.User{ID: f.env.Emu.BotID(), Username: "hoard_bot", FirstName: "hoard_bot", Bot: true}); err != nil || self != want {
		t.Fatalf("Self = %+v, %v; want %+v", self, err, want)
	}
	if _, err := bot.Send(ctx, f.env.Emu.AccountID(), messenger.OutgoingMessage{HTML: "hi"}); !errors.Is(err, messenger.ErrNotFound) {
		t.Fatalf("Send to a user the bot never saw: %v, want ErrNotFound", err)
	}
	rec := newRecorder()
	listening(t, bot, rec)
	if err := f.env.Emu.SendToBot(ctx, "/start"); err != nil {
		t.Fatal(err)
	}
	in := rec.next(t)
	if in.Text != "/start" || in.UserID != f.env.Emu.AccountID() || in.ChatID != in.UserID || in.AccessHash == 0 || in.MessageID == 0 {
		t.Fatalf("incoming = %+v", in)
	}

	t.Run("send", func(t *testing.T) {
		kb := messenger.Keyboard{{{Text: "Next", Data: []byte("p:2")}, {Text: "Web", URL: "https://example.org/p/1"}}}
		rid := messenger.DeriveRandomID(in.ChatID, int64(in.MessageID))
		text := "<b>Found</b> " + messenger.EscapeHTML("Tom & <Jerry>.zip")
		id, err := bot.Send(ctx, in.ChatID, messenger.OutgoingMessage{HTML: text, Keyboard: kb, RandomID: rid})
		if err != nil || id == 0 {
			t.Fatalf("Send = %d, %v", id, err)
		}
		if _, err := bot.Send(ctx, in.ChatID, messenger.OutgoingMessage{HTML: "again", RandomID: rid}); !errors.Is(err, messenger.ErrDuplicate) {
			t.Fatalf("Send with a used random id: %v, want ErrDuplicate", err)
		}
		if _, err := bot.Send(ctx, in.ChatID, messenger.OutgoingMessage{HTML: "<i>preview</i>", Photo: JPEG(t, 32, 32)}); err != nil {
			t.Fatal(err)
		}
		msgs := f.env.Emu.PrivateMessages()
		got := msgs[len(msgs)-2:]
		want := []botMsg{
			{Text: "Found Tom & <Jerry>.zip", Entities: []string{"messageEntityBold"}, Buttons: []string{"Next", "Web"}},
			{Text: "preview", Entities: []string{"messageEntityItalic"}, Photo: true},
		}
		if g := summarize(got); !reflect.DeepEqual(g, want) {
			t.Fatalf("bot's messages = %+v, want %+v", g, want)
		}
	})

	t.Run("copy", func(t *testing.T) {
		ids := postDocuments(t, f, 3)
		waitCanRead(t, bot, f.dest.ID)
		rids := []int64{messenger.DeriveRandomID(1, 1), messenger.DeriveRandomID(1, 2), messenger.DeriveRandomID(1, 3)}
		before := len(f.env.Emu.PrivateMessages())
		n, err := bot.Copy(ctx, in.ChatID, f.dest.ID, ids, rids)
		if err != nil || n != 3 {
			t.Fatalf("Copy = %d, %v", n, err)
		}
		n, err = bot.Copy(ctx, in.ChatID, f.dest.ID, ids, rids)
		if err != nil || n != 3 {
			t.Fatalf("Copy again = %d, %v; want 3 delivered before", n, err)
		}
		got := summarize(f.env.Emu.PrivateMessages()[before:])
		want := []botMsg{{Document: true}, {Document: true}, {Document: true}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("copies = %+v, want %+v", got, want)
		}
		if _, err := bot.Copy(ctx, in.ChatID, f.mammoth.ID, []int{1}, []int64{7}); !errors.Is(err, messenger.ErrAccessLost) {
			t.Fatalf("Copy from a channel the bot cannot read: %v, want ErrAccessLost", err)
		}
	})
}
