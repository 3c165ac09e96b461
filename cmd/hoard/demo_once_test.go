package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hoard/hoard/demo"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// gotPackage is one catalogued package as the test compares it.
type gotPackage struct {
	wantPackage
	Size        int64
	DestIDs     []int64
	Note        string
	FirstDestOK bool // dest_message_id is the first of dest_message_ids
	HashOK      bool // content_hash present
}

// catalogState is what the database holds after a run.
type catalogState struct {
	Packages      map[string]gotPackage
	Skipped       []string
	Notifications []string
	Runs          []string // status per run, oldest first
	Groups        []string // "source|name|member, member, …" per group (members by file name)
	Ungrouped     []string // file names of the packages in no group
}

func readCatalog(t *testing.T, url string) catalogState {
	t.Helper()
	db, done := openStore(t, url)
	defer done()
	st := catalogState{Packages: map[string]gotPackage{}}
	packages := storetest.Packages(t, db)
	members := map[int64][]string{} // group id → file names
	for _, pkg := range packages {
		p := gotPackage{Size: pkg.FileSize, DestIDs: pkg.DestMessageIDs, Note: pkg.InspectionNote, HashOK: pkg.ContentHash != ""}
		p.Type, p.Parts, p.Creator, p.Preview, p.PhotoPrev = string(pkg.ArchiveType), pkg.PartCount, pkg.Creator, pkg.HasPreview, pkg.PreviewMsgID != 0
		p.Files = pkg.FileCount
		if pkg.FileCount == 0 && p.Note != "" {
			p.Files = -1
		}
		if len(pkg.Tags) > 0 {
			p.FirstTag = pkg.Tags[0]
		}
		p.FirstDestOK = len(p.DestIDs) > 0 && p.DestIDs[0] == pkg.DestMessageID
		if _, dup := st.Packages[pkg.FileName]; dup {
			t.Errorf("two packages named %q", pkg.FileName)
		}
		st.Packages[pkg.FileName] = p
		if pkg.PackageGroupID == 0 {
			st.Ungrouped = append(st.Ungrouped, pkg.FileName)
		} else {
			members[pkg.PackageGroupID] = append(members[pkg.PackageGroupID], pkg.FileName)
		}
	}
	for _, s := range storetest.SkippedPackages(t, db) {
		st.Skipped = append(st.Skipped, fmt.Sprintf("%s|%s|%s|%d", s.FileName, s.Reason, s.Status, s.AttemptCount))
	}
	for _, n := range storetest.Notifications(t, db) {
		if !n.Dismissed {
			st.Notifications = append(st.Notifications, string(n.Type))
		}
	}
	for _, r := range storetest.Runs(t, db) {
		st.Runs = append(st.Runs, string(r.Status))
	}
	for _, g := range storetest.Groups(t, db) {
		if names := members[g.ID]; len(names) > 0 {
			slices.Sort(names)
			st.Groups = append(st.Groups, fmt.Sprintf("%s|%s|%s", g.GroupingSource, g.Name, strings.Join(names, ", ")))
		}
	}
	for _, list := range [][]string{st.Skipped, st.Notifications, st.Groups, st.Ungrouped} {
		slices.Sort(list)
	}
	return st
}

// destinationPosts counts the messages the emulator holds in channels after
// the seeded ones: everything hoard posted to the destination.
func destinationPosts(t *testing.T, dataDir string) int {
	t.Helper()
	return postsIn(t, filepath.Join(dataDir, "emulator", "state"))
}

// checkCatalog compares the catalog with what the world calls for.
func checkCatalog(t *testing.T, w ingestWorld, st catalogState, posted int) {
	t.Helper()
	want := map[string]wantPackage{}
	for name, p := range w.Packages {
		want[name] = p
	}
	ids := map[int64]string{}
	destTotal := 0
	for name, g := range st.Packages {
		p, ok := want[name]
		if !ok {
			t.Errorf("unexpected package %q: %+v", name, g)
			continue
		}
		if g.wantPackage != p {
			t.Errorf("%s:\n got  %+v\n want %+v (note %q)", name, g.wantPackage, p, g.Note)
		}
		if len(g.DestIDs) != g.Parts || !g.FirstDestOK || !g.HashOK {
			t.Errorf("%s: dest_message_ids %v for %d parts (first ok %v), content hash %v", name, g.DestIDs, g.Parts, g.FirstDestOK, g.HashOK)
		}
		for _, id := range g.DestIDs {
			if other, dup := ids[id]; dup {
				t.Errorf("destination message %d belongs to %q and %q", id, other, name)
			}
			ids[id] = name
		}
		destTotal += len(g.DestIDs)
	}
	for name := range want {
		if _, ok := st.Packages[name]; !ok {
			t.Errorf("no package for %q", name)
		}
	}
	if posted != destTotal {
		t.Errorf("the destination holds %d posted messages, the catalog %d dest ids: something was posted twice or lost", posted, destTotal)
	}
	wantSkipped := slices.Sorted(slices.Values(w.Skipped))
	if !slices.Equal(st.Skipped, wantSkipped) {
		t.Errorf("skipped packages:\n got  %q\n want %q", st.Skipped, wantSkipped)
	}
	wantNotes := slices.Sorted(slices.Values(w.Notifications))
	if !slices.Equal(st.Notifications, wantNotes) {
		t.Errorf("notifications:\n got  %q\n want %q", st.Notifications, wantNotes)
	}
}

