package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gotd/td/bin"
	"github.com/gotd/td/tg"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/emulator"
)

// faultBotLimits pace the fault tests' deliveries slowly enough to kill
// the bot in the middle of them (the emulator's flood model matches).
var faultBotLimits = messenger.BotLimits{PerChat: 3, PerChatBurst: 3, Global: 30}

// largeTests reports whether the long versions of the fault tests run.
func largeTests() bool { return os.Getenv("HOARD_LARGE_TESTS") != "" }

// TestBotDeliveryFaults delivers a batch of packages through the hoard
// binary while things go wrong — the bot process killed with SIGKILL and
// restarted, the platform's answers lost, FLOOD_WAIT on a fifth of the
// forwards — and checks that every part arrives exactly once, in order, and
// that every request ends SENT. HOARD_LARGE_TESTS=1 runs the sizes
// (20 packages, 10 kills) at the platform's own pace (one message a second
// per chat), so that the delivery outlasts ten kills; the default suite a
// smaller, faster version.
func TestBotDeliveryFaults(t *testing.T) {
	t.Parallel()
	packs, kills, limits := 8, 2, faultBotLimits
	if largeTests() {
		packs, kills, limits = 20, 10, messenger.DefaultBotLimits
	}
	w := newBotWorld(t, botSeedOptions{packs: packs}, limits)
	w.ingest(t)
	var ids []int64
	for i := 1; i <= packs; i++ {
		ids = append(ids, w.packageID(t, fmt.Sprintf("Pack %02d.pdf", i)))
	}
	want := append([]string(nil), w.parts(t, ids...)...)
	bot := w.startBot(t, "bot-f")
	w.waitAnswering(t, bot)

	// deliver links a fresh user, arms the faults, queues the batch for
	// the user, runs during, then checks what the user received.
	deliver := func(t *testing.T, u botUser, arm func(chatID int64), during func(user *hoard.User)) {
		c := w.chat(t, u)
		user := w.link(t, c, u.name+"@example.com")
		arm(c.id)
		defer w.env.Emu.ClearFaults()
		w.queueSends(t, user, "Fault run", ids...)
		during(user)
		waitUntil(t, u.name+"'s requests to end SENT", 3*time.Minute, func() bool {
			return w.statuses(t, user)[hoard.SendSent] == len(ids)
		})
		if got := c.documents(); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("%s received %d documents\n %q\nwant each part once, in order\n %q", u.name, len(got), got, want)
		}
		if n := w.env.Emu.BotForwards(c.id); n != len(want) {
			t.Fatalf("the emulator copied %d messages into %s's chat, want %d", n, u.name, len(want))
		}
		headers := 0
		for _, text := range c.texts() {
			if strings.Contains(text, "Fault run") {
				headers++
			}
		}
		if headers != 1 {
			t.Fatalf("%s got %d headers", u.name, headers)
		}
	}

	t.Run(fmt.Sprintf("killed %d times", kills), func(t *testing.T) {
		deliver(t, botUsers[0], func(int64) {}, func(user *hoard.User) {
			for k := range kills {
				sent := w.partsSent(t, user)
				waitUntil(t, "progress to kill in", time.Minute, func() bool { return w.partsSent(t, user) > sent })
				if w.partsSent(t, user) == len(want) {
					t.Fatalf("the delivery ended before kill %d", k+1)
				}
				bot.kill()
				bot = w.startBot(t, "bot-f")
			}
		})
	})

	t.Run("answers lost", func(t *testing.T) {
		deliver(t, botUsers[1], func(chat int64) {
			// The header's answer, and three forwards' answers, never come.
			w.env.Emu.InjectFault(emulator.Fault{Method: "messages.sendMessage", DropAnswer: true, Times: 1, Match: toUser(chat)})
			w.env.Emu.InjectFault(emulator.Fault{Method: "messages.forwardMessages", DropAnswer: true, After: 1, Times: 3})
		}, func(*hoard.User) {})
		// Four answers were lost: the bot sent again what stayed
		// unanswered (a forward lost three times in a row ends the
		// attempt instead, and the job's retry delivers the rest).
		if n := strings.Count(bot.stderr.String(), "unanswered, sending it again"); n < 2 {
			t.Fatalf("the bot re-sent %d unanswered requests: the faults did not fire", n)
		}
	})

	t.Run("FLOOD_WAIT on a fifth of the forwards", func(t *testing.T) {
		var n atomic.Int64
		deliver(t, botUsers[2], func(int64) {
			w.env.Emu.InjectFault(emulator.Fault{Method: "messages.forwardMessages", Error: "FLOOD_WAIT_3",
				Match: func(bin.Object) bool { return n.Add(1)%5 == 0 }})
		}, func(*hoard.User) {})
		if n.Load() < 5 {
			t.Fatalf("only %d forwards went out: no flood wait was answered", n.Load())
		}
	})

	if trips := w.env.Emu.BotFloodTrips(); trips != 0 {
		t.Fatalf("the bot tripped the flood model %d times", trips)
	}
}

// toUser matches a message sent to a user's private chat (the bot's, not
// the user's own).
func toUser(userID int64) func(bin.Object) bool {
	return func(req bin.Object) bool {
		m, ok := req.(*tg.MessagesSendMessageRequest)
		if !ok {
			return false
		}
		p, ok := m.Peer.(*tg.InputPeerUser)
		return ok && p.UserID == userID
	}
}

// TestBotFailover runs two `hoard bot` processes: each command is answered
// once, and when the answering one is killed the other answers within 15 s,
// including what was sent while nobody listened.
func TestBotFailover(t *testing.T) {
	t.Parallel()
	w := newBotWorld(t, botSeedOptions{packs: 1}, fastBotLimits)
	a := w.startBot(t, "bot-a")
	waitUntil(t, "bot-a to answer", time.Minute, func() bool {
		h, _ := w.db.LeaseHolder(context.Background(), "bot")
		return strings.HasPrefix(h, "bot-a/")
	})
	b := w.start(t, "bot-b", map[string]string{"WORKER_ID": "bot-b", "LOG_LEVEL": "info"}, "bot")
	alice := w.chat(t, botUsers[0])
	waitUntil(t, "bot-b to stand by", time.Minute, func() bool { return strings.Contains(b.stderr.String(), "bot: ready") })
	for i := range 5 {
		if got := alice.say("/help"); !strings.Contains(got.Text, "What I can do") {
			t.Fatalf("command %d: %q", i, got.Text)
		}
	}
	a.kill()
	killed := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id, err := alice.uc.Send(ctx, "/start")
	if err != nil {
		t.Fatal(err)
	}
	got := alice.after(id)
	took := time.Since(killed)
	if !strings.Contains(got.Text, "Hi! I am hoard's bot") {
		t.Fatalf("/start after the failover: %q", got.Text)
	}
	if took > 15*time.Second {
		t.Fatalf("the standby answered %v after the kill, want within 15 s", took)
	}
	t.Logf("the standby answered %v after the kill", took.Round(100*time.Millisecond))
	if h, _ := w.db.LeaseHolder(context.Background(), "bot"); !strings.HasPrefix(h, "bot-b/") {
		t.Fatalf("lease holder %q", h)
	}
	// Every command got exactly one answer.
	helps, starts := 0, 0
	for _, text := range alice.texts() {
		if strings.HasPrefix(text, "What I can do") {
			helps++
		}
		if strings.Contains(text, "Hi! I am hoard's bot") {
			starts++
		}
	}
	if helps != 5 || starts != 1 {
		t.Fatalf("answers: %d to 5 × /help, %d to /start", helps, starts)
	}
}
