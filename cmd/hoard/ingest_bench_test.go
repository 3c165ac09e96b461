package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hoard/hoard/config"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/messengertest"
	"github.com/hoard/hoard/messenger/telegram"
	"github.com/hoard/hoard/store/storetest"
)

// The ingestion benchmarks run the real worker as its own process
// (`hoard demo --once --no-rate-limit`) against an emulator outside it
// (TELEGRAM_EMULATOR): in the benchmark's process, or for the timing
// comparison in a `hoard emulator` process. The worker's peak RSS and the
// bytes it reads back from its spool are the worker's alone: the
// emulator's connections, crypto and stored uploads are not in them.

// benchSize returns the size of a benchmark's generated file: def, or the
// value of the environment variable name (for quick runs).
func benchSize(b *testing.B, name string, def int64) int64 {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			b.Fatalf("%s=%q: want a positive byte count", name, v)
		}
		return n
	}
	return def
}

// writeSeed writes seed as JSON into dir and returns its path.
func writeSeed(b testing.TB, dir string, seed map[string]any) string {
	b.Helper()
	data, err := json.Marshal(seed)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "seed.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// bigFileSeed is a world with one channel (@bigfiles, protected or not)
// holding one generated file of size bytes.
func bigFileSeed(b testing.TB, dir, name string, size int64, protected bool) string {
	return writeSeed(b, dir, map[string]any{
		"account":     map[string]any{"phone": "+15550000001", "premium": false},
		"destination": map[string]any{"title": "Hoard Archive", "username": "hoardarchive"},
		"channels": []any{map[string]any{"title": "Big Files", "username": "bigfiles", "joined": true, "protected": protected,
			"posts": []any{map[string]any{"generate": map[string]any{"name": name, "size": size, "seed": 7},
				"date": "2024-01-01T00:00:00Z"}}}},
	})
}

// workerRun is what one `hoard demo --once` process did.
type workerRun struct {
	sum onceSummary
	// peakRSS is the process's maximum resident set (getrusage of the
	// child, ru_maxrss).
	peakRSS int64
	// peakSpool is the most disk the spool held at once (allocated blocks,
	// sampled every 20 ms).
	peakSpool int64
	// spoolFiles are the files seen in the spool, relative to it.
	spoolFiles map[string]bool
}

// runWorker runs one cycle in its own process against the emulator whose
// info file is at info, sampling the spool under dataDir while it runs.
func runWorker(b testing.TB, info, dbURL, dataDir, seed string, extra map[string]string) workerRun {
	b.Helper()
	return runWorkerPaced(b, info, dbURL, dataDir, seed, extra, "--no-rate-limit")
}

// runWorkerPaced is runWorker with the demo's pacing flag (--no-rate-limit,
// or --rate N).
func runWorkerPaced(b testing.TB, info, dbURL, dataDir, seed string, extra map[string]string, pace ...string) workerRun {
	b.Helper()
	vars := map[string]string{"DATABASE_URL": dbURL, "DATA_DIR": dataDir, "LOG_LEVEL": "warn", "TELEGRAM_EMULATOR": info}
	for k, v := range extra {
		vars[k] = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	cmd, stdout, stderr := hoardCmd(ctx, vars, append(append([]string{"demo", "--once"}, pace...), "--seed", seed)...)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	run := workerRun{spoolFiles: map[string]bool{}}
	spool := filepath.Join(dataDir, "spool")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			var used int64
			_ = filepath.WalkDir(spool, func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return nil
				}
				info, err := d.Info()
				if err != nil {
					return nil
				}
				if st, ok := info.Sys().(*syscall.Stat_t); ok {
					used += st.Blocks * 512
				}
				rel, _ := filepath.Rel(spool, path)
				run.spoolFiles[rel] = true
				return nil
			})
			run.peakSpool = max(run.peakSpool, used)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	err := cmd.Wait()
	close(stop)
	wg.Wait()
	if err != nil {
		b.Fatalf("demo --once: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, tail(stderr.String(), 6000))
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		run.peakRSS = ru.Maxrss << 10 // KiB on Linux
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &run.sum); err != nil {
		b.Fatalf("summary: %v\n%s", err, stdout)
	}
	if run.sum.RunStatus != "COMPLETED" {
		b.Fatalf("run %+v\nstderr:\n%s", run.sum, tail(stderr.String(), 6000))
	}
	return run
}

// envInfo is the info file of an emulator started by messengertest.
func envInfo(env *messengertest.Env) string { return filepath.Join(env.Dir, "emulator.json") }

// emulatorProcess runs `hoard emulator` on seed as a process of its own and
// returns its info file and a function that stops it and returns its call
// counters per method.
func emulatorProcess(tb testing.TB, seed, dir string) (string, func() map[string]int) {
	tb.Helper()
	info := filepath.Join(dir, "emulator-info.json")
	cmd, stdout, stderr := hoardCmd(context.Background(), map[string]string{"LOG_LEVEL": "warn"},
		"emulator", "--seed", seed, "--state", filepath.Join(dir, "emulator-state"), "--info", info)
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	var once sync.Once
	counts := map[string]int{}
	stop := func() map[string]int {
		once.Do(func() {
			_ = cmd.Process.Signal(os.Interrupt)
			_ = cmd.Wait()
			counts = summarySection(stdout.String(), "calls per method:")
		})
		return counts
	}
	tb.Cleanup(func() { stop() })
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(info); err == nil {
			return info, stop
		}
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			tb.Fatalf("hoard emulator wrote no info file\n%s", stderr)
		}
	}
}

