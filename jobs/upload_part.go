package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// UploadPartWorker runs UploadPartArgs: it posts one part of a transfer
// to the destination (re-sent from its source message, or uploaded from
// the spool), and the transfer's last part queues its verify job in the
// transaction that completes the job. A failure is its set's (outcome.go:
// recorded attempts, retried once per cycle).
type UploadPartWorker struct {
	worker[hoard.UploadPartArgs]
	db        *store.DB
	log       *slog.Logger
	platform  *platform
	transfers *transfers
	uploader  *uploader
	progress  *progress
	metrics   Metrics
}

func newUploadPartWorker(p *parts) *UploadPartWorker {
	return &UploadPartWorker{worker: worker[hoard.UploadPartArgs]{fail: p.fail}, db: p.db, log: p.log, platform: p.platform,
		transfers: p.transfers, uploader: p.uploader, progress: p.progress, metrics: p.catalog.metrics}
}

// Timeout implements river.Worker: uploads take as long as they take.
func (w *UploadPartWorker) Timeout(*river.Job[hoard.UploadPartArgs]) time.Duration { return -1 }

// Work implements river.Worker.
func (w *UploadPartWorker) Work(ctx context.Context, job *river.Job[hoard.UploadPartArgs]) error {
	return w.finish(ctx, job, w.work(ctx, job), w.transfers.failing(job.Args.TransferID, hoard.SkipUploadFailed))
}

func (w *UploadPartWorker) work(ctx context.Context, job *river.Job[hoard.UploadPartArgs]) error {
	db, a := w.db, job.Args
	t, err := db.FindTransfer(ctx, a.TransferID)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		// Gone: indexed, a duplicate, or replaced by a new transfer of the
		// same set (its retry, after this job failed an attempt while the
		// database was away) with part jobs of its own. Nothing is left
		// for this job, as for a transfer no longer publishing.
		w.log.Info("upload part: its transfer is gone; nothing to do", "transfer", a.TransferID, "part", a.PartNo)
		return nil
	}
	if err != nil {
		return fmt.Errorf("upload part: %w", err) // a failed attempt
	}
	if t.Status != hoard.TransferPublishing {
		return nil
	}
	part, err := db.FindTransferPart(ctx, t.ID, a.PartNo)
	if err != nil {
		return lookup(fmt.Errorf("upload part %d: %w", a.PartNo, err))
	}
	destID := part.DestMessageID
	if destID == 0 {
		wr, err := w.platform.writerOf(ctx, t.DestChannelID, t.AccountID)
		if err != nil {
			return err
		}
		if part.DestAfterID != 0 || job.Attempt > 1 {
			// An earlier attempt may have posted the part without recording
			// it: look before posting again.
			if destID, err = w.findPosted(ctx, wr, part); err != nil {
				return err
			}
		}
		if destID == 0 {
			after, err := db.FindNewestDestMessageID(ctx, t.DestChannelID)
			if err != nil {
				return err
			}
			if err := db.MarkTransferPartPosting(ctx, t.ID, part.PartNo, after); err != nil {
				return err
			}
			ft := w.progress.file(job.ID, t.IngestionRunID, t.SourceChannelID, t.SourceMessageID, t.Draft.FileName)
			if destID, err = w.post(ctx, t, part, wr, ft); isTooLarge(err) {
				return w.transfers.splitRefusedPart(ctx, job, t, part, wr, err)
			} else if err != nil {
				return err
			}
		}
	}
	return completeTx(ctx, db, job, func(tx *store.DB, client *river.Client[pgx.Tx]) error {
		remaining, err := tx.RecordTransferPart(ctx, t.ID, part.PartNo, destID)
		if err != nil || remaining > 0 {
			return err
		}
		if err := tx.SetTransferStatus(ctx, t.ID, hoard.TransferVerifying, ""); err != nil {
			return err
		}
		verify := hoard.VerifyTransferArgs{RunID: a.RunID, TransferID: t.ID}
		_, err = client.InsertTx(ctx, tx.Tx(), verify, withMaxAttempts(verify.InsertOpts(), job.MaxAttempts))
		return err
	})
}

// post re-sends the part's source message or uploads its byte range of the
// spool files, and returns the destination message id. ft is told which
// of the two it does.
func (w *UploadPartWorker) post(ctx context.Context, t *hoard.Transfer, part *hoard.TransferPart, wr *channelAccess, ft *fileTracker) (int64, error) {
	if part.ResendMessageID != 0 {
		ft.phase(ctx, hoard.PhaseForwarding, part.PartNo+1, t.PartsTotal, 0)
		maps, err := w.db.ListChannelMaps(ctx, t.SourceChannelID)
		if err != nil {
			return 0, err
		}
		ch, err := w.db.FindChannelByID(ctx, t.SourceChannelID)
		if err != nil {
			return 0, err
		}
		for i := range maps {
			if maps[i].AccountID != t.AccountID {
				continue
			}
			peer := peerOf(ch, &maps[i])
			msgs, err := wr.account.Messages(ctx, peer, []int{int(part.ResendMessageID)})
			if err != nil {
				return 0, err
			}
			if len(msgs) == 1 && msgs[0].Document != nil && msgs[0].Document.Size == part.Length {
				id, err := wr.account.Resend(ctx, wr.peer, peer, msgs[0], "")
				if err == nil {
					w.metrics.Resent(part.Length)
				}
				if !errors.Is(err, messenger.ErrProtected) {
					return int64(id), err
				}
			}
		}
		w.log.Info("source message cannot be re-sent; uploading instead", "part", part.Name)
	}
	return w.uploader.upload(ctx, t, part, wr, ft)
}

// findPosted looks in the destination, after the id recorded before an
// earlier attempt posted, for a document with the part's name and size
// that no package or other part holds; 0 when there is none.
func (w *UploadPartWorker) findPosted(ctx context.Context, wr *channelAccess, part *hoard.TransferPart) (int64, error) {
	msgs, err := wr.account.History(ctx, wr.peer, messenger.HistoryQuery{AfterID: int(part.DestAfterID)})
	if err != nil {
		return 0, err
	}
	for _, m := range msgs {
		if m.Document == nil || m.Document.FileName != part.Name || m.Document.Size != part.Length {
			continue
		}
		taken, err := w.db.IsDestMessageTaken(ctx, wr.channel.ID, int64(m.ID))
		if err != nil {
			return 0, err
		}
		if !taken {
			w.log.Info("found a part posted by an earlier attempt", "part", part.Name, "message", m.ID)
			return int64(m.ID), nil
		}
	}
	return 0, nil
}
