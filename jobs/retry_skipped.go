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

// RetrySkippedWorker runs RetrySkippedArgs.
type RetrySkippedWorker struct {
	worker[hoard.RetrySkippedArgs]
	db  *store.DB
	log *slog.Logger
}

func newRetrySkippedWorker(p *parts) *RetrySkippedWorker {
	return &RetrySkippedWorker{worker: worker[hoard.RetrySkippedArgs]{fail: p.fail}, db: p.db, log: p.log}
}

// Work implements river.Worker. A skipped record that is gone cancels the
// job; any other failure is retried (its policy). A set whose jobs still
// wait for a later cycle (RETRYING) is tried now: its waiting download,
// upload or verification is made available at once rather than queued a
// second time.
func (w *RetrySkippedWorker) Work(ctx context.Context, job *river.Job[hoard.RetrySkippedArgs]) error {
	return w.finish(ctx, job, completeTx(ctx, w.db, job, func(tx *store.DB, client *river.Client[pgx.Tx]) error {
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
	}), nil)
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
