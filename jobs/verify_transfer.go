package jobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/archive"
	"github.com/hoard/hoard/store"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// VerifyTransferWorker runs VerifyTransferArgs: it reads a transfer's
// posted parts back from the spool, inspects the set and indexes its
// package in the transaction that completes the job. A failure is its
// set's (outcome.go: recorded attempts, retried once per cycle).
type VerifyTransferWorker struct {
	worker[hoard.VerifyTransferArgs]
	db        *store.DB
	log       *slog.Logger
	progress  *progress
	inspector *inspector
	catalog   *catalog
	notices   *notices
	spool     *spool
	transfers *transfers
}

func newVerifyTransferWorker(p *parts) *VerifyTransferWorker {
	return &VerifyTransferWorker{worker: worker[hoard.VerifyTransferArgs]{fail: p.fail}, db: p.db, log: p.log, progress: p.progress,
		inspector: p.inspector, catalog: p.catalog, notices: p.notices, spool: p.spool, transfers: p.transfers}
}

// Timeout implements river.Worker: re-hashing reads the whole file.
func (w *VerifyTransferWorker) Timeout(*river.Job[hoard.VerifyTransferArgs]) time.Duration { return -1 }

// Work implements river.Worker.
func (w *VerifyTransferWorker) Work(ctx context.Context, job *river.Job[hoard.VerifyTransferArgs]) error {
	return w.finish(ctx, job, w.work(ctx, job), w.transfers.failing(job.Args.TransferID, ""))
}

// work runs one verification of a transfer as its steps: load the
// transfer and its posted parts, re-hash them (verifyHash), inspect the
// spool, index the package in the transaction that completes the job
// (indexTransfer), then what follows the commit (indexCommitted). A
// transfer that is not VERIFYING has nothing to verify.
func (w *VerifyTransferWorker) work(ctx context.Context, job *river.Job[hoard.VerifyTransferArgs]) error {
	db := w.db
	t, err := db.FindTransfer(ctx, job.Args.TransferID)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		// Gone: indexed and removed by an earlier run of this job whose
		// completion was lost (the database went away), or abandoned.
		// Either way there is nothing to verify, as below.
		return nil
	}
	if err != nil {
		return lookup(fmt.Errorf("verify transfer: %w", err))
	}
	if t.Status != hoard.TransferVerifying {
		return nil
	}
	parts, err := db.ListTransferParts(ctx, t.ID)
	if err != nil {
		return err
	}
	act := w.progress.run(t.IngestionRunID)
	act.set(ctx, hoard.RunActivity{Activity: "Verifying " + t.Draft.FileName, Step: "hashing", ChannelID: t.SourceChannelID,
		File: t.Draft.FileName, TotalBytes: t.Draft.FileSize})
	ft := w.progress.file(job.ID, t.IngestionRunID, t.SourceChannelID, t.SourceMessageID, t.Draft.FileName)
	ft.phase(ctx, hoard.PhaseVerifying, 0, 0, t.Draft.FileSize)
	mismatch, err := w.verifyHash(ctx, t, parts, ft)
	if err != nil {
		return err
	}
	ft.phase(ctx, hoard.PhaseIndexing, 0, 0, 0)
	p, files, err := w.inspector.inspect(ctx, t)
	if err != nil {
		return err
	}
	setPosted(&p, t, parts)
	created, duplicate, err := w.indexTransfer(ctx, job, t, &p, files, mismatch)
	if err != nil {
		return err
	}
	w.indexCommitted(ctx, t, created, duplicate)
	w.log.Info("indexed", "file", p.FileName, "package", p.ID, "created", created, "duplicate", duplicate,
		"parts", len(parts), "files", len(files))
	return nil
}