// onceVars is the environment of `hoard demo --once` over the ingestion world.
func onceVars(url, dataDir string, maxAttempts int) map[string]string {
	return map[string]string{"DATABASE_URL": url, "DATA_DIR": dataDir,
		"SPLIT_THRESHOLD_BYTES": fmt.Sprint(ingestThreshold), "WORKER_MAX_SKIP_ATTEMPTS": fmt.Sprint(maxAttempts),
		"DOWNLOAD_STALL_SECONDS": "1", "AUTO_GROUP_TIME_WINDOW_MINUTES": "5", "LOG_LEVEL": "warn"}
}

// onceSummary is what `hoard demo --once` prints.
type onceSummary = demo.OnceSummary

func runOnce(t *testing.T, vars map[string]string, seed string) onceSummary {
	t.Helper()
	r := runHoardFor(t, 5*time.Minute, vars, "demo", "--once", "--seed", seed)
	if r.code != 0 {
		t.Fatalf("demo --once exited %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, tail(r.stderr, 6000))
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var sum onceSummary
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
		t.Fatalf("summary: %v\n%s", err, r.stdout)
	}
	return sum
}

// logSummary is what a failed test shows of a process's log: its first
// lines at level ERROR (what went wrong first), then the log's tail.
func logSummary(log string) string {
	var errs []string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "level=ERROR") && len(errs) < 10 {
			errs = append(errs, line)
		}
	}
	return "first errors:\n" + strings.Join(errs, "\n") + "\nlast lines:\n" + tail(log, 6000)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// TestDemoOnceIngestsTheWorld runs one cycle over a world that exercises
// the ingestion rules and checks the catalog, then runs again and checks
// that nothing was added.
func TestDemoOnceIngestsTheWorld(t *testing.T) {
	t.Parallel()
	const maxAttempts = 2
	w := writeIngestWorld(t, t.TempDir(), maxAttempts)
	dir := dataDir(t)
	url := storetest.URL(t)
	vars := onceVars(url, dir, maxAttempts)

	// The same world in its own database and DATA_DIR, killed in the
	// middle of its run and started again, runs beside the first two runs
	// (Run may be called from another goroutine); its catalog is compared
	// with the first run's at the end.
	var (
		killed   catalogState
		killedOK bool
	)
	killedDone := make(chan struct{})
	go func() {
		defer close(killedDone)
		t.Run("killed and restarted", func(t *testing.T) {
			dir := dataDir(t)
			url := storetest.URL(t)
			vars := onceVars(url, dir, maxAttempts)
			killMidRun(t, vars, w.Seed, url, 5)
			sum := runOnce(t, vars, w.Seed)
			if sum.RunStatus != "COMPLETED" {
				t.Errorf("run after the restart: %+v", sum)
			}
			got := readCatalog(t, url)
			checkCatalog(t, w, got, destinationPosts(t, dir))
			killed, killedOK = got, true
		})
	}()
	defer func() { <-killedDone }() // a Fatal below must not end the test before the subtest

	sum := runOnce(t, vars, w.Seed)
	if sum.RunStatus != "COMPLETED" || sum.Duplicates != w.Duplicates {
		t.Errorf("first run: %+v, want COMPLETED with %d duplicates", sum, w.Duplicates)
	}
	addsUp := func(which string, s onceSummary) {
		t.Helper()
		if s.ArchivesFound != s.Ingested+s.Duplicates+s.SkippedInRun+s.HeldBack || s.ArchivesFound == 0 && which == "first run" {
			t.Errorf("%s: found %d, but new %d + duplicates %d + skipped %d + held back %d = %d", which, s.ArchivesFound,
				s.Ingested, s.Duplicates, s.SkippedInRun, s.HeldBack, s.Ingested+s.Duplicates+s.SkippedInRun+s.HeldBack)
		}
	}
	addsUp("first run", sum)
	first := readCatalog(t, url)
	checkCatalog(t, w, first, destinationPosts(t, dir))
	if !slices.Equal(first.Groups, w.Groups) {
		t.Errorf("groups:\n got  %q\n want %q", first.Groups, w.Groups)
	}
	if !slices.Equal(first.Ungrouped, w.Ungrouped) {
		t.Errorf("ungrouped:\n got  %q\n want %q", first.Ungrouped, w.Ungrouped)
	}
	checkGroupsSensible(t, url)
	if spool, _ := filepath.Glob(filepath.Join(dir, "spool", "*", "*")); len(spool) > 0 {
		t.Errorf("spool files left behind: %q", spool)
	}

	second := runOnce(t, vars, w.Seed)
	if second.RunStatus != "COMPLETED" || second.Ingested != 0 || second.Packages != sum.Packages {
		t.Errorf("second run added work: %+v (first %+v)", second, sum)
	}
	addsUp("second run", second)
	again := readCatalog(t, url)
	again.Runs, first.Runs = nil, nil
	if diff := diffState(first, again); diff != "" {
		t.Errorf("the second run changed the catalog:\n%s", diff)
	}

	// The same world, killed in the middle of its run and started again,
	// ends in the same catalog (the run went on beside the first two).
	<-killedDone
	if !killedOK {
		return // the killed run failed; its subtest says why
	}
	killed.Runs = nil
	if diff := diffState(first, killed); diff != "" {
		t.Errorf("the interrupted run ended elsewhere than the uninterrupted one:\n%s", diff)
	}
}

