package main

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/queue"
	"github.com/hoard/hoard/store/storetest"
)

// TestIngestionTriggerQueuesACycle: the worker's listener turns an
// ingestion_trigger notification (what triggerIngestion sends) into one
// manual cycle job; triggers while it is queued add none.
func TestIngestionTriggerQueuesACycle(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	client, err := queue.NewInsertOnly(db.Pool(), log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := &app{db: db, log: log}
	go a.listenForWork(ctx, client)

	cycles := func() int {
		return len(storetest.Jobs(t, db, storetest.JobMatch{Kind: hoard.IngestCycleArgs{}.Kind(),
			Args: map[string]any{"trigger": hoard.TriggerManual}}))
	}
	if n := cycles(); n != 0 {
		t.Fatalf("%d cycles before any trigger", n)
	}
	// The listener may not listen yet: trigger until it hears one.
	waitUntil(t, "a cycle from ingestion_trigger", 20*time.Second, func() bool {
		if err := db.Notify(ctx, "ingestion_trigger", `{"trigger":"MANUAL"}`); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		return cycles() > 0
	})
	for range 3 {
		if err := db.Notify(ctx, "ingestion_trigger", `{"trigger":"MANUAL"}`); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(500 * time.Millisecond)
	if n := cycles(); n != 1 {
		t.Errorf("%d cycle jobs after four triggers, want 1 (unique while queued)", n)
	}
}