// verifyHash makes one pass over the posted part set, in order, read from
// the spool: rule 6 (the parts together equal the original) and rule 8
// (the files on disk are what was downloaded) in one read. A source set
// that reads back with another hash is indexed as posted and flagged: its
// package is what a repair downloads and publishes again (into the same
// row), and mismatch is the hash read back ("" when it matches). Any other
// transfer that reads back differently fails (hashMismatch), its uploaded
// parts cleared first: what was uploaded came from these bytes, so a retry
// must not take those posts up (resumable); the audit reports them as
// orphaned.
func (w *VerifyTransferWorker) verifyHash(ctx context.Context, t *hoard.Transfer, parts []hoard.TransferPart, ft *fileTracker) (mismatch string, err error) {
	sum, err := hashRanges(ctx, t.SpoolPaths, parts, ft)
	if err != nil {
		return "", failedAt(hoard.SkipHashMismatch, err)
	}
	if sum != t.ContentHash && t.ManualUploadFileID == 0 && t.SourceMessageID != 0 {
		// A source set is indexed as posted and flagged: its package is
		// what a repair downloads and publishes again (into the same row).
		return sum, nil
	} else if sum != t.ContentHash {
		// What was uploaded came from these bytes: a retry must not take
		// those posts up (resumable); the audit reports them as orphaned.
		for _, part := range parts {
			if part.ResendMessageID == 0 && part.DestMessageID != 0 {
				if err := w.db.ClearTransferPart(ctx, t.ID, part.PartNo); err != nil {
					return "", err
				}
			}
		}
		return "", w.hashMismatch(ctx, t, sum)
	}
	return "", nil
}

// setPosted records on the inspected package p where transfer t posted it:
// the destination channel and the parts' messages in part order, the first
// being the package's message.
func setPosted(p *hoard.Package, t *hoard.Transfer, parts []hoard.TransferPart) {
	p.DestChannelID = t.DestChannelID
	p.DestMessageIDs = make([]int64, len(parts))
	for i, part := range parts {
		p.DestMessageIDs[i] = part.DestMessageID
	}
	p.DestMessageID = p.DestMessageIDs[0]
	p.PartCount = len(parts)
}

// indexTransfer indexes package p with its files in the transaction that
// completes the job and deletes transfer t: the package is new (created),
// completed in place (a repair), or — when the same bytes were published
// meanwhile from elsewhere — not indexed at all (duplicate), the earlier
// post claiming the other package. The same transaction removes the
// set's skipped record, completes a manual upload's file, counts the run
// and enqueues what follows (afterIndexed, group_channel,
// notify_subscribers), so none of it happens without the others.
func (w *VerifyTransferWorker) indexTransfer(ctx context.Context, job *river.Job[hoard.VerifyTransferArgs], t *hoard.Transfer, p *hoard.Package,
	files []hoard.PackageFile, mismatch string) (created, duplicate bool, err error) {
	err = completeTx(ctx, w.db, job, func(tx *store.DB, client *river.Client[pgx.Tx]) error {
		// The draft's source as it is now: an earlier copy of the same
		// bytes may have claimed it (store.ClaimTransferSource) since t
		// was read; the lock makes later claims wait for the package.
		cur, err := tx.FindTransferForUpdate(ctx, t.ID)
		if err != nil {
			return err
		}
		p.SetSource(cur.Draft.Source(""))
		p.Tags = cur.Draft.Tags
		created, err = tx.IndexPackage(ctx, p, files)
		if hoard.ErrorCode(err) == hoard.ECONFLICT {
			// The same bytes were published meanwhile from elsewhere:
			// dedup (d) after the fact; the earlier post is the source.
			duplicate = true
			other, err := tx.FindPublishedByContentHash(ctx, t.ContentHash)
			if err != nil {
				return err
			}
			if _, err := tx.ClaimPackageSource(ctx, other.ID, draftPost(cur.Draft)); err != nil {
				return err
			}
			if err := tx.DeleteTransfer(ctx, t.ID); err != nil {
				return err
			}
			return addCounters(ctx, tx, t.IngestionRunID, hoard.RunCounters{Duplicates: 1})
		}
		if err != nil {
			return err
		}
		if t.SourceChannelID != 0 && (t.SourceChannelID != p.SourceChannelID || t.SourceMessageID != p.SourceMessageID) {
			// An earlier post claimed the draft: the skipped record of
			// this transfer's own set goes, as IndexPackage's does.
			if err := tx.DeleteSkippedBySource(ctx, t.SourceChannelID, t.SourceMessageID); err != nil && hoard.ErrorCode(err) != hoard.ENOTFOUND {
				return err
			}
		}
		if t.ManualUploadFileID != 0 {
			if err := tx.SetManualUploadFileStatus(ctx, t.ManualUploadFileID, hoard.UploadCompleted, "", t.ContentHash, p.ID); err != nil {
				return err
			}
		}
		if err := tx.DeleteTransfer(ctx, t.ID); err != nil {
			return err
		}
		if err := w.afterIndexed(ctx, tx, client, t, p, created, mismatch); err != nil {
			return err
		}
		if p.SourceChannelID != 0 {
			if _, err := client.InsertTx(ctx, tx.Tx(), hoard.GroupChannelArgs{ChannelID: p.SourceChannelID}, nil); err != nil {
				return err
			}
		}
		if created {
			if _, err := client.InsertTx(ctx, tx.Tx(), hoard.NotifySubscribersArgs{}, nil); err != nil {
				return err
			}
		}
		// New, or repaired in place: published in this run either way.
		return addCounters(ctx, tx, t.IngestionRunID, hoard.RunCounters{Ingested: 1})
	})
	return created, duplicate, err
}

