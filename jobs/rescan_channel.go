package jobs

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// RescanChannelWorker runs RescanChannelArgs.
type RescanChannelWorker struct {
	worker[hoard.RescanChannelArgs]
	db  *store.DB
	log *slog.Logger
}

func newRescanChannelWorker(p *parts) *RescanChannelWorker {
	return &RescanChannelWorker{worker: worker[hoard.RescanChannelArgs]{fail: p.fail}, db: p.db, log: p.log}
}

// Work implements river.Worker. A channel that is gone cancels the job;
// any other failure is retried (its policy).
func (w *RescanChannelWorker) Work(ctx context.Context, job *river.Job[hoard.RescanChannelArgs]) error {
	return w.finish(ctx, job, completeTx(ctx, w.db, job, func(tx *store.DB, client *river.Client[pgx.Tx]) error {
		if _, err := tx.FindChannelByID(ctx, job.Args.ChannelID); err != nil {
			return fmt.Errorf("rescan channel: %w", err)
		}
		if err := tx.ResetChannelProgress(ctx, job.Args.ChannelID); err != nil {
			return err
		}
		return queueCycle(ctx, tx, client)
	}), nil)
}
