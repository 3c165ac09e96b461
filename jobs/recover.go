package jobs

import (
	"context"
	"errors"
	"fmt"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// RecoverTransfersWorker runs RecoverTransfersArgs (SPEC rule 15).
type RecoverTransfersWorker struct {
	river.WorkerDefaults[hoard.RecoverTransfersArgs]
	deps Deps
}

// Work implements river.Worker. For each unfinished transfer: recorded
// parts are checked in the destination (one request per transfer) and
// forgotten when their message is gone; every unposted part gets an
// upload_part job and a fully posted transfer its verify job (both unique:
// a job still queued or running is not doubled). upload_part itself looks
// for an unrecorded post before posting, so nothing is posted twice.
func (w *RecoverTransfersWorker) Work(ctx context.Context, job *river.Job[hoard.RecoverTransfersArgs]) error {
	d, db := &w.deps, w.deps.DB
	transfers, err := db.ListUnfinishedTransfers(ctx)
	if err != nil {
		return err
	}
	recovered := 0
	for i := range transfers {
		t := &transfers[i]
		if err := d.recoverTransfer(ctx, db, t); err != nil {
			d.Logger.Warn("recover transfer", "transfer", t.ID, "file", t.Draft.FileName, "err", err)
			continue
		}
		recovered++
	}
	if len(transfers) > 0 {
		d.Logger.Info("recovery checked publications in flight", "transfers", len(transfers), "recovered", recovered)
	}
	return nil
}

func (d *Deps) recoverTransfer(ctx context.Context, db *store.DB, t *hoard.Transfer) error {
	parts, present, err := d.postedParts(ctx, db, t)
	if err != nil {
		return err
	}
	return db.InTx(ctx, func(tx *store.DB) error {
		return d.continueTransfer(ctx, tx, river.ClientFromContext[pgx.Tx](ctx), t, parts, present, d.MaxSkipAttempts, false)
	})
}

// postedParts returns a transfer's parts and which of their recorded
// destination messages are still there (one request for all of them).
func (d *Deps) postedParts(ctx context.Context, db *store.DB, t *hoard.Transfer) ([]hoard.TransferPart, map[int64]bool, error) {
	parts, err := db.ListTransferParts(ctx, t.ID)
	if err != nil {
		return nil, nil, err
	}
	var ids []int
	for _, p := range parts {
		if p.DestMessageID != 0 {
			ids = append(ids, int(p.DestMessageID))
		}
	}
	present := map[int64]bool{}
	if len(ids) == 0 {
		return parts, present, nil
	}
	wr, err := d.writerOf(ctx, db, t.DestChannelID, t.AccountID)
	if err != nil {
		return nil, nil, err
	}
	msgs, err := wr.account.Messages(ctx, wr.peer, ids)
	if err != nil {
		return nil, nil, fmt.Errorf("check destination: %w", err)
	}
	for _, m := range msgs {
		if m.Document != nil {
			present[int64(m.ID)] = true
		}
	}
	return parts, present, nil
}

// errPartJobUnfinished is continueTransfer's answer when a FAILED
// transfer is taken up again while River still counts the upload_part job
// that failed it as unfinished (its end is recorded a moment after the job
// has marked the transfer FAILED): the new job would be skipped as its
// duplicate and the part never posted. The caller tries again shortly.
var errPartJobUnfinished = errors.New("the part's earlier upload job is still finishing")

// continueTransfer queues, in tx, what a transfer still needs: an
// upload_part job (maxAttempts attempts) per part not posted or whose post
// vanished (forgotten first), else its verify job; and moves the transfer
// to the matching state. Parts whose post is present are never posted
// again. resumingFailed says t was FAILED (a retry takes it up): a part
// job then skipped as a duplicate is errPartJobUnfinished, where in
// recovery the queued job is the one wanted.
func (d *Deps) continueTransfer(ctx context.Context, tx *store.DB, client *river.Client[pgx.Tx], t *hoard.Transfer,
	parts []hoard.TransferPart, present map[int64]bool, maxAttempts int, resumingFailed bool) error {
	missing := 0
	for _, p := range parts {
		if p.DestMessageID != 0 && present[p.DestMessageID] {
			continue
		}
		if p.DestMessageID != 0 {
			d.Logger.Warn("posted part vanished from the destination; posting again", "part", p.Name, "message", p.DestMessageID)
			if err := tx.ClearTransferPart(ctx, t.ID, p.PartNo); err != nil {
				return err
			}
		}
		missing++
		args := hoard.UploadPartArgs{RunID: t.IngestionRunID, TransferID: t.ID, PartNo: p.PartNo}
		res, err := client.InsertTx(ctx, tx.Tx(), args, withMaxAttempts(args.InsertOpts(), maxAttempts))
		if err != nil {
			return err
		}
		if res.UniqueSkippedAsDuplicate && resumingFailed {
			return fmt.Errorf("transfer %d part %d: %w", t.ID, p.PartNo, errPartJobUnfinished)
		}
	}
	if missing > 0 {
		if t.Status != hoard.TransferPublishing {
			return tx.SetTransferStatus(ctx, t.ID, hoard.TransferPublishing, "")
		}
		return nil
	}
	if t.Status != hoard.TransferVerifying {
		if err := tx.SetTransferStatus(ctx, t.ID, hoard.TransferVerifying, ""); err != nil {
			return err
		}
	}
	verify := hoard.VerifyTransferArgs{RunID: t.IngestionRunID, TransferID: t.ID}
	_, err := client.InsertTx(ctx, tx.Tx(), verify, withMaxAttempts(verify.InsertOpts(), maxAttempts))
	return err
}
