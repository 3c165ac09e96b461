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
// command from every user; run with -benchtime 10x for 200 round trips.
func BenchmarkBotCommandRoundTrip(b *testing.B) {
	const users = 20
	catalog := storetest.CatalogDB(b, storetest.BenchPackages(), 0)
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

	var mu sync.Mutex
	var samples []time.Duration
	b.ResetTimer()
	for i := range b.N {
		var wg sync.WaitGroup
		start := time.Now()
		for u, c := range chats {
			wg.Add(1)
			go func() {
				defer wg.Done()
				word := storetest.CatalogWords[(i*users+u)%len(storetest.CatalogWords)]
				t0 := time.Now()
				if got := c.say("/search " + word); !strings.Contains(got.Text, word) && !strings.Contains(got.Text, "No packages") {
					b.Errorf("/search %s answered %q", word, got.Text)
				}
				d := time.Since(t0)
				mu.Lock()
				samples = append(samples, d)
				mu.Unlock()
			}()
		}
		wg.Wait()
		time.Sleep(time.Until(start.Add(1100 * time.Millisecond))) // one command a second per chat
	}
	b.StopTimer()
	slices.Sort(samples)
	b.ReportMetric(ms(pct(samples, 50)), "p50-ms")
	b.ReportMetric(ms(pct(samples, 99)), "p99-ms")
	b.ReportMetric(ms(samples[len(samples)-1]), "max-ms")
	b.ReportMetric(float64(w.env.Emu.BotFloodTrips()), "flood-trips")
	if trips := w.env.Emu.BotFloodTrips(); trips != 0 {
		b.Errorf("the bot tripped the flood model %d times", trips)
	}
}

// benchUsers signs n generated users in and links each to a hoard user.
func (w *botWorld) benchUsers(b testing.TB, n int) []*chatter {
	chats := make([]*chatter, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u := botUser{name: fmt.Sprintf("user%02d", i+1), phone: fmt.Sprintf("+1555100%04d", i+1)}
			chats[i] = w.chat(b, u)
		}()
	}
	wg.Wait()
	for _, c := range chats {
		w.link(b, c, c.name+"@bench.example")
	}
	return chats
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
// best divided by the time taken (1 = as fast as the model allows); the
// model must never trip.
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
	run := func(b *testing.B, name string, targets []int, parts int) {
		b.Run(name, func(b *testing.B) {
			var paces []float64
			for range b.N {
				before := make([]int, len(targets))
				for i, t := range targets {
					before[i] = w.env.Emu.BotForwards(chats[t].id)
				}
				trips := w.env.Emu.BotFloodTrips()
				start := time.Now()
				for _, t := range targets {
					w.queueSends(b, people[t], "", ids[:parts]...)
				}
				waitUntil(b, "the deliveries", 10*time.Minute, func() bool {
					for i, t := range targets {
						if w.env.Emu.BotForwards(chats[t].id)-before[i] < parts {
							return false
						}
					}
					return true
				})
				took := time.Since(start)
				paces = append(paces, float64(best(parts, parts*len(targets)))/float64(took))
				if n := w.env.Emu.BotFloodTrips() - trips; n != 0 {
					b.Errorf("the deliveries tripped the flood model %d times", n)
				}
				b.ReportMetric(took.Seconds(), "s")
				// The requests end SENT before the next run queues the same packages.
				waitUntil(b, "the requests to end", time.Minute, func() bool {
					return w.unfinishedJobs(b, hoard.BotSendArgs{}.Kind()) == 0
				})
			}
			slices.Sort(paces)
			b.ReportMetric(paces[0], "worst-pace")
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
