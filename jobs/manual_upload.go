package jobs

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/archive"
	"github.com/hoard/hoard/store"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// ManualUploadWorker runs ManualUploadArgs: the worker half of SPEC "Manual
// upload". Each file is hashed (one read), de-duplicated by content,
// planned (split above the account's limit) and handed to upload_part
// jobs; verify indexes it and marks it COMPLETED. Failures are per file and
// visible on the file's row; the upload ends COMPLETED, PARTIAL or FAILED
// once every file is final, and several indexed files form one group. A
// published file stays on the shared volume for Deps.UploadRetention
// (the clean-up removes it), a duplicate of the catalog is removed at once,
// a failed one stays until its upload is retried or deleted.
type ManualUploadWorker struct {
	worker[hoard.ManualUploadArgs]
	db        *store.DB
	log       *slog.Logger
	platform  *platform
	transfers *transfers
	catalog   *catalog
	// uploadDir is UPLOAD_DIR; maxAttempts the attempts of the part jobs
	// (WORKER_MAX_SKIP_ATTEMPTS).
	uploadDir   string
	maxAttempts int
}

func newManualUploadWorker(p *parts) *ManualUploadWorker {
	return &ManualUploadWorker{worker: worker[hoard.ManualUploadArgs]{fail: p.fail}, db: p.db, log: p.log, platform: p.platform,
		transfers: p.transfers, catalog: p.catalog, uploadDir: p.cfg.UploadDir, maxAttempts: p.cfg.MaxSkipAttempts}
}

// Timeout implements river.Worker: hashing reads whole files.
func (w *ManualUploadWorker) Timeout(*river.Job[hoard.ManualUploadArgs]) time.Duration { return -1 }

// Work implements river.Worker. A failure of the upload as a whole is
// retried; the last one fails its unfinished files (uploadSubject), so no
// upload is ever left PROCESSING.
func (w *ManualUploadWorker) Work(ctx context.Context, job *river.Job[hoard.ManualUploadArgs]) error {
	up, err := w.work(ctx, job)
	var subj subject
	if up != nil {
		subj = &uploadSubject{w: w, up: up}
	}
	return w.finish(ctx, job, err, subj)
}

// work processes the upload's files; up is nil until the upload is read.
func (w *ManualUploadWorker) work(ctx context.Context, job *river.Job[hoard.ManualUploadArgs]) (*hoard.ManualUpload, error) {
	db := w.db
	up, err := db.FindManualUpload(ctx, job.Args.UploadID)
	if err != nil {
		return nil, lookup(fmt.Errorf("manual upload %d: %w", job.Args.UploadID, err))
	}
	if up.Status == hoard.UploadUploading {
		return nil, river.JobSnooze(5 * time.Second) // the web is still receiving the files
	}
	if up.FinishedAt != nil {
		return up, nil // finished by an earlier attempt; a retry queues a job of its own
	}
	if err := db.SetManualUploadStatus(ctx, up.ID, hoard.UploadProcessing, ""); err != nil {
		return up, err
	}
	// Nothing set up to publish to: the files fail now, saying what to set
	// up (the upload's retry button takes them up later).
	if err := db.CheckPublishTarget(ctx); hoard.ErrorCode(err) == hoard.EINVALID {
		return up, w.failUpload(ctx, up, hoard.ErrorMessage(err))
	}
	wr, err := w.platform.writer(ctx, 0)
	if err != nil {
		return up, fmt.Errorf("manual upload %d: %w", up.ID, err)
	}
	for _, f := range up.Files {
		if f.Status == hoard.UploadCompleted || f.Status == hoard.UploadFailed {
			continue
		}
		if err := w.processManualFile(ctx, job, f, wr); err != nil {
			if ctx.Err() != nil {
				return up, ctx.Err()
			}
			if errors.Is(err, errPartJobUnfinished) {
				return up, err // a retry right after the failure: a brief wait (outcome.go)
			}
			w.log.Warn("manual upload file failed", "upload", up.ID, "file", f.FileName, "err", err)
			if serr := db.SetManualUploadFileStatus(ctx, f.ID, hoard.UploadFailed, truncate(err.Error(), 2000), "", 0); serr != nil {
				return up, serr
			}
		}
	}
	return up, w.catalog.finishUpload(ctx, up.ID)
}

// uploadSubject is a manual upload as the subject of its job's failures:
// the final one fails every unfinished file with its reason and ends the
// upload (failUpload), which raises UPLOAD_FAILED.
type uploadSubject struct {
	w  *ManualUploadWorker
	up *hoard.ManualUpload
}

// failed implements subject.
func (s *uploadSubject) failed(ctx context.Context, f failure) error {
	if !f.final {
		return nil
	}
	return s.w.failUpload(ctx, s.up, truncate(f.err.Error(), 2000))
}

