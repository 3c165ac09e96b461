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
func (a *app) startFirstCycle(ctx context.Context) error {
	client, err := queue.NewInsertOnly(a.db.Pool(), a.log)
	if err != nil {
		return fmt.Errorf("demo: first cycle: %w", err)
	}
	if _, err := client.Insert(ctx, hoard.IngestCycleArgs{Trigger: hoard.TriggerDemo}, nil); err != nil {
		return fmt.Errorf("demo: first cycle: %w", err)
	}
	return nil
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
