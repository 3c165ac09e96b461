package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// RescanChannelWorker runs RescanChannelArgs.
type RescanChannelWorker struct {
	river.WorkerDefaults[hoard.RescanChannelArgs]
	deps Deps
}

// Work implements river.Worker.
func (w *RescanChannelWorker) Work(ctx context.Context, job *river.Job[hoard.RescanChannelArgs]) error {
	return completeTx(ctx, w.deps.DB, job, func(tx *store.DB, client *river.Client[pgx.Tx]) error {
		if _, err := tx.FindChannelByID(ctx, job.Args.ChannelID); err != nil {
			return river.JobCancel(fmt.Errorf("rescan channel: %w", err))
		}
		if err := tx.ResetChannelProgress(ctx, job.Args.ChannelID); err != nil {
			return err
		}
		return queueCycle(ctx, tx, client)
	})
}

// RepairPackageWorker runs RepairPackageArgs.
type RepairPackageWorker struct {
	river.WorkerDefaults[hoard.RepairPackageArgs]
	deps Deps
}

// Work implements river.Worker.
func (w *RepairPackageWorker) Work(ctx context.Context, job *river.Job[hoard.RepairPackageArgs]) error {
	return completeTx(ctx, w.deps.DB, job, func(tx *store.DB, client *river.Client[pgx.Tx]) error {
		p, err := tx.FindPackageByID(ctx, job.Args.PackageID)
		if err != nil {
			return river.JobCancel(fmt.Errorf("repair package: %w", err))
		}
		if p.SourceChannelID == 0 || p.SourceMessageID == 0 {
			return river.JobCancel(hoard.Errorf(hoard.EINVALID,
				"repair package: %s has no source message to download again", p.FileName))
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
		w.deps.Logger.Info("package queued for repair", "package", p.ID, "file", p.FileName)
		return queueCycle(ctx, tx, client)
	})
}

// RetrySkippedWorker runs RetrySkippedArgs.
type RetrySkippedWorker struct {
	river.WorkerDefaults[hoard.RetrySkippedArgs]
	deps Deps
}

// Work implements river.Worker.
func (w *RetrySkippedWorker) Work(ctx context.Context, job *river.Job[hoard.RetrySkippedArgs]) error {
	return completeTx(ctx, w.deps.DB, job, func(tx *store.DB, client *river.Client[pgx.Tx]) error {
		s, err := tx.FindSkippedPackage(ctx, job.Args.SkippedID)
		if err != nil {
			return river.JobCancel(fmt.Errorf("retry skipped package: %w", err))
		}
		if err := tx.RestartSkippedPackage(ctx, s.ID, 0); err != nil {
			return err
		}
		if s.SourceTopicID != 0 && s.AccountChannelMapID != 0 {
			err = tx.RewindTopicWatermark(ctx, s.AccountChannelMapID, s.SourceTopicID, s.SourceMessageID)
		} else {
			err = tx.RewindWatermarks(ctx, s.SourceChannelID, s.SourceMessageID)
		}
		if err != nil {
			return err
		}
		return queueCycle(ctx, tx, client)
	})
}

// cycleBusySnooze is how long a job that needs a fresh cycle waits while
// one runs.
const cycleBusySnooze = 15 * time.Second

// queueCycle queues a manual ingestion cycle; while one is queued it is a
// no-op (that cycle has not scanned yet, so it sees the change). While one
// is running, its scans may have passed the change already and it would
// absorb the new cycle: the job is snoozed instead (its transaction rolls
// back) and does its work again once the running cycle has ended.
func queueCycle(ctx context.Context, tx *store.DB, client *river.Client[pgx.Tx]) error {
	if _, err := tx.FindRunningRun(ctx); err == nil {
		return river.JobSnooze(cycleBusySnooze)
	} else if hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return err
	}
	_, err := client.InsertTx(ctx, tx.Tx(), hoard.IngestCycleArgs{Trigger: hoard.TriggerManual}, nil)
	return err
}
