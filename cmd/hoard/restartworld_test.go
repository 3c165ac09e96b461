package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hoard/hoard/demo"
	"github.com/hoard/hoard/pgserver"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
	"github.com/riverqueue/river/rivertype"
)

// writeShelfWorld writes a seed of three channels holding n small archives
// between them, posted ten minutes apart: a plain one (documents re-sent),
// a protected one (uploaded, then verified) and a forum of two topics. No
// time-window groups, no duplicates, nothing that fails: a catalog that
// only faults of the run itself can change.
func writeShelfWorld(t *testing.T, dir string, n int) string {
	t.Helper()
	files := filepath.Join(dir, "files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		t.Fatal(err)
	}
	posts := make([][]map[string]any, 3)
	day := time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC)
	for i := range n {
		name := fmt.Sprintf("Shelf Model %02d.zip", i)
		data, err := demo.Zip(map[string][]byte{
			fmt.Sprintf("Shelf Model %02d/readme.txt", i): fmt.Appendf(nil, "model %d\n", i),
			fmt.Sprintf("Shelf Model %02d/notes.txt", i):  fmt.Appendf(nil, "printed at %d mm\n", i),
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(files, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		posts[i%3] = append(posts[i%3], map[string]any{"file": "files/" + name,
			"date": day.Add(time.Duration(i) * 10 * time.Minute).Format(time.RFC3339)})
	}
	half := len(posts[2]) / 2
	channels := []map[string]any{
		{"title": "Shelf A", "username": "shelfa", "joined": true, "category": "STL", "posts": posts[0]},
		{"title": "Shelf B", "username": "shelfb", "joined": true, "protected": true, "category": "STL", "posts": posts[1]},
		{"title": "Shelf C", "username": "shelfc", "joined": true, "forum": true, "category": "STL",
			"topics": []map[string]any{{"title": "Tanks", "posts": posts[2][:half]}, {"title": "Walkers", "posts": posts[2][half:]}}},
	}
	return writeSeed(t, dir, map[string]any{
		"account":     map[string]any{"phone": "+15550000001", "premium": false},
		"bot":         map[string]any{"username": "hoard_test_bot", "token": "111:test"},
		"destination": map[string]any{"title": "Hoard Archive", "username": "hoardarchive"},
		"channels":    channels,
	})
}

// ownCluster is a PostgreSQL cluster of the test's own, on a fixed TCP
// port so that DATABASE_URL stays valid across restarts.
type ownCluster struct {
	t    *testing.T
	opts pgserver.Options
	srv  *pgserver.Server
}

func startOwnCluster(t *testing.T) *ownCluster {
	t.Helper()
	var port int
	if _, err := fmt.Sscanf(freeAddr(t), "127.0.0.1:%d", &port); err != nil {
		t.Fatal(err)
	}
	c := &ownCluster{t: t, opts: pgserver.Options{DataDir: filepath.Join(dataDir(t), "pg"), Database: "hoard", Port: port,
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		ExtraConfig: map[string]string{"fsync": "off", "full_page_writes": "off", "synchronous_commit": "off"}}}
	c.start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = c.srv.Stop(ctx)
	})
	return c
}

func (c *ownCluster) start() {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := pgserver.Start(ctx, c.opts)
	if err != nil {
		c.t.Fatal(err)
	}
	c.srv = srv
}

// restart stops the server (a fast shutdown: every session is ended) and
// starts it again after pause; it returns how long the database was away.
func (c *ownCluster) restart(pause time.Duration) time.Duration {
	c.t.Helper()
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.srv.Stop(ctx); err != nil {
		c.t.Fatal(err)
	}
	time.Sleep(pause)
	c.start()
	return time.Since(began)
}

// restartAt restarts the server each time the catalog reaches the next
// count of packages in at (ascending), after a random pause of up to
// 300 ms, while the process watched by exited runs. It returns how many
// restarts it made before the process ended or ctx was done.
func (c *ownCluster) restartAt(ctx context.Context, at []int, rng *rand.Rand, exited <-chan error) int {
	c.t.Helper()
	var db *store.DB
	defer func() {
		if db != nil {
			db.Close()
		}
	}()
	for done := 0; done < len(at); {
		select {
		case err := <-exited:
			c.t.Logf("the process ended: %v", err)
			return done
		case <-ctx.Done():
			return done
		case <-time.After(10 * time.Millisecond):
		}
		if db == nil {
			var err error
			if db, err = openWhenUp(ctx, c.srv.URL()); err != nil {
				continue
			}
		}
		n, err := db.CountRows(ctx, "packages")
		if err != nil {
			continue // the schema may not exist yet; the pool reconnects after a restart
		}
		if n < int64(at[done]) {
			continue
		}
		db.Close()
		db = nil
		away := c.restart(time.Duration(rng.IntN(300)) * time.Millisecond)
		c.t.Logf("restart %d after %d packages: the database was away %v", done+1, n, away.Round(time.Millisecond))
		done++
	}
	return len(at)
}

