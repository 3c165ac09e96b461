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

// RepairPackageWorker runs RepairPackageArgs.
type RepairPackageWorker struct {
	worker[hoard.RepairPackageArgs]
	db  *store.DB
	log *slog.Logger
}

func newRepairPackageWorker(p *parts) *RepairPackageWorker {
	return &RepairPackageWorker{worker: worker[hoard.RepairPackageArgs]{fail: p.fail}, db: p.db, log: p.log}
}

// Work implements river.Worker. A package that is gone or has no source
// message cancels the job; any other failure is retried (its policy).
func (w *RepairPackageWorker) Work(ctx context.Context, job *river.Job[hoard.RepairPackageArgs]) error {
	return w.finish(ctx, job, completeTx(ctx, w.db, job, func(tx *store.DB, client *river.Client[pgx.Tx]) error {
		p, err := tx.FindPackageByID(ctx, job.Args.PackageID)
		if err != nil {
			return fmt.Errorf("repair package: %w", err)
		}
		if p.SourceChannelID == 0 || p.SourceMessageID == 0 {
			return hoard.Errorf(hoard.EINVALID, "repair package: %s has no source message to download again", p.FileName)
		}
		if err := tx.ClearPackageDestination(ctx, p.ID); err != nil {
			return err
		}
		if err := tx.RewindWatermarks(ctx, p.SourceChannelID, p.SourceMessageID); err != nil {
			return err
		}
		if err := tx.DeleteSkippedBySource(ctx, p.SourceChannelID, p.SourceMessageID); err != nil && hoard.ErrorCode(err) != hoard.ENOTFOUND {
			return err
		}
		if err := tx.ResolvePackageNotifications(ctx, p.ID); err != nil {
			return err
		}
		w.log.Info("package queued for repair", "package", p.ID, "file", p.FileName)
		return queueCycle(ctx, tx, client)
	}), nil)
}