// summarySection reads one section of what `hoard emulator` prints on
// exit: the "  name count" lines under header.
func summarySection(out, header string) map[string]int {
	counts := map[string]int{}
	i := strings.Index(out, header)
	if i < 0 {
		return counts
	}
	for _, line := range strings.Split(out[i+len(header):], "\n")[1:] {
		f := strings.Fields(line)
		if !strings.HasPrefix(line, "  ") || len(f) != 2 {
			break
		}
		counts[f[0]], _ = strconv.Atoi(f[1])
	}
	return counts
}

// checkSpoolFiles fails when the spool held anything but the downloaded
// files (part-000 …, one per source message): a split writes no part
// files.
func checkSpoolFiles(b testing.TB, files map[string]bool, sourceParts int) {
	b.Helper()
	for f := range files {
		base := filepath.Base(f)
		n, err := strconv.Atoi(strings.TrimPrefix(base, "part-"))
		if !strings.HasPrefix(base, "part-") || err != nil || n >= sourceParts {
			b.Errorf("spool held %q: only the %d downloaded file(s) belong there", f, sourceParts)
		}
	}
}

// ingestSeconds is how long the single package of a run took from the
// cycle's start to its indexing transaction.
func ingestSeconds(b testing.TB, dbURL string) float64 {
	b.Helper()
	db, done := openStore(b, dbURL)
	defer done()
	var started, indexed time.Time
	for _, r := range storetest.Runs(b, db) {
		if started.IsZero() || r.StartedAt.Before(started) {
			started = r.StartedAt
		}
	}
	for _, p := range storetest.Packages(b, db) {
		if p.CreatedAt.After(indexed) {
			indexed = p.CreatedAt
		}
	}
	if started.IsZero() || indexed.IsZero() {
		b.Fatalf("no run (started %s) or no package (indexed %s)", started, indexed)
	}
	return indexed.Sub(started).Seconds()
}

