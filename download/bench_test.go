package download_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/download"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/messengertest"
	"github.com/hoard/hoard/store/storetest"
)

// benchSize is the file the download benchmarks read: 1 GiB, or
// HOARD_DOWNLOAD_BENCH_MIB.
func benchSize(b *testing.B) int64 {
	if v := os.Getenv("HOARD_DOWNLOAD_BENCH_MIB"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("HOARD_DOWNLOAD_BENCH_MIB=%q", v)
		}
		return int64(n) << 20
	}
	return 1 << 30
}

// benchWorld is the emulator with a generated file of benchSize in a
// source channel, re-sent to the destination and indexed as a package.
type benchWorld struct {
	ctx    context.Context
	dest   *messengertest.Destination
	src    messenger.Channel
	srcMsg messenger.Message
	pkg    *hoard.Package
	svc    *download.Service
	bot    *countingObserver
}

func newBenchWorld(b *testing.B, size int64, cache *download.Cache, botLimiter *messenger.Limiter) *benchWorld {
	ctx := context.Background()
	dir := b.TempDir()
	seed := messengertest.DefaultSeedWith(b, dir, func(seed map[string]any) {
		ch := seed["channels"].([]any)[0].(map[string]any)
		post := ch["posts"].([]any)[3].(map[string]any)
		post["generate"].(map[string]any)["size"] = size
	})
	env := messengertest.StartIn(b, seed, dir)
	requests := &countingObserver{}
	cfg := env.Config("bot")
	cfg.Observer = requests
	if botLimiter != nil {
		cfg.Limiter = botLimiter
	}
	dest := env.DestinationWithBot(b, cfg)
	src, err := dest.Account.ResolveChannel(ctx, messenger.ChannelRef{Username: "mammothfactory"})
	if err != nil {
		b.Fatal(err)
	}
	msgs, err := dest.Account.History(ctx, src, messenger.HistoryQuery{})
	if err != nil {
		b.Fatal(err)
	}
	gen := msgs[3]
	id, err := dest.Account.Resend(ctx, dest.Channel, src, gen, "")
	if err != nil {
		b.Fatal(err)
	}
	db := storetest.NewDB(b)
	row := &hoard.Channel{PlatformID: dest.Channel.ID, Title: "dest", Kind: hoard.ChannelDestination, IsActive: true}
	if err := db.UpsertChannel(ctx, row); err != nil {
		b.Fatal(err)
	}
	pkg := &hoard.Package{FileName: gen.Document.FileName, FileSize: gen.Document.Size, ArchiveType: hoard.ArchiveZIP,
		PartCount: 1, DestChannelID: row.ID, DestMessageID: int64(id), DestMessageIDs: []int64{int64(id)}}
	if err := db.CreatePackage(ctx, pkg); err != nil {
		b.Fatal(err)
	}
	svc := &download.Service{DB: db, Cache: cache, Reader: func(context.Context) (messenger.FileReader, error) { return dest.Bot, nil }}
	return &benchWorld{ctx: ctx, dest: dest, src: src, srcMsg: gen, pkg: pkg, svc: svc, bot: requests}
}

// discardAt is an io.WriterAt that keeps nothing.
type discardAt struct{}

func (discardAt) WriteAt(p []byte, _ int64) (int, error) { return len(p), nil }

// rssSampler records the process's peak resident set while it runs.
type rssSampler struct {
	stop chan struct{}
	done chan struct{}
	peak atomic.Int64
}

func rss() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n << 10
		}
	}
	return 0
}

func sampleRSS() *rssSampler {
	s := &rssSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if r := rss(); r > s.peak.Load() {
				s.peak.Store(r)
			}
			select {
			case <-t.C:
			case <-s.stop:
				return
			}
		}
	}()
	return s
}

func (s *rssSampler) end() int64 { close(s.stop); <-s.done; return s.peak.Load() }

