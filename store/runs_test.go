package store_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// TestRuns keeps its subtests sequential: a RUNNING run in one open test
// transaction makes every other transaction that starts a run wait for it
// (the one-running unique index), so parallel run tests would only queue.
func TestRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("create, conflict, finish, create again", func(t *testing.T) {
		db := storetest.NewTx(t)
		_, err := db.FindRunningRun(ctx)
		wantCode(t, err, hoard.ENOTFOUND)

		r, err := db.CreateRun(ctx, hoard.TriggerManual)
		must(t, err)
		type run struct {
			HasID, Finished, Started bool
			Status                   hoard.RunStatus
			Trigger                  hoard.RunTrigger
			Counters                 hoard.RunCounters
			Activity, ErrorMessage   string
		}
		if diff := cmp.Diff(run{HasID: true, Started: true, Status: hoard.RunRunning, Trigger: hoard.TriggerManual}, run{r.ID != 0,
			r.FinishedAt != nil, !r.StartedAt.IsZero(), r.Status, r.Trigger, r.RunCounters, r.CurrentActivity, r.ErrorMessage}); diff != "" {
			t.Fatalf("new run (-want +got):\n%s", diff)
		}
		running, err := db.FindRunningRun(ctx)
		must(t, err)
		if running.ID != r.ID {
			t.Fatalf("running run = %d, want %d", running.ID, r.ID)
		}
		err = savepoint(db, func(tx *store.DB) error { _, err := tx.CreateRun(ctx, hoard.TriggerSchedule); return err })
		wantCode(t, err, hoard.ECONFLICT)

		must(t, db.SetRunActivity(ctx, r.ID, hoard.RunActivity{Activity: "Downloading x.zip", Step: "downloading", File: "x.zip",
			Bytes: 5, TotalBytes: 10}))
		ok, err := db.FinishRun(ctx, r.ID, hoard.RunFailed, "channel gone")
		must(t, err)
		if !ok {
			t.Fatal("FinishRun of a running run reported false")
		}
		_, err = db.FindRunningRun(ctx)
		wantCode(t, err, hoard.ENOTFOUND)
		next, err := db.CreateRun(ctx, hoard.TriggerSchedule)
		must(t, err)
		if next.ID == r.ID || next.Trigger != hoard.TriggerSchedule {
			t.Fatalf("second run = %+v", next)
		}
		got, err := db.FindRun(ctx, r.ID)
		must(t, err)
		if got.Status != hoard.RunFailed || got.ErrorMessage != "channel gone" || got.FinishedAt == nil {
			t.Fatalf("finished run = %+v", got)
		}
		// The last activity clears when the run ends, and stays clear.
		must(t, db.SetRunActivity(ctx, r.ID, hoard.RunActivity{Activity: "late", Step: "uploading"}))
		got, err = db.FindRun(ctx, r.ID)
		must(t, err)
		type activity struct {
			Activity, Step, File string
			Bytes, Total         int64
		}
		if a := (activity{got.CurrentActivity, got.CurrentStep, got.CurrentFile, got.CurrentBytes, got.CurrentTotalBytes}); a != (activity{}) {
			t.Fatalf("activity of the finished run = %+v", a)
		}
		_, err = db.FindRun(ctx, -1)
		wantCode(t, err, hoard.ENOTFOUND)
	})

	t.Run("invalid trigger", func(t *testing.T) {
		db := storetest.NewTx(t)
		err := savepoint(db, func(tx *store.DB) error { _, err := tx.CreateRun(ctx, "CRON"); return err })
		wantCode(t, err, hoard.EINVALID)
	})

	t.Run("finish exactly once", func(t *testing.T) {
		db := storetest.NewTx(t)
		r, err := db.CreateRun(ctx, hoard.TriggerDemo)
		must(t, err)
		_, err = db.FinishRun(ctx, r.ID, hoard.RunRunning, "")
		wantCode(t, err, hoard.EINVALID)
		err = savepoint(db, func(tx *store.DB) error { _, err := tx.FinishRun(ctx, r.ID, "DONE", ""); return err })
		wantCode(t, err, hoard.EINVALID)

		ok, err := db.FinishRun(ctx, r.ID, hoard.RunCompleted, "")
		must(t, err)
		if !ok {
			t.Fatal("first FinishRun reported false")
		}
		first, _ := db.FindRun(ctx, r.ID)
		ok, err = db.FinishRun(ctx, r.ID, hoard.RunCancelled, "late")
		must(t, err)
		if ok {
			t.Fatal("second FinishRun reported true")
		}
		got, _ := db.FindRun(ctx, r.ID)
		if got.Status != hoard.RunCompleted || got.ErrorMessage != "" || got.FinishedAt == nil || !got.FinishedAt.Equal(*first.FinishedAt) {
			t.Fatalf("second FinishRun changed the run: %+v", got)
		}
		ok, err = db.FinishRun(ctx, -1, hoard.RunCompleted, "")
		if ok || err != nil {
			t.Fatalf("FinishRun of an unknown run = %v, %v", ok, err)
		}
	})

	t.Run("activity", func(t *testing.T) {
		db := storetest.NewTx(t)
		acc := mustAccount(t, db)
		ch := mustChannel(t, db)
		m := mustMap(t, db, acc.ID, ch.ID)
		r, err := db.CreateRun(ctx, hoard.TriggerManual)
		must(t, err)
		a := hoard.RunActivity{Activity: "downloading", Step: "2/5", ChannelID: ch.ID, TopicID: 9,
			AccountChannelMapID: m.ID, File: "Big.zip", Bytes: 1 << 20, TotalBytes: 1 << 30}
		must(t, db.SetRunActivity(ctx, r.ID, a))
		got, err := db.FindRun(ctx, r.ID)
		must(t, err)
		if diff := cmp.Diff(a, activityOf(got)); diff != "" {
			t.Fatalf("activity (-want +got):\n%s", diff)
		}
		// Zero ids are stored as "none".
		must(t, db.SetRunActivity(ctx, r.ID, hoard.RunActivity{Activity: "waiting"}))
		got, _ = db.FindRun(ctx, r.ID)
		if got.CurrentActivity != "waiting" || got.CurrentChannelID != 0 || got.CurrentAccountChannelMapID != 0 || got.CurrentFile != "" {
			t.Fatalf("activity reset = %+v", got)
		}
		must(t, db.SetRunActivity(ctx, r.ID, a))

		ok, err := db.FinishRun(ctx, r.ID, hoard.RunCompleted, "")
		must(t, err)
		if !ok {
			t.Fatal("FinishRun reported false")
		}
		got, _ = db.FindRun(ctx, r.ID)
		if diff := cmp.Diff(hoard.RunActivity{}, activityOf(got)); diff != "" {
			t.Fatalf("FinishRun kept live activity (-want +got):\n%s", diff)
		}
		// A finished run is left alone.
		must(t, db.SetRunActivity(ctx, r.ID, a))
		got, _ = db.FindRun(ctx, r.ID)
		if got.CurrentActivity != "" || got.CurrentFile != "" {
			t.Fatalf("SetRunActivity changed a finished run: %+v", got)
		}
		must(t, db.SetRunActivity(ctx, -1, a)) // unknown run: nothing to do
	})

	t.Run("counters", func(t *testing.T) {
		db := storetest.NewTx(t)
		r, err := db.CreateRun(ctx, hoard.TriggerManual)
		must(t, err)
		must(t, db.AddRunCounters(ctx, r.ID, hoard.RunCounters{MessagesScanned: 10, ArchivesFound: 3, Duplicates: 1}))
		must(t, db.AddRunCounters(ctx, r.ID, hoard.RunCounters{MessagesScanned: 5, Ingested: 2, Skipped: 1, HeldBack: 4}))
		got, err := db.FindRun(ctx, r.ID)
		must(t, err)
		want := hoard.RunCounters{MessagesScanned: 15, ArchivesFound: 3, Duplicates: 1, Ingested: 2, Skipped: 1, HeldBack: 4}
		if got.RunCounters != want {
			t.Fatalf("counters = %+v, want %+v", got.RunCounters, want)
		}
		// Counters survive the finish.
		_, err = db.FinishRun(ctx, r.ID, hoard.RunCompleted, "")
		must(t, err)
		got, _ = db.FindRun(ctx, r.ID)
		if got.RunCounters != want {
			t.Fatalf("counters after finish = %+v", got.RunCounters)
		}
		wantCode(t, db.AddRunCounters(ctx, -1, hoard.RunCounters{Ingested: 1}), hoard.ENOTFOUND)
	})

	t.Run("list newest first", func(t *testing.T) {
		db := storetest.NewTx(t)
		var want []int64
		for i := 0; i < 4; i++ {
			r, err := db.CreateRun(ctx, hoard.TriggerSchedule)
			must(t, err)
			if i < 3 { // the newest stays RUNNING
				_, err = db.FinishRun(ctx, r.ID, hoard.RunCompleted, "")
				must(t, err)
			}
			want = append([]int64{r.ID}, want...)
		}
		// All were started in one transaction (one now()): id breaks the tie.
		for _, tt := range []struct {
			limit int
			want  []int64
		}{{2, want[:2]}, {0, want}, {-1, want}, {201, want}, {4, want}} {
			got, err := db.ListRuns(ctx, tt.limit)
			must(t, err)
			var ids []int64
			for _, r := range got {
				ids = append(ids, r.ID)
			}
			if !slices.Equal(ids, tt.want) {
				t.Errorf("ListRuns(%d) = %v, want %v", tt.limit, ids, tt.want)
			}
		}
		// Runs started earlier list later, whatever their ids.
		_, err := db.Tx().Exec(ctx, `UPDATE ingestion_runs SET started_at = now() - interval '1 hour' WHERE id = $1`, want[0])
		must(t, err)
		got, err := db.ListRuns(ctx, 10)
		must(t, err)
		if got[len(got)-1].ID != want[0] {
			t.Fatalf("run started an hour ago is not last: %d", got[len(got)-1].ID)
		}
	})
}

func TestAddRunCountersConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewDB(t)
	r, err := db.CreateRun(ctx, hoard.TriggerManual)
	must(t, err)
	const workers, adds = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*adds)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < adds; i++ {
				errs <- db.AddRunCounters(ctx, r.ID, hoard.RunCounters{MessagesScanned: 1, ArchivesFound: 2, Duplicates: 3, Ingested: 4, Skipped: 5})
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		must(t, err)
	}
	got, err := db.FindRun(ctx, r.ID)
	must(t, err)
	n := workers * adds
	want := hoard.RunCounters{MessagesScanned: n, ArchivesFound: 2 * n, Duplicates: 3 * n, Ingested: 4 * n, Skipped: 5 * n}
	if got.RunCounters != want {
		t.Fatalf("counters = %+v, want %+v (lost updates)", got.RunCounters, want)
	}

	// Committed runs: the one-running rule holds across connections too.
	_, err = db.CreateRun(ctx, hoard.TriggerSchedule)
	wantCode(t, err, hoard.ECONFLICT)
	// Concurrent finishers: exactly one wins.
	var winners sync.WaitGroup
	results := make(chan bool, 4)
	for i := 0; i < 4; i++ {
		winners.Add(1)
		go func() {
			defer winners.Done()
			ok, err := db.FinishRun(ctx, r.ID, hoard.RunCompleted, "")
			if err != nil {
				t.Error(err)
			}
			results <- ok
		}()
	}
	winners.Wait()
	close(results)
	won := 0
	for ok := range results {
		if ok {
			won++
		}
	}
	if won != 1 {
		t.Fatalf("%d concurrent FinishRun calls won, want exactly 1", won)
	}
}

// activityOf is the live activity a run row holds.
func activityOf(r *hoard.IngestionRun) hoard.RunActivity {
	return hoard.RunActivity{Activity: r.CurrentActivity, Step: r.CurrentStep, ChannelID: r.CurrentChannelID, TopicID: r.CurrentTopicID,
		AccountChannelMapID: r.CurrentAccountChannelMapID, File: r.CurrentFile, Bytes: r.CurrentBytes, TotalBytes: r.CurrentTotalBytes}
}
