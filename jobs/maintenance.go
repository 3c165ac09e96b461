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

// Work implements river.Worker. A channel that is gone cancels the job;
// any other failure is retried (jobOutcome).
func (w *RescanChannelWorker) Work(ctx context.Context, job *river.Job[hoard.RescanChannelArgs]) error {
	return jobOutcome(completeTx(ctx, w.deps.DB, job, func(tx *store.DB, client *river.Client[pgx.Tx]) error {
		if _, err := tx.FindChannelByID(ctx, job.Args.ChannelID); err != nil {
			return fmt.Errorf("rescan channel: %w", err)
		}
		if err := tx.ResetChannelProgress(ctx, job.Args.ChannelID); err != nil {
			return err
		}
		return queueCycle(ctx, tx, client)
	}))
}

// RepairPackageWorker runs RepairPackageArgs.
type RepairPackageWorker struct {
	river.WorkerDefaults[hoard.RepairPackageArgs]
	deps Deps
}

// Work implements river.Worker. A package that is gone or has no source
// message cancels the job; any other failure is retried (jobOutcome).
func (w *RepairPackageWorker) Work(ctx context.Context, job *river.Job[hoard.RepairPackageArgs]) error {
	return jobOutcome(completeTx(ctx, w.deps.DB, job, func(tx *store.DB, client *river.Client[pgx.Tx]) error {
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
		w.deps.Logger.Info("package queued for repair", "package", p.ID, "file", p.FileName)
		return queueCycle(ctx, tx, client)
	}))
}

// RetrySkippedWorker runs RetrySkippedArgs.
type RetrySkippedWorker struct {
	river.WorkerDefaults[hoard.RetrySkippedArgs]
	deps Deps
}

// Work implements river.Worker. A skipped record that is gone cancels the
// job; any other failure is retried (jobOutcome). A set whose jobs still
// wait for a later cycle (RETRYING) is tried now: its waiting download,
// upload or verification is made available at once rather than queued a
// second time.
func (w *RetrySkippedWorker) Work(ctx context.Context, job *river.Job[hoard.RetrySkippedArgs]) error {
	return jobOutcome(completeTx(ctx, w.deps.DB, job, func(tx *store.DB, client *river.Client[pgx.Tx]) error {
		s, err := tx.FindSkippedPackage(ctx, job.Args.SkippedID)
		if err != nil {
			return fmt.Errorf("retry skipped package: %w", err)
		}
		if err := tx.RestartSkippedPackage(ctx, s.ID, 0); err != nil {
			return err
		}
		if err := retryWaitingJobs(ctx, tx, client, s); err != nil {
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
	}))
}

// retryWaitingJobs makes the jobs of skipped set s that wait for a later
// attempt (its ingest_message, and the upload_part and verify_transfer jobs
// of its publication) available now; jobs running or final are left alone
// (the cycle queues a new ingest_message for a final one).
func retryWaitingJobs(ctx context.Context, tx *store.DB, client *river.Client[pgx.Tx], s *hoard.SkippedPackage) error {
	waiting, err := tx.WaitingJobIDs(ctx, hoard.IngestMessageArgs{}.Kind(),
		map[string]any{"channel_id": s.SourceChannelID, "message_id": s.SourceMessageID})
	if err != nil {
		return err
	}
	t, err := tx.FindTransferBySource(ctx, s.SourceChannelID, s.SourceMessageID)
	if err != nil && hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return err
	}
	if err == nil {
		for _, kind := range []string{hoard.UploadPartArgs{}.Kind(), hoard.VerifyTransferArgs{}.Kind()} {
			ids, err := tx.WaitingJobIDs(ctx, kind, map[string]any{"transfer_id": t.ID})
			if err != nil {
				return err
			}
			waiting = append(waiting, ids...)
		}
	}
	for _, id := range waiting {
		if _, err := client.JobRetryTx(ctx, tx.Tx(), id); err != nil {
			return fmt.Errorf("retry waiting job %d: %w", id, err)
		}
	}
	return nil
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
