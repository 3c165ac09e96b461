package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger/emulator"
	"github.com/hoard/hoard/messenger/telegram"
	"github.com/hoard/hoard/store/storetest"
)

// TestNoSessionIsSharedAcrossProcesses runs web, two workers and two bots
// against the emulator, which kills any auth key used by two processes at
// once (as the platform does: 406 AUTH_KEY_DUPLICATED): an ingestion
// cycle, 20 deliveries and a failover of the answering bot go through with
// no key killed. Then a forced 406 on the account puts it into EXPIRED
// ("sign in again") with a notification, and nothing asks the platform
// with its session again. HOARD_LARGE_TESTS=1 repeats deliveries and
// failovers for 10 minutes.
func TestNoSessionIsSharedAcrossProcesses(t *testing.T) {
	t.Parallel()
	const packs = 20
	start := time.Now()
	w := newBotWorld(t, botSeedOptions{packs: packs}, fastBotLimits)
	setUpLikeTheDemo(t, w.vars(nil), w.seed)

	w.start(t, "web", map[string]string{"WORKER_ID": "web", "LISTEN_ADDR": "127.0.0.1:0"}, "web")
	for _, id := range []string{"worker-1", "worker-2"} {
		w.start(t, id, map[string]string{"WORKER_ID": id}, "worker")
	}
	bots := map[string]*hoardProc{}
	for _, id := range []string{"bot-1", "bot-2"} {
		bots[id] = w.startBot(t, id)
	}
	waitUntil(t, "the cycle to publish every package", 5*time.Minute, func() bool {
		n := 0
		for _, p := range storetest.Packages(t, w.db) {
			if p.DestChannelID != 0 {
				n++
			}
		}
		return n == packs+4 // the packs, the three-part set and the album's three
	})
	t.Logf("%v: the cycle published every package", time.Since(start).Round(time.Second))
	alice := w.chat(t, botUsers[0])
	waitUntil(t, "a bot to answer and read the destination", 2*time.Minute, func() bool {
		st, err := w.db.FindBotStatus(context.Background())
		return err == nil && st.CanReadDest != nil && *st.CanReadDest
	})
	u := w.link(t, alice, "alice@hoard.test")

	deadline := time.Now()
	if os.Getenv("HOARD_LARGE_TESTS") != "" {
		deadline = deadline.Add(10 * time.Minute)
	}
	for round := 1; ; round++ {
		var ids []int64
		for i := 1; i <= packs; i++ {
			ids = append(ids, w.packageID(t, fmt.Sprintf("Pack %02d.pdf", i)))
		}
		w.queueSends(t, u, fmt.Sprintf("round %d", round), ids...)
		waitDelivered(t, w, u, round*packs)
		t.Logf("%v: round %d delivered", time.Since(start).Round(time.Second), round)
		failover(t, w, bots, alice)
		t.Logf("%v: round %d failed over", time.Since(start).Round(time.Second), round)
		if n := w.env.Emu.KeysKilled(); n != 0 {
			t.Fatalf("round %d: %d auth keys killed as used from two places at once", round, n)
		}
		if time.Now().After(deadline) {
			t.Logf("%d rounds of %d deliveries and a bot failover, no key killed", round, packs)
			break
		}
	}

	t.Run("a forced 406 signs the account out once", func(t *testing.T) {
		// The first cycle may still be finishing (grouping, the audit):
		// a cycle queued now would be absorbed by it and scan nothing.
		waitUntil(t, "the first cycle to end", 2*time.Minute, func() bool {
			return w.unfinishedJobs(t, hoard.IngestCycleArgs{}.Kind()) == 0
		})
		w.env.Emu.InjectFault(emulator.Fault{Method: "channels.getChannels", ChannelID: w.env.Emu.ChannelID("Model Shop"),
			Error: "AUTH_KEY_DUPLICATED", Times: 1}) // the scan's first request
		if _, err := w.inserter.Insert(context.Background(), hoard.IngestCycleArgs{Trigger: hoard.TriggerManual}, nil); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		var acc *hoard.Account
		waitUntil(t, "the account to be signed out", 2*time.Minute, func() bool {
			accounts, err := w.db.ListAccounts(ctx)
			if err != nil || len(accounts) == 0 {
				return false
			}
			acc = &accounts[0]
			return acc.AuthState == hoard.AuthExpired
		})
		if !strings.Contains(acc.AuthError, "used from two places at once") || !strings.Contains(acc.AuthError, "sign it in again") {
			t.Fatalf("reason %q", acc.AuthError)
		}
		notes, err := w.db.ListNotifications(ctx, 0, 50)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, n := range notes {
			found = found || n.Type == hoard.NotifySessionEnded
		}
		if !found {
			t.Fatalf("no SESSION_ENDED notification among %d", len(notes))
		}
		if s, err := w.db.LoadMessengerSession(ctx, telegram.AccountSessionKey(acc.ID)); err != nil || s != nil {
			t.Fatalf("the dead session is still stored (%d bytes, %v)", len(s), err)
		}
		// The cycle's scans find the account signed out in the database: no
		// request with the dead session goes out again.
		before := w.env.Emu.Refusals()["channels.getChannels:AUTH_KEY_UNREGISTERED"] + w.env.Emu.Refusals()["messages.getHistory:AUTH_KEY_UNREGISTERED"]
		time.Sleep(5 * time.Second)
		after := w.env.Emu.Refusals()["channels.getChannels:AUTH_KEY_UNREGISTERED"] + w.env.Emu.Refusals()["messages.getHistory:AUTH_KEY_UNREGISTERED"]
		if after != before {
			t.Fatalf("%d more requests with the dead session", after-before)
		}
	})
}

// failover kills the bot process answering commands and checks that the
// other answers.
func failover(t *testing.T, w *botWorld, bots map[string]*hoardProc, alice *chatter) {
	t.Helper()
	holder, err := w.db.LeaseHolder(context.Background(), "bot")
	if err != nil {
		t.Fatal(err)
	}
	name, _, _ := strings.Cut(holder, "/")
	p := bots[name]
	if p == nil {
		t.Fatalf("lease holder %q is none of the bots", holder)
	}
	p.kill()
	if got := alice.say("/help"); !strings.Contains(got.Text, "What I can do") {
		t.Fatalf("after killing %s: %q", name, got.Text)
	}
	bots[name] = w.startBot(t, name) // back as the standby
}

// waitDelivered waits until n of u's requests are SENT, and says where the
// others stand when they are not within 3 minutes.
func waitDelivered(t *testing.T, w *botWorld, u *hoard.User, n int) {
	t.Helper()
	sent := func() int { // every request, not the newest 500 that statuses counts
		n := 0
		for _, r := range storetest.SendRequests(t, w.db) {
			if r.UserID == u.ID && r.Status == hoard.SendSent {
				n++
			}
		}
		return n
	}
	for deadline := time.Now().Add(3 * time.Minute); sent() != n; time.Sleep(50 * time.Millisecond) {
		if time.Now().Before(deadline) {
			continue
		}
		reqs, _ := w.db.ListBotSendRequests(context.Background(), u.ID, 500)
		var open []string
		for _, r := range reqs {
			if r.Status != hoard.SendSent {
				open = append(open, fmt.Sprintf("%d %s %q", r.ID, r.Status, r.ErrorMessage))
			}
		}
		t.Fatalf("%d of %d deliveries SENT after 3 minutes; the others:\n%s\njobs:\n%s", sent(), n,
			strings.Join(open, "\n"), jobStates(t, w.url))
	}
}
