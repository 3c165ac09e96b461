package messengertest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/emulator"
	"github.com/hoard/hoard/messenger/telegram"
)

// echoBot starts an emulator whose bot answers every message with "re:
// <text>" (limits raised far above one turn at a time on both sides, so
// only the protocol is measured), and Alice's chat with it.
func echoBot(t testing.TB) (*Env, *telegram.UserChat) {
	t.Helper()
	env := Start(t, "")
	unlimited := messenger.BotLimits{PerChat: 100000, PerChatBurst: 1000, Global: 100000}
	env.Emu.SetBotFlood(emulator.BotFlood{PerChat: unlimited.PerChat, PerChatBurst: unlimited.PerChatBurst, Global: unlimited.Global})
	cfg := env.Config("bot")
	cfg.BotLimits = unlimited
	bot := newBot(t, env, cfg)
	rec := newRecorder()
	rec.onMessage = func(ctx context.Context, m messenger.IncomingMessage) error {
		_, err := bot.Send(ctx, m.ChatID, messenger.OutgoingMessage{HTML: "re: " + messenger.EscapeHTML(m.Text),
			RandomID: messenger.DeriveRandomID(m.ChatID, int64(m.MessageID))})
		return err
	}
	listening(t, bot, rec)
	return env, env.UserChat(t, AlicePhone)
}

// turn sends text as Alice and waits for the bot's answer.
func turn(t testing.TB, alice *telegram.UserChat, text string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if _, err := alice.Send(ctx, text); err != nil {
		t.Fatal(err)
	}
	m, err := alice.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m.Text != "re: "+text {
		t.Fatalf("answer %q to %q", m.Text, text)
	}
}

// TestBotRoundTripNoGap: the bot's own sends reach its updates manager (the
// update hook), so the next message after a reply is no gap: conversations
// cost no updates.getDifference, neither the bot's nor the user's.
func TestBotRoundTripNoGap(t *testing.T) {
	t.Parallel()
	env, alice := echoBot(t)
	turn(t, alice, "warm up")
	before := env.Emu.Calls("updates.getDifference")
	for i := range 20 {
		turn(t, alice, fmt.Sprint("ping ", i))
	}
	if n := env.Emu.Calls("updates.getDifference") - before; n != 0 {
		t.Fatalf("20 turns cost %d getDifference calls, want 0", n)
	}
}

// BenchmarkBotRoundTrip measures a user → bot → reply turn through the real
// client and the emulator on loopback: p50 and p99 over b.N turns (run with
// -benchtime=200x), and getDifference calls per turn.
func BenchmarkBotRoundTrip(b *testing.B) {
	env, alice := echoBot(b)
	turn(b, alice, "warm up")
	before := env.Emu.Calls("updates.getDifference")
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		turn(b, alice, fmt.Sprint("ping ", i))
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(took)
	pct := func(p float64) float64 { return float64(took[int(p*float64(len(took)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(env.Emu.Calls("updates.getDifference")-before)/float64(b.N), "getDifference/turn")
}