// finalJobs lists "kind|state|last error" of the River jobs that were
// cancelled or discarded.
func finalJobs(t *testing.T, url string) []string {
	t.Helper()
	db, done := openStore(t, url)
	defer done()
	var out []string
	for _, j := range storetest.Jobs(t, db, storetest.JobMatch{}) {
		if j.State == rivertype.JobStateCancelled || j.State == rivertype.JobStateDiscarded {
			last := ""
			if len(j.Errors) > 0 {
				last = j.Errors[len(j.Errors)-1]
			}
			out = append(out, fmt.Sprintf("%s|%s|%s", j.Kind, j.State, last))
		}
	}
	return out
}

// retriedJobs counts, by kind, the River jobs that failed an attempt.
func retriedJobs(t *testing.T, url string) map[string]int {
	t.Helper()
	db, done := openStore(t, url)
	defer done()
	out := map[string]int{}
	for _, j := range storetest.Jobs(t, db, storetest.JobMatch{}) {
		if len(j.Errors) > 0 {
			out[j.Kind]++
		}
	}
	return out
}

// TestDemoOnceSurvivesDatabaseRestarts is the acceptance of transient
// faults: PostgreSQL restarted three times at random moments of a `hoard
// demo --once` over 30 packages (ten times over 200 with
// HOARD_LARGE_TESTS=1). The run completes, the catalog equals an
// undisturbed run's, nothing is posted twice, and no River job was
// cancelled or discarded.
func TestDemoOnceSurvivesDatabaseRestarts(t *testing.T) {
	t.Parallel()
	packages, restarts := 30, 3
	if os.Getenv("HOARD_LARGE_TESTS") == "1" {
		packages, restarts = 200, 10
	}
	seed := writeShelfWorld(t, t.TempDir(), packages)

	calmDir, calmURL := dataDir(t), storetest.URL(t)
	calm := runOnce(t, onceVars(calmURL, calmDir, 5), seed)
	if calm.RunStatus != "COMPLETED" || calm.Packages != int64(packages) {
		t.Fatalf("undisturbed run: %+v, want COMPLETED with %d packages", calm, packages)
	}
	want := readCatalog(t, calmURL)

	c := startOwnCluster(t)
	url := c.srv.URL()
	dir := dataDir(t)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 15))
	// Three moments, each after a random number of packages indexed.
	var at []int
	for len(at) < restarts {
		if n := 1 + rng.IntN(packages-10); !slices.Contains(at, n) {
			at = append(at, n)
		}
	}
	slices.Sort(at)
	t.Logf("restarts after %v packages", at)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd, stdout, stderr := hoardCmd(ctx, onceVars(url, dir, 5), "demo", "--once", "--seed", seed)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if done := c.restartAt(ctx, at, rng, exited); done < restarts {
		t.Fatalf("the run ended after %d of %d restarts\nstdout:\n%s\nstderr:\n%s", done, restarts, stdout, tail(stderr.String(), 4000))
	}
	if err := <-exited; err != nil {
		t.Fatalf("demo --once: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, tail(stderr.String(), 6000))
	}

	got := readCatalog(t, url)
	if diff := diffState(want, got); diff != "" {
		t.Errorf("the catalog differs from the undisturbed run's:\n%s", diff)
	}
	destTotal := 0
	for _, p := range got.Packages {
		destTotal += len(p.DestIDs)
	}
	if posted := destinationPosts(t, dir); posted != destTotal || len(got.Packages) != packages {
		t.Errorf("%d packages with %d destination ids, the destination holds %d posts", len(got.Packages), destTotal, posted)
	}
	if final := finalJobs(t, url); len(final) > 0 {
		t.Errorf("jobs cancelled or discarded: %q", final)
	}
	t.Logf("jobs that failed an attempt and were retried: %v", retriedJobs(t, url))
}
