package jobs

import (
	"context"
	"log/slog"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// RecoverTransfersWorker runs RecoverTransfersArgs (SPEC rule 15).
type RecoverTransfersWorker struct {
	worker[hoard.RecoverTransfersArgs]
	db        *store.DB
	log       *slog.Logger
	transfers *transfers
}

func newRecoverTransfersWorker(p *parts) *RecoverTransfersWorker {
	return &RecoverTransfersWorker{worker: worker[hoard.RecoverTransfersArgs]{fail: p.fail}, db: p.db, log: p.log, transfers: p.transfers}
}

// Work implements river.Worker. For each unfinished transfer: recorded
// parts are checked in the destination (one request per transfer) and
// forgotten when their message is gone; every unposted part gets an
// upload_part job and a fully posted transfer its verify job (both unique:
// a job still queued or running is not doubled). upload_part itself looks
// for an unrecorded post before posting, so nothing is posted twice.
func (w *RecoverTransfersWorker) Work(ctx context.Context, job *river.Job[hoard.RecoverTransfersArgs]) error {
	return w.finish(ctx, job, w.work(ctx), nil)
}

func (w *RecoverTransfersWorker) work(ctx context.Context) error {
	transfers, err := w.db.ListUnfinishedTransfers(ctx)
	if err != nil {
		return err
	}
	recovered := 0
	for i := range transfers {
		t := &transfers[i]
		if err := w.recoverTransfer(ctx, t); err != nil {
			w.log.Warn("recover transfer", "transfer", t.ID, "file", t.Draft.FileName, "err", err)
			continue
		}
		recovered++
	}
	if len(transfers) > 0 {
		w.log.Info("recovery checked publications in flight", "transfers", len(transfers), "recovered", recovered)
	}
	return nil
}

// recoverTransfer queues what transfer t still needs (continueTransfer).
func (w *RecoverTransfersWorker) recoverTransfer(ctx context.Context, t *hoard.Transfer) error {
	parts, present, err := w.transfers.postedParts(ctx, t)
	if err != nil {
		return err
	}
	return w.db.InTx(ctx, func(tx *store.DB) error {
		return w.transfers.continueTransfer(ctx, tx, river.ClientFromContext[pgx.Tx](ctx), t, parts, present, w.transfers.maxAttempts, false)
	})
}