// BenchmarkIngestSplit ingests a generated 3 GiB file (HOARD_BENCH_SPLIT_BYTES
// to change) that must be split at the default SPLIT_THRESHOLD_BYTES, so
// every part is uploaded from the spool. It reports the worker's peak RSS,
// the spool's peak disk use over the file size and the bytes read back
// from the spool per ingested byte (upload + verification: 2 expected).
func BenchmarkIngestSplit(b *testing.B) {
	size := benchSize(b, "HOARD_BENCH_SPLIT_BYTES", 3<<30)
	var rss, spool, readback float64
	for range b.N {
		dir := b.TempDir()
		env := messengertest.Start(b, bigFileSeed(b, dir, "Huge Pack.zip", size, false))
		var extra map[string]string
		if size <= config.DefaultSplitThreshold { // a quick run: lower the threshold so the file is split still
			extra = map[string]string{"SPLIT_THRESHOLD_BYTES": fmt.Sprint(max(size*2/3, config.MinSplitThreshold))}
		}
		run := runWorker(b, envInfo(env), storetest.URL(b), dataDir(b), filepath.Join(dir, "seed.json"), extra)
		if run.sum.Ingested != 1 || run.sum.Packages != 1 {
			b.Fatalf("summary %+v: want one package", run.sum)
		}
		if got := env.Emu.Calls("messages.sendMedia"); got < 2 {
			b.Fatalf("%d sendMedia calls: the file was not split", got)
		}
		checkSpoolFiles(b, run.spoolFiles, 1)
		rss = max(rss, float64(run.peakRSS)/(1<<20))
		spool = max(spool, float64(run.peakSpool)/float64(size))
		readback = max(readback, float64(run.sum.SpoolReadBytes)/float64(size))
		b.Logf("%d bytes, %d parts posted: peak RSS %.1f MiB, spool peak %d bytes, read back %d bytes",
			size, env.Emu.Calls("messages.sendMedia"), float64(run.peakRSS)/(1<<20), run.peakSpool, run.sum.SpoolReadBytes)
	}
	b.ReportMetric(rss, "peak_rss_MiB")
	b.ReportMetric(spool, "spool_ratio")
	b.ReportMetric(readback, "readback_ratio")
}

// BenchmarkIngestResend ingests a generated 1 GiB file (HOARD_BENCH_RESEND_BYTES
// to change) from an unprotected channel, which is re-sent rather than
// uploaded, and compares the time from the cycle's start to the package's
// indexing with a plain download of the same file through the same adapter
// and emulator (to a file, 4 threads like the worker; the mean of one
// before and one after the cycle, made by the benchmark's process while
// the emulator runs in a third). It reports that ratio, the worker's peak
// RSS, and the bytes read back from the spool per ingested byte
// (verification only: 1 expected).
func BenchmarkIngestResend(b *testing.B) {
	size := benchSize(b, "HOARD_BENCH_RESEND_BYTES", 1<<30)
	var ratio, rss, readback float64
	for range b.N {
		// The emulator runs in a process of its own here, so that the
		// worker's download and the plain one both cross a process
		// boundary.
		dir := b.TempDir()
		info, stopEmulator := emulatorProcess(b, bigFileSeed(b, dir, "Big Pack.zip", size, false), dir)
		ti, err := telegram.LoadEmulatorInfo(info)
		if err != nil {
			b.Fatal(err)
		}
		env := &messengertest.Env{Info: ti, Dir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		acc := env.Account(b, env.Config("bench"))
		ctx := context.Background()
		ch, err := acc.ResolveChannel(ctx, messenger.ChannelRef{Username: "bigfiles"})
		if err != nil {
			b.Fatal(err)
		}
		posts, err := acc.History(ctx, ch, messenger.HistoryQuery{})
		if err != nil || len(posts) != 1 || posts[0].Document == nil {
			b.Fatal(posts, err)
		}
		download := func() float64 {
			b.Helper()
			f, err := os.Create(filepath.Join(dir, "plain.bin"))
			if err != nil {
				b.Fatal(err)
			}
			defer os.Remove(f.Name())
			start := time.Now()
			err = acc.Download(ctx, messenger.DownloadRequest{Channel: ch, MessageID: posts[0].ID, Document: *posts[0].Document}, f)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				b.Fatal(err)
			}
			return time.Since(start).Seconds()
		}
		before := download()
		url := storetest.URL(b)
		run := runWorker(b, info, url, dataDir(b), filepath.Join(dir, "seed.json"), nil)
		after := download()
		acc.Close()
		if calls := stopEmulator(); run.sum.Ingested != 1 || calls["upload.saveBigFilePart"] > 0 {
			b.Fatalf("summary %+v, calls %v: want one package, re-sent", run.sum, calls)
		}
		checkSpoolFiles(b, run.spoolFiles, 1)
		ingest := ingestSeconds(b, url)
		plain := (before + after) / 2
		ratio = max(ratio, ingest/plain)
		rss = max(rss, float64(run.peakRSS)/(1<<20))
		readback = max(readback, float64(run.sum.SpoolReadBytes)/float64(size))
		b.Logf("%d bytes: ingest %.2f s, plain download %.2f s / %.2f s, peak RSS %.1f MiB, spool peak %d bytes, read back %d bytes",
			size, ingest, before, after, float64(run.peakRSS)/(1<<20), run.peakSpool, run.sum.SpoolReadBytes)
	}
	b.ReportMetric(ratio, "ingest_download_ratio")
	b.ReportMetric(rss, "peak_rss_MiB")
	b.ReportMetric(readback, "readback_ratio")
}

