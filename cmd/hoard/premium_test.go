package main

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/messengertest"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// TestPremiumLapsesMidRun is the issue's acceptance "Premium switched off
// in the middle of a run: the next file over 2,000 MiB is split at the
// non-Premium limit and published", scaled down: the split threshold (the
// non-Premium limit) is 10 MiB and the files 12 MiB. The account signs in
// Premium; the run publishes the first file whole (re-sent, as a Premium
// account may), then Premium is switched off on the platform while the
// second file's download is held back (FLOOD_WAIT); the second file is
// split into two pieces and published, and the stored flag follows.
func TestPremiumLapsesMidRun(t *testing.T) {
	// Waits on flood windows and retries more than it computes: it
	// shares the machine with the other waiting tests.
	t.Parallel()
	const size = 12 << 20
	dir := t.TempDir()
	gen := func(name string, seed int, date string) map[string]any {
		return map[string]any{"generate": map[string]any{"name": name, "size": size, "seed": seed}, "date": date}
	}
	seed := writeSeed(t, dir, map[string]any{
		"account":     map[string]any{"phone": "+15550000001", "premium": true},
		"destination": map[string]any{"title": "Hoard Archive", "username": "hoardarchive"},
		"channels": []any{map[string]any{"title": "Big Files", "username": "bigfiles", "joined": true,
			"posts": []any{gen("First.zip", 1, "2024-01-01T00:00:00Z"), gen("Second.zip", 2, "2024-01-02T00:00:00Z")}}},
		"faults": []any{map[string]any{"method": "upload.getFile", "file": "Second.zip", "error": "FLOOD_WAIT_1"}},
	})
	env := messengertest.StartIn(t, seed, dir)
	url := storetest.URL(t)
	vars := map[string]string{"DATABASE_URL": url, "DATA_DIR": dataDir(t), "TELEGRAM_EMULATOR": envInfo(env),
		"SPLIT_THRESHOLD_BYTES": fmt.Sprint(10 << 20), "LOG_LEVEL": "warn"}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd, stdout, stderr := hoardCmd(ctx, vars, "demo", "--once", "--seed", seed)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	db, err := store.Open(ctx, url, store.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	published := func(name string) []int64 {
		for _, p := range storetest.Packages(t, db) {
			if p.FileName == name {
				return p.DestMessageIDs
			}
		}
		return nil
	}
	waitUntil(t, "the first file to be published", time.Minute, func() bool {
		select {
		case err := <-exited:
			t.Fatalf("demo --once ended early (%v)\nstderr:\n%s", err, tail(stderr.String(), 4000))
		default:
		}
		return len(published("First.zip")) > 0
	})
	if err := env.Emu.SetPremium(env.Emu.AccountID(), false); err != nil {
		t.Fatal(err)
	}
	env.Emu.ClearFaults()
	if err := <-exited; err != nil {
		t.Fatalf("demo --once: %v\nstderr:\n%s", err, tail(stderr.String(), 6000))
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var sum onceSummary
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
		t.Fatalf("summary: %v\n%s", err, stdout)
	}

	type outcome struct {
		Run     string
		First   []string
		Second  []string
		Premium bool
	}
	acc := env.Account(t, env.Config("check"))
	posts := map[int]string{}
	ch, err := acc.ResolveChannel(ctx, messenger.ChannelRef{Username: "hoardarchive"})
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := acc.History(ctx, ch, messenger.HistoryQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.Document != nil {
			posts[m.ID] = fmt.Sprintf("%s:%d", m.Document.FileName, m.Document.Size)
		}
	}
	named := func(ids []int64) []string {
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = posts[int(id)]
		}
		return out
	}
	accounts, err := db.ListAccounts(ctx)
	if err != nil || len(accounts) == 0 {
		t.Fatalf("accounts %+v, %v; want one", accounts, err)
	}
	premium := accounts[0].IsPremium
	got := outcome{sum.RunStatus, named(published("First.zip")), named(published("Second.zip")), premium}
	want := outcome{"COMPLETED", []string{fmt.Sprintf("First.zip:%d", size)},
		[]string{fmt.Sprintf("Second.zip.001:%d", size/2), fmt.Sprintf("Second.zip.002:%d", size/2)}, false}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v\nstderr:\n%s", got, want, tail(stderr.String(), 4000))
	}
}