// BenchmarkDownloadRoute reads the same 1 GiB file through the download
// service (the bot, chunk by chunk, four ahead) and through the adapter's
// plain download (the account, four chunks in flight): ratio is the
// route's speed over the plain one's (goal ≥ 0.9), and rss_above_idle_MiB
// the peak resident set above the process's idle one while the route
// reads (goal ≤ 32; plain_rss_above_idle_MiB is the same for the plain
// download: the emulator serving in the same process takes its share).
func BenchmarkDownloadRoute(b *testing.B) {
	size := benchSize(b)
	w := newBenchWorld(b, size, nil, nil)
	b.SetBytes(size)
	var plain, route time.Duration
	var above, plainAbove int64
	for b.Loop() {
		idle := rss()
		sampler := sampleRSS()
		start := time.Now()
		if err := w.dest.Account.Download(w.ctx, messenger.DownloadRequest{Channel: w.src, MessageID: w.srcMsg.ID,
			Document: *w.srcMsg.Document, Threads: 4}, discardAt{}); err != nil {
			b.Fatal(err)
		}
		plain += time.Since(start)
		plainAbove = max(plainAbove, sampler.end()-idle)

		runtime.GC()
		idle = rss()
		sampler = sampleRSS()
		start = time.Now()
		c, err := w.svc.Open(w.ctx, w.pkg, 0)
		if err != nil {
			b.Fatal(err)
		}
		r, err := c.Open(w.ctx, 0)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, r)
		r.Close()
		if err != nil || n != size {
			b.Fatalf("route read %d of %d bytes: %v", n, size, err)
		}
		route += time.Since(start)
		above = max(above, sampler.end()-idle)
	}
	b.ReportMetric(plain.Seconds()/route.Seconds(), "ratio")
	b.ReportMetric(float64(size)/(1<<20)/route.Seconds()*float64(b.N), "route_MiB/s")
	b.ReportMetric(float64(size)/(1<<20)/plain.Seconds()*float64(b.N), "plain_MiB/s")
	b.ReportMetric(float64(above)/(1<<20), "rss_above_idle_MiB")
	b.ReportMetric(float64(plainAbove)/(1<<20), "plain_rss_above_idle_MiB")
}

// BenchmarkDownloadFromCache reads the file a second time through the
// on-disk cache: platform_requests is what the second read asked the
// platform (goal 0).
func BenchmarkDownloadFromCache(b *testing.B) {
	size := min(benchSize(b), 256<<20)
	cache, err := download.OpenCache(filepath.Join(b.TempDir(), "cache"), size+(16<<20))
	if err != nil {
		b.Fatal(err)
	}
	w := newBenchWorld(b, size, cache, nil)
	read := func() {
		c, err := w.svc.Open(w.ctx, w.pkg, 0)
		if err != nil {
			b.Fatal(err)
		}
		r, err := c.Open(w.ctx, 0)
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		if n, err := io.Copy(io.Discard, r); err != nil || n != size {
			b.Fatalf("read %d of %d bytes: %v", n, size, err)
		}
	}
	read() // fills the cache
	b.SetBytes(size)
	before := w.bot.requests.Load()
	for b.Loop() {
		read()
	}
	b.ReportMetric(float64(w.bot.requests.Load()-before)/float64(b.N), "platform_requests")
}

// BenchmarkConcurrentDownloadsBudget runs 10 downloads at once through a
// bot whose requests are limited to 20 per second while the account
// downloads (as an ingestion does) on its own budget: within_budget is the
// downloads' requests over what the budget allowed in the time (≤ 1), and
// ingest_slowdown the account's download time beside them over alone.
func BenchmarkConcurrentDownloadsBudget(b *testing.B) {
	const rate, burst, downloads = 20, 20, 10
	size := int64(32 << 20)
	limiter := messenger.NewLimiter(rate, burst)
	w := newBenchWorld(b, size, nil, limiter)
	ingest := func() time.Duration {
		start := time.Now()
		if err := w.dest.Account.Download(w.ctx, messenger.DownloadRequest{Channel: w.src, MessageID: w.srcMsg.ID,
			Document: *w.srcMsg.Document, Threads: 4}, discardAt{}); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	alone := ingest()
	var within, slowdown float64
	for b.Loop() {
		before := w.bot.requests.Load()
		start := time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, downloads)
		for range downloads {
			wg.Go(func() {
				c, err := w.svc.Open(w.ctx, w.pkg, 0)
				if err == nil {
					var r io.ReadCloser
					if r, err = c.Open(w.ctx, 0); err == nil {
						_, err = io.Copy(io.Discard, r)
						r.Close()
					}
				}
				errs <- err
			})
		}
		beside := ingest()
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		took := time.Since(start)
		within = float64(w.bot.requests.Load()-before) / (rate*took.Seconds() + burst)
		slowdown = beside.Seconds() / alone.Seconds()
	}
	b.ReportMetric(within, "within_budget")
	b.ReportMetric(slowdown, "ingest_slowdown")
	fmt.Fprintf(os.Stderr, "10 downloads of %d MiB at %d req/s: within_budget %.2f, ingestion %.2f× its time alone\n", size>>20, rate, within, slowdown)
}