// BenchmarkIngestForeignDC ingests a generated 1 GiB file
// (HOARD_BENCH_FOREIGN_BYTES to change) that lives on DC 4, from an
// emulator process with its default round trips (20 ms to the account's
// DC, 60 ms to the others), with the account paced as on the platform (10
// requests a second after a burst of 5). It reports the ingest's
// efficiency: the least time the pace and the round trip allow for the
// requests the cycle made (the larger of (requests − burst) / rate and the
// file's chunks × round trip / the download's 4 threads) over the time from
// the cycle's start to the package's indexing. Goal: ≥ 0.8.
func BenchmarkIngestForeignDC(b *testing.B) {
	const (
		rate    = 10
		burst   = 5
		threads = 4
		rtt     = 60 * time.Millisecond
	)
	size := benchSize(b, "HOARD_BENCH_FOREIGN_BYTES", 1<<30)
	var efficiency float64
	for range b.N {
		dir := b.TempDir()
		seed := writeSeed(b, dir, map[string]any{
			"account":     map[string]any{"phone": "+15550000001", "premium": false},
			"destination": map[string]any{"title": "Hoard Archive", "username": "hoardarchive"},
			"channels": []any{map[string]any{"title": "Far Files", "username": "farfiles", "joined": true,
				"posts": []any{map[string]any{"generate": map[string]any{"name": "Far Pack.zip", "size": size, "seed": 9},
					"date": "2024-01-01T00:00:00Z", "dc": 4}}}},
		})
		info, stopEmulator := emulatorProcess(b, seed, dir)
		url := storetest.URL(b)
		run := runWorkerPaced(b, info, url, dataDir(b), seed, nil, "--rate", strconv.Itoa(rate))
		calls := stopEmulator()
		if run.sum.Ingested != 1 {
			b.Fatalf("summary %+v: want one package", run.sum)
		}
		chunks := float64((size + 1<<20 - 1) >> 20)
		floor := max((float64(run.sum.PlatformRequests)-burst)/rate, chunks*rtt.Seconds()/threads)
		took := ingestSeconds(b, url)
		efficiency = max(efficiency, floor/took)
		b.Logf("%d bytes from DC 4: ingest %.1f s, floor %.1f s (%d requests, %d upload.getFile, %d exports), efficiency %.3f",
			size, took, floor, run.sum.PlatformRequests, calls["upload.getFile"], calls["auth.exportAuthorization"], floor/took)
	}
	b.ReportMetric(efficiency, "efficiency")
}

