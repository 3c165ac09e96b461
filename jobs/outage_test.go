package jobs

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/emulator"
	"github.com/hoard/hoard/messenger/messengertest"
	"github.com/hoard/hoard/queue"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// outageWorld is a committed database whose signed-in account reads one
// channel of n small archives (@outageshelf) and writes to the
// destination, with the emulator it talks to.
type outageWorld struct {
	env   *messengertest.Env
	acc   messenger.Account
	db    *store.DB
	files []string
}

func newOutageWorld(t *testing.T, n int) *outageWorld {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	w := &outageWorld{}
	var posts []any
	for i := range n {
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		f, err := zw.Create(fmt.Sprintf("Model %02d/part.stl", i))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, "solid model%d\nendsolid model%d\n", i, i)
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("Outage Model %02d.zip", i)
		if err := os.MkdirAll(filepath.Join(dir, "files"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "files", name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		w.files = append(w.files, name)
		posts = append(posts, map[string]any{"file": "files/" + name, "date": time.Date(2024, 1, 1, 10, i, 0, 0, time.UTC).Format(time.RFC3339)})
	}
	seed := messengertest.DefaultSeedWith(t, dir, func(s map[string]any) {
		s["channels"] = []any{map[string]any{"title": "Outage Shelf", "username": "outageshelf", "joined": true, "posts": posts}}
	})
	w.env = messengertest.StartIn(t, seed, dir)
	acc := w.env.Account(t, w.env.Config("account"))
	w.acc = acc
	db, err := store.Open(ctx, storetest.URL(t), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	w.db = db
	account, err := db.CreateAccount(ctx, w.env.Info.Phone)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetAccountAuthState(ctx, account.ID, hoard.AuthAuthenticated, ""); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ref  string
		kind hoard.ChannelKind
		role hoard.MapRole
	}{{"@hoardarchive", hoard.ChannelDestination, hoard.MapWriter}, {"@outageshelf", hoard.ChannelSource, hoard.MapReader}} {
		peer := resolveChannel(t, acc, c.ref)
		ch := &hoard.Channel{PlatformID: peer.ID, Title: peer.Title, Username: peer.Username, Kind: c.kind, IsActive: true}
		if err := db.UpsertChannel(ctx, ch); err != nil {
			t.Fatal(err)
		}
		if _, err := db.UpsertChannelMap(ctx, account.ID, ch.ID, peer.AccessHash, c.role); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// startWorker starts a worker process's River client on the world with
// deps (its database, clients and spool filled in), scheduled cycles
// every deps.WorkerInterval, stopped when the test ends.
func (w *outageWorld) startWorker(ctx context.Context, t *testing.T, deps Deps) *queue.Client {
	t.Helper()
	deps.DB, deps.Logger, deps.Accounts, deps.SpoolDir = w.db, discardLogger(), oneAccount{w.acc}, t.TempDir()
	deps.SettleTime, deps.GroupTimeWindow = -1, -1
	workers := river.NewWorkers()
	if err := Register(workers, deps); err != nil {
		t.Fatal(err)
	}
	client, err := queue.NewClient(w.db.Pool(), queue.Options{Role: queue.RoleWorker, Workers: workers,
		Periodic: Periodic(deps.WorkerInterval), Logger: discardLogger(), ID: "outage-test",
		FetchCooldown: 20 * time.Millisecond, FetchPollInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop, done := context.WithTimeout(context.Background(), 30*time.Second)
		defer done()
		_ = client.Stop(stop)
	})
	return client
}

// ingestJobs is what the ingest_message jobs' rows say.
type ingestJobs struct {
	Jobs, MaxAttempt, MaxAttempts, Final int // Final: discarded or cancelled
}

func (w *outageWorld) ingestJobs(t *testing.T) ingestJobs {
	t.Helper()
	var j ingestJobs
	for _, job := range storetest.Jobs(t, w.db, storetest.JobMatch{Kind: hoard.IngestMessageArgs{}.Kind()}) {
		j.Jobs++
		j.MaxAttempt, j.MaxAttempts = max(j.MaxAttempt, job.Attempt), max(j.MaxAttempts, job.MaxAttempts)
		if job.State == rivertype.JobStateDiscarded || job.State == rivertype.JobStateCancelled {
			j.Final++
		}
	}
	return j
}

// TestOutageLongerThanACycleSpendsNoLastAttempt is the acceptance of SPEC
// rule 12 ("failed messages are retried on later cycles") on an
// accelerated clock, one minute = 100 ms: WORKER_INTERVAL_MINUTES=60 is a
// 6 s interval, the 30 s first retry 50 ms, and the platform fails every
// read of the sets' messages and files for 70 minutes (7 s). No set may use its last attempt before
// the outage ends, and every set is ingested after it. With attempts every
// 30 s doubling (what hoard did before) all five are spent within 7.5
// minutes and every set ends SKIPPED.
func TestOutageLongerThanACycleSpendsNoLastAttempt(t *testing.T) {
	const (
		minute      = 100 * time.Millisecond
		sets        = 6
		maxAttempts = 5
	)
	w := newOutageWorld(t, sets)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Every read of a set's messages and bytes fails (a 500 of the
	// platform's); scans still see the channel, so every set is queued.
	for _, m := range []string{"channels.getMessages", "upload.getFile"} {
		w.env.Emu.InjectFault(emulator.Fault{Method: m, Error: "INTERNAL"})
	}
	client := w.startWorker(ctx, t, Deps{WorkerInterval: 60 * minute, MaxSkipAttempts: maxAttempts, RetryBase: minute / 2})
	start := time.Now()
	if _, err := client.Insert(ctx, hoard.IngestCycleArgs{Trigger: hoard.TriggerManual}, nil); err != nil {
		t.Fatal(err)
	}

	// During the outage: no set's job is final or on its last attempt.
	var during ingestJobs
	for time.Since(start) < 70*minute {
		during = w.ingestJobs(t)
		if during.Final > 0 || (during.MaxAttempts > 0 && during.MaxAttempt >= during.MaxAttempts) {
			t.Fatalf("at minute %d of the 70-minute outage: %+v: a set spent its last attempt", int(time.Since(start)/minute), during)
		}
		time.Sleep(minute)
	}
	w.env.Emu.ClearFaults()
	if during.Jobs != sets || during.MaxAttempt < 2 {
		t.Fatalf("at the outage's end: %+v, want %d sets that failed at least once", during, sets)
	}
	skipped, err := w.db.ListSkippedPackages(ctx, "", 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range skipped {
		if s.Status != hoard.SkipRetrying {
			t.Errorf("at the outage's end, skipped record %s|%s|%d: want RETRYING", s.FileName, s.Status, s.AttemptCount)
		}
	}

	// After it: every set is ingested on a later cycle.
	var packages int
	for {
		packages = 0
		for _, p := range storetest.Packages(t, w.db) {
			if p.DestChannelID != 0 {
				packages++
			}
		}
		if packages == sets || ctx.Err() != nil {
			break
		}
		time.Sleep(minute)
	}
	after := w.ingestJobs(t)
	left := storetest.Count(t, w.db, "skipped_packages")
	got := struct{ Packages, Skipped, FinalJobs int }{packages, left, after.Final}
	want := struct{ Packages, Skipped, FinalJobs int }{sets, 0, 0}
	if got != want {
		t.Errorf("after the outage: %+v, want %+v (jobs %+v)", got, want, after)
	}
	t.Logf("outage of 70 min (%v); all %d sets ingested %v after it; highest attempt %d of %d",
		70*minute, sets, time.Since(start)-70*minute, after.MaxAttempt, maxAttempts)
}