// indexCommitted does what follows the commit of an indexed transfer t,
// none of which a failure may undo: the metrics are told, the spool goes
// (unless the transfer keeps its files) and a manual upload's file is done.
func (w *VerifyTransferWorker) indexCommitted(ctx context.Context, t *hoard.Transfer, created, duplicate bool) {
	w.catalog.countIndexed(created, duplicate)
	if !t.KeepFiles && len(t.SpoolPaths) > 0 {
		w.spool.remove(filepath.Dir(t.SpoolPaths[0]))
	}
	if t.ManualUploadFileID != 0 {
		w.catalog.finishUploadOf(ctx, t.ManualUploadFileID)
	}
}

// afterIndexed does, in the transaction that indexed p, what a repair and a
// flagged publication need: a package completed in place (a repair) that
// has stale posts gets the job that deletes them, now that its new posts
// are verified; a source set whose parts read back with another hash
// (mismatch, SPEC rule 8) gets its HASH_MISMATCH notification, which
// carries the package so that a repair can publish it again.
func (w *VerifyTransferWorker) afterIndexed(ctx context.Context, tx *store.DB, client *river.Client[pgx.Tx], t *hoard.Transfer,
	p *hoard.Package, created bool, mismatch string) error {
	if !created {
		stale, err := tx.ListStalePosts(ctx, p.ID)
		if err != nil {
			return err
		}
		if len(stale) > 0 {
			if _, err := client.InsertTx(ctx, tx.Tx(), hoard.DeleteStalePostsArgs{PackageID: p.ID}, nil); err != nil {
				return err
			}
		}
	}
	if mismatch == "" {
		return nil
	}
	return w.notices.postedMismatch(ctx, tx, t, p, mismatch)
}

// hashMismatch reports a manual upload's file whose bytes differ from the
// hash taken when it was read: HASH_MISMATCH (once per file), nothing
// indexed.
func (w *VerifyTransferWorker) hashMismatch(ctx context.Context, t *hoard.Transfer, got string) error {
	err := hoard.Errorf(hoard.EINVALID, "hash mismatch: %s was downloaded as %s but the posted parts read back as %s",
		t.Draft.FileName, t.ContentHash, got)
	w.notices.transferMismatch(ctx, t, got, err.Message)
	return failedAt(hoard.SkipHashMismatch, err)
}

// hashRanges hashes the parts' byte ranges of the spool files in part
// order, telling ft (when set) the bytes hashed.
func hashRanges(ctx context.Context, paths []string, parts []hoard.TransferPart, ft *fileTracker) (string, error) {
	set, err := archive.OpenParts(paths...)
	if err != nil {
		return "", err
	}
	defer set.Close()
	h := sha256.New()
	var w io.Writer = h
	if ft != nil {
		w = io.MultiWriter(h, &progressWriter{ctx: ctx, f: ft})
	}
	buf := make([]byte, 1<<20)
	for _, p := range parts {
		r := set.Section(archive.Range{Name: p.Name, Offset: p.Offset, Length: p.Length})
		if _, err := io.CopyBuffer(w, ctxReader{ctx, r}, buf); err != nil {
			return "", fmt.Errorf("re-hash %s: %w", p.Name, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ctxReader stops a long read when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
