package main

import (
	"context"
	"fmt"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger/emulator"
	"github.com/hoard/hoard/queue"
)

// startFirstCycle queues an ingestion cycle as the demo starts, so that the
// catalog fills while its newcomer watches instead of after
// WORKER_INTERVAL_MINUTES (the catalog page says a cycle is running). An
// unfinished cycle absorbs it (IngestCycleArgs is unique while pending), so
// a restart during a cycle adds none.
func (a *app) startFirstCycle(ctx context.Context) (banner string, err error) {
	client, err := queue.NewInsertOnly(a.db.Pool(), a.log)
	if err != nil {
		return "", fmt.Errorf("demo: first cycle: %w", err)
	}
	if _, err := client.Insert(ctx, hoard.IngestCycleArgs{Trigger: hoard.TriggerDemo}, nil); err != nil {
		return "", fmt.Errorf("demo: first cycle: %w", err)
	}
	return demoCycleBanner(a.db.HasPackages(ctx)), nil
}

// demoCycleBanner says what the demo's first cycle does for a catalog that
// is empty (it fills) or not (a restart: it looks for new posts).
func demoCycleBanner(full bool, err error) string {
	if err == nil && full {
		return "An ingestion cycle is looking for new posts; the catalog you left is there.\n"
	}
	return "A first ingestion cycle is running: the catalog fills within a minute or two.\n"
}

// useEmulator points the clients of accounts added later (on the messaging
// page) at the demo's emulator, as the seeded account's is: without it they
// would need TELEGRAM_APP_ID and TELEGRAM_APP_HASH for the real platform.
func (c *accountClients) useEmulator(info emulator.Info) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.base.Endpoint != nil {
		return // TELEGRAM_EMULATOR set it already
	}
	c.base.Endpoint = telegramInfo(info).Endpoint()
	if c.base.AppID == 0 || c.base.AppHash == "" {
		c.base.AppID, c.base.AppHash = 1, "emulator" // the emulator accepts any application
	}
}