// killMidRun starts `hoard demo --once` and kills it (SIGKILL) once the run
// has indexed minPackages packages, failing when the run ends first.
func killMidRun(t *testing.T, vars map[string]string, seed, url string, minPackages int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd, stdout, stderr := hoardCmd(ctx, vars, "demo", "--once", "--seed", seed)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	db, err := openWhenUp(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			t.Fatalf("the run ended (%v) before it could be killed\nstdout:\n%s\nstderr:\n%s", err, stdout, tail(stderr.String(), 4000))
		case <-ctx.Done():
			t.Fatal("no progress to interrupt")
		case <-tick.C:
		}
		n, err := db.CountRows(ctx, "packages")
		if err != nil {
			continue // the schema may not exist yet
		}
		if n >= int64(minPackages) {
			break
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited
}

// openWhenUp opens a store on url (two connections) as soon as the
// server answers, until ctx is done.
func openWhenUp(ctx context.Context, url string) (*store.DB, error) {
	for {
		db, err := store.Open(ctx, url, store.Options{MaxConns: 2})
		if err == nil {
			return db, nil
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// diffState describes how two catalog states differ, "" when they do not.
func diffState(a, b catalogState) string {
	var out []string
	for name, p := range a.Packages {
		q, ok := b.Packages[name]
		switch {
		case !ok:
			out = append(out, "gone: "+name)
		case fmt.Sprint(p.wantPackage, p.Size, len(p.DestIDs), p.Note) != fmt.Sprint(q.wantPackage, q.Size, len(q.DestIDs), q.Note):
			out = append(out, fmt.Sprintf("%s: %+v → %+v", name, p, q))
		}
	}
	for name := range b.Packages {
		if _, ok := a.Packages[name]; !ok {
			out = append(out, "new: "+name)
		}
	}
	for _, c := range []struct {
		what string
		a, b []string
	}{{"skipped", a.Skipped, b.Skipped}, {"notifications", a.Notifications, b.Notifications},
		{"runs", a.Runs, b.Runs}, {"groups", a.Groups, b.Groups}, {"ungrouped", a.Ungrouped, b.Ungrouped}} {
		if !slices.Equal(c.a, c.b) {
			out = append(out, fmt.Sprintf("%s: %q → %q", c.what, c.a, c.b))
		}
	}
	return strings.Join(out, "\n")
}

// runHoardFor is runHoard with a longer time limit.
func runHoardFor(t *testing.T, limit time.Duration, vars map[string]string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd, stdout, stderr := hoardCmd(ctx, vars, args...)
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run hoard %v: %v", args, err)
	}
	return result{code, stdout.String(), stderr.String()}
}
