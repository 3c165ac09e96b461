package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/hoard/hoard"

	"github.com/hoard/hoard/store"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// completeTx runs fn and marks job completed in one transaction: the rows fn
// writes, the jobs it inserts and the completion commit together or not at
// all.
func completeTx[T river.JobArgs](ctx context.Context, db *store.DB, job *river.Job[T], fn func(tx *store.DB, client *river.Client[pgx.Tx]) error) error {
	client := river.ClientFromContext[pgx.Tx](ctx)
	return db.InTx(ctx, func(tx *store.DB) error {
		if fn != nil {
			if err := fn(tx, client); err != nil {
				return err
			}
		}
		if _, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx.Tx(), job); err != nil {
			return fmt.Errorf("complete job %d: %w", job.ID, err)
		}
		return nil
	})
}

// withMaxAttempts returns args' insert options with another attempt budget.
func withMaxAttempts(opts river.InsertOpts, n int) *river.InsertOpts {
	opts.MaxAttempts = n
	return &opts
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
