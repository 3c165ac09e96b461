package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// transfers plans and continues the publications of sets (transfers):
// the split limit of the account that posts (premium.go), the upload_part
// jobs of a transfer, which of its posts are still there, and the
// transfer's failure as its set's.
type transfers struct {
	db       *store.DB
	log      *slog.Logger
	platform *platform
	spool    *spool
	catalog  *catalog
	// splitThreshold is Deps.SplitThreshold (accounts without Premium);
	// maxAttempts is Deps.MaxSkipAttempts, the attempts of the part jobs
	// of a publication no ingest_message job started.
	splitThreshold int64
	maxAttempts    int
}

// queueParts inserts, in tx, an upload_part job (maxAttempts attempts) for
// each of the numbered parts of transfer transferID of run runID.
func queueParts(ctx context.Context, tx *store.DB, runID, transferID int64, partNos []int, maxAttempts int) error {
	params := make([]river.InsertManyParams, len(partNos))
	for i, no := range partNos {
		args := hoard.UploadPartArgs{RunID: runID, TransferID: transferID, PartNo: no}
		params[i] = river.InsertManyParams{Args: args, InsertOpts: withMaxAttempts(args.InsertOpts(), maxAttempts)}
	}
	_, err := river.ClientFromContext[pgx.Tx](ctx).InsertManyTx(ctx, tx.Tx(), params)
	return err
}

// partNumbers are 0 … n-1.
func partNumbers(n int) []int {
	nos := make([]int, n)
	for i := range nos {
		nos[i] = i
	}
	return nos
}

// transferSubject is a transfer as the subject of its jobs' failures
// (upload_part, verify): the final failure makes the transfer FAILED; each
// failure is its set's — the source set's skipped record (skippedSet; the
// spool goes with the final one unless the transfer keeps its files), or
// on the final failure the manual upload file's FAILED.
type transferSubject struct {
	d      *transfers
	id     int64
	reason hoard.SkipReason
}

// failing is the subject of the failures of transfer id's jobs; reason is
// the skip reason of a failure no inner step tagged ("" for reasonOf's).
func (d *transfers) failing(id int64, reason hoard.SkipReason) *transferSubject {
	return &transferSubject{d: d, id: id, reason: reason}
}

// failed implements subject.
func (s *transferSubject) failed(ctx context.Context, f failure) error {
	d := s.d
	t, err := d.db.FindTransfer(ctx, s.id)
	if err != nil {
		return fmt.Errorf("transfer %d failed: %w", s.id, err)
	}
	if s.reason != "" {
		f.err = failedAt(s.reason, f.err)
	}
	if f.final {
		if err := d.db.SetTransferStatus(ctx, t.ID, hoard.TransferFailed, truncate(f.err.Error(), 2000)); err != nil {
			d.log.Error("mark transfer failed", "transfer", t.ID, "err", err)
		}
	}
	if t.ManualUploadFileID != 0 {
		if f.final {
			d.catalog.uploadFileFailed(ctx, t.ManualUploadFileID, f.err)
		}
		return nil
	}
	rec := hoard.SkippedPackage{SourceChannelID: t.SourceChannelID, SourceMessageID: t.SourceMessageID,
		SourceTopicID: t.Draft.SourceTopicID, FileName: t.Draft.FileName, FileSize: t.Draft.FileSize,
		PartCount: t.PartsTotal, Reason: reasonOf(f.err)}
	err = d.catalog.skipped(rec, t.IngestionRunID).failed(ctx, f)
	if f.final && !t.KeepFiles && len(t.SpoolPaths) > 0 {
		d.spool.remove(filepath.Dir(t.SpoolPaths[0]))
	}
	return err
}

// postedParts returns a transfer's parts and which of their recorded
// destination messages are still there (one request for all of them).
func (d *transfers) postedParts(ctx context.Context, t *hoard.Transfer) ([]hoard.TransferPart, map[int64]bool, error) {
	parts, err := d.db.ListTransferParts(ctx, t.ID)
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
	wr, err := d.platform.writerOf(ctx, t.DestChannelID, t.AccountID)
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
func (d *transfers) continueTransfer(ctx context.Context, tx *store.DB, client *river.Client[pgx.Tx], t *hoard.Transfer,
	parts []hoard.TransferPart, present map[int64]bool, maxAttempts int, resumingFailed bool) error {
	missing := 0
	for _, p := range parts {
		if p.DestMessageID != 0 && present[p.DestMessageID] {
			continue
		}
		if p.DestMessageID != 0 {
			d.log.Warn("posted part vanished from the destination; posting again", "part", p.Name, "message", p.DestMessageID)
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
