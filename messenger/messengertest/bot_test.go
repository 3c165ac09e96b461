package messengertest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/emulator"
	"github.com/hoard/hoard/messenger/telegram"
)

func TestBot(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	ctx := ctxT(t)
	incoming := make(chan messenger.IncomingMessage, 10)
	cfg := f.env.Config("bot")
	cfg.BotChatRate = 20
	if _, err := telegram.NewBot(ctx, cfg, "111:wrong", nil); err == nil {
		t.Fatal("wrong token accepted")
	}
	bot, err := telegram.NewBot(ctx, cfg, f.env.Info.BotToken, func(_ context.Context, m messenger.IncomingMessage) { incoming <- m })
	if err != nil {
		t.Fatal(err)
	}
	defer bot.Close()
	self, err := bot.Self(ctx)
	if err != nil || !self.Bot || self.ID != f.env.Emu.BotID() || self.Username != "hoard_bot" {
		t.Fatalf("bot self = %+v, %v", self, err)
	}

	if _, err := bot.Reply(ctx, f.env.Emu.AccountID(), "hi"); !errors.Is(err, messenger.ErrNotFound) {
		t.Fatalf("reply to an unseen user: %v", err)
	}
	if err := f.env.Emu.SendToBot(ctx, "/start"); err != nil {
		t.Fatal(err)
	}
	var in messenger.IncomingMessage
	select {
	case in = <-incoming:
	case <-time.After(10 * time.Second):
		t.Fatal("bot received nothing")
	}
	if in.Text != "/start" || in.UserID != f.env.Emu.AccountID() || in.ChatID != in.UserID {
		t.Fatalf("incoming = %+v", in)
	}
	text := "<b>Found</b> " + messenger.EscapeHTML("Tom & <Jerry>.zip")
	if _, err := bot.Reply(ctx, in.ChatID, text); err != nil {
		t.Fatal(err)
	}
	if _, err := bot.SendPhoto(ctx, in.ChatID, "preview.jpg", JPEG(t, 32, 32), "<i>preview</i>"); err != nil {
		t.Fatal(err)
	}

	// A post in the destination reaches the bot, which learns its own
	// access hash for the channel and forwards the post to the user.
	size := int64(4096)
	postID, err := f.acc.Upload(ctx, messenger.UploadRequest{Channel: f.dest, FileName: "pack.zip",
		Data: io.NewSectionReader(bytes.NewReader(generated(size)), 0, size)})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		err = bot.Forward(ctx, in.ChatID, f.dest.ID, []int{postID}, false)
		if err == nil || !errors.Is(err, messenger.ErrNotFound) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := bot.Forward(ctx, in.ChatID, f.dest.ID, []int{postID}, true); err != nil {
		t.Fatal(err)
	}
	if err := bot.Forward(ctx, in.ChatID, f.mammoth.ID, []int{1}, false); !errors.Is(err, messenger.ErrNotFound) {
		t.Fatalf("forward from a channel the bot never saw: %v", err)
	}

	msgs := f.env.Emu.PrivateMessages()
	if len(msgs) != 5 {
		t.Fatalf("private messages = %+v", msgs)
	}
	if m := msgs[1]; m.Out || m.Text != "Found Tom & <Jerry>.zip" || len(m.Entities) != 1 || m.Entities[0] != "messageEntityBold" {
		t.Fatalf("reply = %+v", m)
	}
	if m := msgs[2]; !m.HasPhoto || m.Text != "preview" {
		t.Fatalf("photo = %+v", m)
	}
	if m := msgs[3]; !m.HasDocument || m.ForwardedPost != postID {
		t.Fatalf("forward = %+v", m)
	}
	if m := msgs[4]; !m.HasDocument || m.ForwardedPost != 0 {
		t.Fatalf("copy = %+v", m)
	}

	t.Run("resolve channel", func(t *testing.T) {
		ch, err := bot.ResolveChannel(ctx, mustRef(t, "@hoardarchive"))
		if err != nil || ch.ID != f.dest.ID || ch.AccessHash == f.dest.AccessHash {
			t.Fatalf("bot's destination = %+v, %v (access hashes are per viewer)", ch, err)
		}
	})
	t.Run("rate limited per chat", func(t *testing.T) {
		time.Sleep(200 * time.Millisecond) // refill the burst of 3
		start := time.Now()
		for range 6 { // burst of 3, then 20/s
			if err := bot.Forward(ctx, in.ChatID, f.dest.ID, []int{postID}, true); err != nil {
				t.Fatal(err)
			}
		}
		if d := time.Since(start); d < 140*time.Millisecond {
			t.Fatalf("6 messages in %s: per-chat limit not applied", d)
		}
	})
	t.Run("lost push recovered with getDifference", func(t *testing.T) {
		f.env.Emu.LosePushes(f.env.Emu.BotID(), 1)
		if err := f.env.Emu.SendToBot(ctx, "/search dragon"); err != nil {
			t.Fatal(err)
		}
		if err := f.env.Emu.SendToBot(ctx, "/latest"); err != nil {
			t.Fatal(err)
		}
		var got []string
		for len(got) < 2 {
			select {
			case m := <-incoming:
				got = append(got, m.Text)
			case <-time.After(10 * time.Second):
				t.Fatalf("received %v, want both messages", got)
			}
		}
		if got[0] != "/search dragon" && got[1] != "/search dragon" {
			t.Fatalf("received %v", got)
		}
		if f.env.Emu.Calls("updates.getDifference") == 0 {
			t.Fatal("the gap was not recovered through getDifference")
		}
	})
	t.Run("flood wait is typed", func(t *testing.T) {
		f.env.Emu.InjectFault(emulator.Fault{Method: "messages.sendMessage", Error: "FLOOD_WAIT_120", Times: 1})
		_, err := bot.Reply(ctx, in.ChatID, "x")
		fw, ok := messenger.AsFloodWait(err)
		if !ok || fw.RetryAfter != 120*time.Second {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestBotRestartCatchesUp(t *testing.T) {
	t.Parallel()
	env := Start(t, "")
	ctx := ctxT(t)
	cfg := env.Config("bot")
	incoming := make(chan messenger.IncomingMessage, 10)
	handler := func(_ context.Context, m messenger.IncomingMessage) { incoming <- m }
	receive := func() messenger.IncomingMessage {
		select {
		case m := <-incoming:
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("bot received nothing")
		}
		return messenger.IncomingMessage{}
	}

	bot, err := telegram.NewBot(ctx, cfg, env.Info.BotToken, handler)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Emu.SendToBot(ctx, "/start"); err != nil {
		t.Fatal(err)
	}
	first := receive()
	if _, err := bot.ResolveChannel(ctx, mustRef(t, "@hoardarchive")); err != nil {
		t.Fatal(err)
	}
	if err := bot.Close(); err != nil {
		t.Fatal(err)
	}

	// Sent while the bot is down.
	if err := env.Emu.SendToBot(ctx, "/latest"); err != nil {
		t.Fatal(err)
	}
	bot, err = telegram.NewBot(ctx, cfg, env.Info.BotToken, handler)
	if err != nil {
		t.Fatal(err)
	}
	defer bot.Close()
	if m := receive(); m.Text != "/latest" {
		t.Fatalf("after restart got %q, want /latest", m.Text)
	}
	// Access hashes survive the restart: reply and forward right away.
	if _, err := bot.Reply(ctx, first.ChatID, "back"); err != nil {
		t.Fatal(err)
	}
	dest := env.Emu.DestinationID()
	if err := bot.Forward(ctx, first.ChatID, dest, []int{1}, true); err == nil {
		t.Fatal("forwarding a service message succeeded")
	} else if errors.Is(err, messenger.ErrNotFound) && !strings.Contains(err.Error(), "MESSAGE_ID_INVALID") {
		t.Fatalf("channel hash lost across the restart: %v", err)
	}
}
