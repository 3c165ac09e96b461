package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/messengertest"
	"github.com/hoard/hoard/store/storetest"
)

// The bot's benchmarks run `hoard bot` as its own process against an
// emulator in the benchmark's process, with users on the real client.

// BenchmarkBotCommandRoundTrip measures a command's round trip — a user
// sends /search WORD, the bot's answer arrives — with 20 users at once
// against the benchmark catalog (storetest.CatalogDB: 1,000,000 packages
// unless HOARD_BENCH_PACKAGES says otherwise; HOARD_BENCH_DB_URL keeps it),
// the platform's limits on: each user sends one command a second at most,
// as the per-chat limit allows a steady conversation. Each iteration is one
// command from every user; run with -benchtime 10x for 200 round trips a
// mode.
func BenchmarkBotCommandRoundTrip(b *testing.B) {
	users := int(benchSize(b, "HOARD_BENCH_BOT_USERS", 20))
	catalog := storetest.CatalogDB(b, storetest.BenchPackages(), 0)
	// A kept catalog (HOARD_BENCH_DB_URL) remembers an earlier run's bot,
	// whose emulator is gone: forget its sessions, answers, leases and
	// rates. Only this benchmark runs a messenger client on the catalog:
	// every session it holds is that bot's.
	storetest.Clear(b, catalog, "messenger_sessions", "bot_handled_updates", "leases", "rate_limits")
	dir := b.TempDir()
	w := &botWorld{seed: writeBotSeed(b, dir, botSeedOptions{users: users}), url: catalog.Pool().Config().ConnString(),
		data: dataDir(b), db: catalog, limits: messenger.DefaultBotLimits}
	w.env = messengertest.StartIn(b, w.seed, dir)
	b.Cleanup(func() {
		for _, p := range w.procs {
			p.kill()
		}
	})
	w.startBot(b, "bot-bench")
	waitUntil(b, "the bot to answer", 2*time.Minute, func() bool {
		h, _ := w.db.LeaseHolder(context.Background(), "bot")
		return strings.HasPrefix(h, "bot-bench/")
	})
	chats := w.benchUsers(b, users)
	const period = 1100 * time.Millisecond // one command a second per chat, as its limit allows
	// Staggered, the users' commands arrive spread over each second, as
	// people's do; in step, all of them at the same instant (the worst
	// burst 20 users can make). Every run, the first ones of its
	// b.N included, starts a period after the previous run's last
	// commands, so that no user sends faster than the period.
	var resume time.Time
	for _, mode := range []struct {
		name    string
		stagger bool
	}{{"staggered", true}, {"in_step", false}} {
		b.Run(mode.name, func(b *testing.B) {
			var mu sync.Mutex
			var samples []time.Duration
			var wg sync.WaitGroup
			start := time.Now()
			if start.Before(resume) {
				start = resume
			}
			resume = start.Add(time.Duration(b.N) * period)
			for u, c := range chats {
				wg.Add(1)
				go func() {
					defer wg.Done()
					offset := time.Duration(0)
					if mode.stagger {
						offset = period * time.Duration(u) / time.Duration(len(chats))
					}
					for i := range b.N {
						time.Sleep(time.Until(start.Add(offset + time.Duration(i)*period)))
						word := storetest.CatalogWords[(i*len(chats)+u)%len(storetest.CatalogWords)]
						t0 := time.Now()
						if got := c.say("/search " + word); !strings.Contains(got.Text, word) && !strings.Contains(got.Text, "No packages") {
							b.Errorf("/search %s answered %q", word, got.Text)
						}
						d := time.Since(t0)
						mu.Lock()
						samples = append(samples, d)
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			slices.Sort(samples)
			b.ReportMetric(ms(pct(samples, 50)), "p50-ms")
			b.ReportMetric(ms(pct(samples, 99)), "p99-ms")
			b.ReportMetric(ms(samples[len(samples)-1]), "max-ms")
			b.ReportMetric(float64(len(samples)), "round-trips")
		})
	}
	b.ReportMetric(float64(w.env.Emu.BotFloodTrips()), "flood-trips")
	if trips := w.env.Emu.BotFloodTrips(); trips != 0 {
		b.Errorf("the bot tripped the flood model %d times", trips)
	}
}

// benchUsers signs n generated users in and links each to a hoard user.
func (w *botWorld) benchUsers(b testing.TB, n int) []*chatter {
	chats := make([]*chatter, n)
	for i := range n { // one at a time: each sign-in is a key exchange
		chats[i] = w.chat(b, botUser{name: fmt.Sprintf("user%02d", i+1), phone: fmt.Sprintf("+1555100%04d", i+1)})
	}
	for _, c := range chats {
		w.link(b, c, c.name+"@bench.example")
	}
	return chats
}

// pollClosely waits until cond holds, looking every 2 ms (a benchmark's
// clock: waitUntil's 50 ms would be a visible part of a 2 s figure), and
// returns when it first saw it hold; it fails after limit.
func pollClosely(b testing.TB, what string, limit time.Duration, cond func() bool) time.Time {
	b.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			b.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return time.Now()
}

func pct(sorted []time.Duration, p int) time.Duration {
	return sorted[min(len(sorted)-1, (len(sorted)*p+99)/100-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// benchFlood is the flood model the delivery benchmarks raise the
// platform's limits to, and the bot's pace to match.
var benchFlood = messenger.BotLimits{PerChat: 10, PerChatBurst: 5, Global: 100}

// BenchmarkBotDeliveryPace measures deliveries against the emulator's bot
// flood model (raised to 10 messages/s per chat after a burst of 5, 100/s
// in all, and the bot's pace with it): a 100-part delivery to one chat, and
// 30 users × 10 parts at once. The pace is the time the model allows at
// best, from full buckets, divided by the time taken on the model's clock,
// from the first message it sees to the last (1 = as fast as the model
// allows); each run starts once the previous one's buckets have refilled.
// The model must never trip, and every part arrives once.
func BenchmarkBotDeliveryPace(b *testing.B) {
	const packs, users = 100, 30
	w := newBotWorld(b, botSeedOptions{packs: packs, users: users}, benchFlood)
	w.ingest(b)
	var ids []int64
	for i := 1; i <= packs; i++ {
		ids = append(ids, w.packageID(b, fmt.Sprintf("Pack %02d.pdf", i)))
	}
	bot := w.startBot(b, "bot-pace")
	w.waitAnswering(b, bot)
	chats := w.benchUsers(b, users)
	people := make([]*hoard.User, users)
	for i, c := range chats {
		u, err := w.db.FindUserByEmail(context.Background(), c.name+"@bench.example")
		if err != nil {
			b.Fatal(err)
		}
		people[i] = u
	}
	// best is the least time the model allows for n messages to one chat
	// among chats messages in all.
	best := func(perChat, total int) time.Duration {
		chat := float64(perChat-benchFlood.PerChatBurst) / benchFlood.PerChat
		all := float64(total-int(benchFlood.Global)) / benchFlood.Global
		return time.Duration(max(chat, all, 0) * float64(time.Second))
	}
	// refill is how long the model's buckets take to fill up from empty:
	// best assumes full buckets, and a run ends with them drained.
	refill := time.Duration(max(float64(benchFlood.PerChatBurst)/benchFlood.PerChat,
		float64(max(1, int(benchFlood.Global)))/benchFlood.Global) * float64(time.Second))
	run := func(b *testing.B, name string, targets []int, parts int) {
		b.Run(name, func(b *testing.B) {
			var paces []float64
			var firstAfter []time.Duration
			for range b.N {
				// The previous run (or the users' sign-up chatter) left
				// the buckets drained: until they are full again the
				// model itself allows less than best (30 users started
				// 0.2 s after a run: 2.75 s at best, not 2 s).
				b.StopTimer()
				time.Sleep(refill)
				b.StartTimer()
				before := make([]int, len(targets))
				for i, t := range targets {
					before[i] = w.env.Emu.BotForwards(chats[t].id)
				}
				trips := w.env.Emu.BotFloodTrips()
				queuedAt := time.Now()
				for _, t := range targets {
					w.queueSends(b, people[t], "", ids[:parts]...)
				}
				pollClosely(b, "the deliveries", 10*time.Minute, func() bool {
					for i, t := range targets {
						if w.env.Emu.BotForwards(chats[t].id)-before[i] < parts {
							return false
						}
					}
					return true
				})
				// The model's clock: the pace is measured from the first
				// message it saw to the last, and the time from queueing
				// (one transaction a user) to that first message is
				// reported on its own.
				var first, last time.Time
				for i, t := range targets {
					at := w.env.Emu.BotForwardTimes(chats[t].id, before[i])
					if first.IsZero() || at[0].Before(first) {
						first = at[0]
					}
					if at[parts-1].After(last) {
						last = at[parts-1]
					}
				}
				took := last.Sub(first)
				firstAfter = append(firstAfter, first.Sub(queuedAt))
				paces = append(paces, float64(best(parts, parts*len(targets)))/float64(took))
				if n := w.env.Emu.BotFloodTrips() - trips; n != 0 {
					b.Errorf("the deliveries tripped the flood model %d times", n)
				}
				b.ReportMetric(took.Seconds(), "s")
				// The requests end SENT before the next run queues the same packages.
				waitUntil(b, "the requests to end", time.Minute, func() bool {
					return w.unfinishedJobs(b, hoard.BotSendArgs{}.Kind()) == 0
				})
				for i, t := range targets {
					if n := w.env.Emu.BotForwards(chats[t].id) - before[i]; n != parts {
						b.Errorf("%s got %d messages for %d parts", chats[t].name, n, parts)
					}
				}
			}
			slices.Sort(paces)
			b.ReportMetric(paces[0], "worst-pace")
			slices.Sort(firstAfter)
			b.ReportMetric(ms(firstAfter[len(firstAfter)-1]), "max-first-ms")
			b.ReportMetric(float64(w.env.Emu.BotFloodTrips()), "flood-trips")
		})
	}
	all := make([]int, users)
	for i := range all {
		all[i] = i
	}
	run(b, "one_chat_100_parts", []int{0}, packs)
	run(b, "30_users_10_parts", all, 10)
}