// BenchmarkIdleForumCycle runs two cycles over a forum of 1,000 topics
// (HOARD_BENCH_TOPICS to change) that each hold one old archive, and
// reports the platform requests of the second cycle, when every topic is
// idle: the account's requests while the cycle ran, as its request limiter
// counted them (the emulator's count for the whole second process, sign-in
// and channel set-up included, is logged beside it).
func BenchmarkIdleForumCycle(b *testing.B) {
	n := int(benchSize(b, "HOARD_BENCH_TOPICS", 1000))
	var requests float64
	for range b.N {
		dir := b.TempDir()
		topics := make([]any, n)
		for i := range topics {
			topics[i] = map[string]any{"title": fmt.Sprintf("Creator %04d", i+1), "posts": []any{map[string]any{
				"generate": map[string]any{"name": fmt.Sprintf("Pack %04d.zip", i+1), "size": 2048, "seed": i + 1},
				"date":     "2024-01-01T00:00:00Z"}}}
		}
		seed := writeSeed(b, dir, map[string]any{
			"account":     map[string]any{"phone": "+15550000001", "premium": false},
			"destination": map[string]any{"title": "Hoard Archive", "username": "hoardarchive"},
			"channels": []any{map[string]any{"title": "Idle Forum", "username": "idleforum", "joined": true, "forum": true,
				"topics": topics}},
			// The first cycle reads 1,000 topics (a history call each):
			// under the history flood model that alone takes 17 minutes.
			// What is measured is the second, idle cycle's requests.
			"flood": false,
		})
		env := messengertest.Start(b, seed)
		url, data := storetest.URL(b), dataDir(b)
		first := runWorker(b, envInfo(env), url, data, seed, nil)
		if first.sum.Ingested != n {
			b.Fatalf("first cycle %+v: want %d packages", first.sum, n)
		}
		env.Emu.ResetCalls()
		second := runWorker(b, envInfo(env), url, data, seed, nil)
		if second.sum.Ingested != 0 {
			b.Fatalf("second cycle %+v: want nothing new", second.sum)
		}
		counts := env.Emu.CallCounts()
		total := 0
		for _, c := range counts {
			total += c
		}
		requests = max(requests, float64(second.sum.PlatformRequests))
		b.Logf("%d topics: first cycle %d requests; second cycle %d requests (the whole second process: %d, %v)",
			n, first.sum.PlatformRequests, second.sum.PlatformRequests, total, counts)
	}
	b.ReportMetric(requests, "requests_per_cycle")
}

// TestDemoOnceAgainstSeparateEmulator runs `hoard demo --once` against an
// emulator of another process (TELEGRAM_EMULATOR), as the benchmarks do,
// and checks what its summary reports: the re-sent file read back once (the
// verification), the cycle's requests, no part files in the spool; a
// second run adds nothing and costs fewer requests.
func TestDemoOnceAgainstSeparateEmulator(t *testing.T) {
	t.Parallel()
	const size = 3<<20 + 123
	dir := t.TempDir()
	seed := bigFileSeed(t, dir, "Pack.zip", size, false)
	env := messengertest.Start(t, seed)
	url, data := storetest.URL(t), dataDir(t)
	first := runWorker(t, envInfo(env), url, data, seed, nil)
	if first.sum.Ingested != 1 || env.Emu.Calls("upload.saveFilePart")+env.Emu.Calls("upload.saveBigFilePart") != 0 {
		t.Fatalf("first run %+v: want one package, re-sent", first.sum)
	}
	// The type was decided from the bytes as they arrived, and these
	// random bytes are no archive, so nothing is listed: the verification's
	// re-hash is the only read.
	if first.sum.SpoolReadBytes != size {
		t.Errorf("read back %d bytes of a %d-byte file: want the verification's one pass only", first.sum.SpoolReadBytes, size)
	}
	if first.sum.PlatformRequests == 0 || first.peakRSS == 0 || first.peakSpool > 2*size {
		t.Errorf("first run: %d requests, peak RSS %d, spool peak %d", first.sum.PlatformRequests, first.peakRSS, first.peakSpool)
	}
	checkSpoolFiles(t, first.spoolFiles, 1)
	second := runWorker(t, envInfo(env), url, data, seed, nil)
	if second.sum.Ingested != 0 || second.sum.Packages != 1 || second.sum.SpoolReadBytes != 0 ||
		second.sum.PlatformRequests >= first.sum.PlatformRequests {
		t.Errorf("second run %+v after %+v: want nothing new, nothing read, fewer requests", second.sum, first.sum)
	}
}