// processManualFile hands one file to its publication: a new one, or on a
// retry its FAILED one taken up again (the parts it posted stay, the others
// are posted); a publication in flight is left to its jobs.
func (w *ManualUploadWorker) processManualFile(ctx context.Context, job *river.Job[hoard.ManualUploadArgs], f hoard.ManualUploadFile, wr *channelAccess) error {
	t, err := w.db.FindTransferByUploadFile(ctx, f.ID)
	switch {
	case hoard.ErrorCode(err) == hoard.ENOTFOUND:
		return w.startManualFile(ctx, job, f, wr)
	case err != nil:
		return err
	case t.Status != hoard.TransferFailed:
		return nil
	}
	parts, present, err := w.transfers.postedParts(ctx, t)
	if err != nil {
		return err
	}
	return w.db.InTx(ctx, func(tx *store.DB) error {
		if err := tx.SetManualUploadFileStatus(ctx, f.ID, hoard.UploadProcessing, "", "", 0); err != nil {
			return err
		}
		return w.transfers.continueTransfer(ctx, tx, river.ClientFromContext[pgx.Tx](ctx), t, parts, present, w.maxAttempts, true)
	})
}

// failUpload ends every unfinished file of an upload FAILED with reason,
// then the upload (finishUpload).
func (w *ManualUploadWorker) failUpload(ctx context.Context, up *hoard.ManualUpload, reason string) error {
	for _, f := range up.Files {
		if f.Status == hoard.UploadCompleted || f.Status == hoard.UploadFailed {
			continue
		}
		if err := w.db.SetManualUploadFileStatus(ctx, f.ID, hoard.UploadFailed, reason, "", 0); err != nil {
			return err
		}
	}
	return w.catalog.finishUpload(ctx, up.ID)
}

// startManualFile hashes one file and hands it to upload_part jobs (or
// completes it at once when its content is already in the catalog).
func (w *ManualUploadWorker) startManualFile(ctx context.Context, job *river.Job[hoard.ManualUploadArgs], f hoard.ManualUploadFile, wr *channelAccess) error {
	db := w.db
	if !filepath.IsLocal(f.StoredPath) {
		return hoard.Errorf(hoard.EINVALID, "stored path of %s is not inside UPLOAD_DIR", f.FileName)
	}
	p := filepath.Join(w.uploadDir, f.StoredPath)
	if err := db.SetManualUploadFileStatus(ctx, f.ID, hoard.UploadProcessing, "", "", 0); err != nil {
		return err
	}
	sniffed := archive.NewSniffer(0)
	sum, err := archive.HashFilesObserved(ctx, archive.HashState{}, sniffed, p)
	if err != nil {
		return fmt.Errorf("hash %s: %w", f.FileName, err)
	}
	hash := hex.EncodeToString(sum)
	if dup, err := db.FindPublishedByContentHash(ctx, hash); err == nil {
		return w.duplicateManualFile(ctx, f, "Already in the catalog as "+dup.FileName+"; nothing was uploaded.", hash, dup.ID)
	}
	det, err := detectType([]string{p}, f.FileSize, f.FileName, sniffed)
	if err != nil {
		return fmt.Errorf("read %s: %w", f.FileName, err)
	}
	typ := catalogType(det.Type, f.FileName)
	ranges, err := archive.PlanSplit(f.FileName, w.transfers.splitLimitFor(ctx, wr, f.FileSize), []archive.PartInfo{{Name: f.FileName, Size: f.FileSize}})
	if err != nil {
		return err
	}
	parts := make([]hoard.TransferPart, len(ranges))
	for i, r := range ranges {
		parts[i] = hoard.TransferPart{Name: r.Name, Offset: r.Offset, Length: r.Length}
	}
	draft := hoard.Package{FileName: f.FileName, FileSize: f.FileSize, ArchiveType: typ, ContentHash: hash,
		PartCount: len(parts), Creator: archive.CreatorFromFileName(f.FileName), SourcePostedAt: f.CreatedAt,
		InspectionNote: unlistableNote(det, typ)}
	t := &hoard.Transfer{ManualUploadFileID: f.ID, AccountID: wr.m.AccountID, DestChannelID: wr.channel.ID,
		SpoolPaths: []string{p}, KeepFiles: true, ContentHash: hash, Draft: draft}
	err = db.InTx(ctx, func(tx *store.DB) error {
		if err := tx.CreateTransfer(ctx, t, parts); err != nil {
			return err
		}
		return queueParts(ctx, tx, 0, t.ID, partNumbers(len(parts)), w.maxAttempts)
	})
	if errors.Is(err, store.ErrSameContent) {
		return w.duplicateManualFile(ctx, f, "The same file is being published already; nothing was uploaded.", hash, 0)
	}
	return err
}

// duplicateManualFile completes a file whose content the catalog has (or
// is publishing) already, and removes it from UPLOAD_DIR at once: nothing
// of it is worth keeping. A file that cannot be removed now stays counted
// against its owner's quota until the retention's clean-up removes it.
func (w *ManualUploadWorker) duplicateManualFile(ctx context.Context, f hoard.ManualUploadFile, msg, hash string, packageID int64) error {
	if err := w.db.SetManualUploadFileStatus(ctx, f.ID, hoard.UploadCompleted, msg, hash, packageID); err != nil {
		return err
	}
	if err := w.catalog.removeUploadFile(ctx, f); err != nil {
		w.log.Warn("remove a duplicate upload file", "file", f.ID, "err", err)
	}
	return nil
}
