package jobs

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
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
	river.WorkerDefaults[hoard.ManualUploadArgs]
	deps Deps
}

// Timeout implements river.Worker: hashing reads whole files.
func (w *ManualUploadWorker) Timeout(*river.Job[hoard.ManualUploadArgs]) time.Duration { return -1 }

// Work implements river.Worker.
func (w *ManualUploadWorker) Work(ctx context.Context, job *river.Job[hoard.ManualUploadArgs]) error {
	d, db := &w.deps, w.deps.DB
	up, err := db.FindManualUpload(ctx, job.Args.UploadID)
	if err != nil {
		return jobOutcome(fmt.Errorf("manual upload %d: %w", job.Args.UploadID, err))
	}
	if up.Status == hoard.UploadUploading {
		return river.JobSnooze(5 * time.Second) // the web is still receiving the files
	}
	if up.FinishedAt != nil {
		return nil // finished by an earlier attempt; a retry queues a job of its own
	}
	if err := db.SetManualUploadStatus(ctx, up.ID, hoard.UploadProcessing, ""); err != nil {
		return err
	}
	// Nothing set up to publish to: the files fail now, saying what to set
	// up (the upload's retry button takes them up later). Other failures
	// are retried, and fail the files on the last attempt: never an upload
	// left PROCESSING.
	if err := db.CheckPublishTarget(ctx); hoard.ErrorCode(err) == hoard.EINVALID {
		return d.failUpload(ctx, up, hoard.ErrorMessage(err))
	}
	wr, err := d.writer(ctx, db, 0)
	if err != nil {
		if serr, ok := snoozeIfLimited(err); ok {
			return serr // another process holds the writer's session
		}
		if job.Attempt >= job.MaxAttempts {
			return d.failUpload(ctx, up, truncate(err.Error(), 2000))
		}
		return fmt.Errorf("manual upload %d: %w", up.ID, err)
	}
	for _, f := range up.Files {
		if f.Status == hoard.UploadCompleted || f.Status == hoard.UploadFailed {
			continue
		}
		if err := d.processManualFile(ctx, job, f, wr); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if serr, ok := snoozeIfPartJobUnfinished(err); ok {
				return serr // a retry right after the failure
			}
			d.Logger.Warn("manual upload file failed", "upload", up.ID, "file", f.FileName, "err", err)
			if serr := db.SetManualUploadFileStatus(ctx, f.ID, hoard.UploadFailed, truncate(err.Error(), 2000), "", 0); serr != nil {
				return serr
			}
		}
	}
	return d.finishUpload(ctx, up.ID)
}

// processManualFile hands one file to its publication: a new one, or on a
// retry its FAILED one taken up again (the parts it posted stay, the others
// are posted); a publication in flight is left to its jobs.
func (d *Deps) processManualFile(ctx context.Context, job *river.Job[hoard.ManualUploadArgs], f hoard.ManualUploadFile, wr *channelAccess) error {
	t, err := d.DB.FindTransferByUploadFile(ctx, f.ID)
	switch {
	case hoard.ErrorCode(err) == hoard.ENOTFOUND:
		return d.startManualFile(ctx, job, f, wr)
	case err != nil:
		return err
	case t.Status != hoard.TransferFailed:
		return nil
	}
	parts, present, err := d.postedParts(ctx, d.DB, t)
	if err != nil {
		return err
	}
	return d.DB.InTx(ctx, func(tx *store.DB) error {
		if err := tx.SetManualUploadFileStatus(ctx, f.ID, hoard.UploadProcessing, "", "", 0); err != nil {
			return err
		}
		return d.continueTransfer(ctx, tx, river.ClientFromContext[pgx.Tx](ctx), t, parts, present, d.MaxSkipAttempts, true)
	})
}

// failUpload ends every unfinished file of an upload FAILED with reason,
// then the upload (finishUpload).
func (d *Deps) failUpload(ctx context.Context, up *hoard.ManualUpload, reason string) error {
	for _, f := range up.Files {
		if f.Status == hoard.UploadCompleted || f.Status == hoard.UploadFailed {
			continue
		}
		if err := d.DB.SetManualUploadFileStatus(ctx, f.ID, hoard.UploadFailed, reason, "", 0); err != nil {
			return err
		}
	}
	return d.finishUpload(ctx, up.ID)
}

// startManualFile hashes one file and hands it to upload_part jobs (or
// completes it at once when its content is already in the catalog).
func (d *Deps) startManualFile(ctx context.Context, job *river.Job[hoard.ManualUploadArgs], f hoard.ManualUploadFile, wr *channelAccess) error {
	db := d.DB
	if !filepath.IsLocal(f.StoredPath) {
		return hoard.Errorf(hoard.EINVALID, "stored path of %s is not inside UPLOAD_DIR", f.FileName)
	}
	p := filepath.Join(d.UploadDir, f.StoredPath)
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
		return d.duplicateManualFile(ctx, f, "Already in the catalog as "+dup.FileName+"; nothing was uploaded.", hash, dup.ID)
	}
	det, err := detectType([]string{p}, f.FileSize, f.FileName, sniffed)
	if err != nil {
		return fmt.Errorf("read %s: %w", f.FileName, err)
	}
	typ := catalogType(det.Type, f.FileName)
	ranges, err := archive.PlanSplit(f.FileName, d.splitLimitFor(ctx, wr, f.FileSize), []archive.PartInfo{{Name: f.FileName, Size: f.FileSize}})
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
		client := river.ClientFromContext[pgx.Tx](ctx)
		params := make([]river.InsertManyParams, len(parts))
		for i := range parts {
			args := hoard.UploadPartArgs{TransferID: t.ID, PartNo: i}
			params[i] = river.InsertManyParams{Args: args, InsertOpts: withMaxAttempts(args.InsertOpts(), d.MaxSkipAttempts)}
		}
		_, err := client.InsertManyTx(ctx, tx.Tx(), params)
		return err
	})
	if errors.Is(err, store.ErrSameContent) {
		return d.duplicateManualFile(ctx, f, "The same file is being published already; nothing was uploaded.", hash, 0)
	}
	return err
}

// duplicateManualFile completes a file whose content the catalog has (or
// is publishing) already, and removes it from UPLOAD_DIR at once: nothing
// of it is worth keeping. A file that cannot be removed now stays counted
// against its owner's quota until the retention's clean-up removes it.
func (d *Deps) duplicateManualFile(ctx context.Context, f hoard.ManualUploadFile, msg, hash string, packageID int64) error {
	if err := d.DB.SetManualUploadFileStatus(ctx, f.ID, hoard.UploadCompleted, msg, hash, packageID); err != nil {
		return err
	}
	if err := d.removeUploadFile(ctx, f); err != nil {
		d.Logger.Warn("remove a duplicate upload file", "file", f.ID, "err", err)
	}
	return nil
}

// manualFileDone is called after verify indexed a manual upload file.
func (d *Deps) manualFileDone(ctx context.Context, t *hoard.Transfer) {
	d.finishManualFile(ctx, t.ManualUploadFileID)
}

// manualFileFailed records a manual upload file's final failure.
func (d *Deps) manualFileFailed(ctx context.Context, t *hoard.Transfer, cause error) {
	if err := d.DB.SetManualUploadFileStatus(ctx, t.ManualUploadFileID, hoard.UploadFailed, truncate(cause.Error(), 2000), "", 0); err != nil {
		d.Logger.Error("mark upload file failed", "file", t.ManualUploadFileID, "err", err)
	}
	d.finishManualFile(ctx, t.ManualUploadFileID)
}

func (d *Deps) finishManualFile(ctx context.Context, fileID int64) {
	f, err := d.DB.FindManualUploadFile(ctx, fileID)
	if err == nil {
		err = d.finishUpload(ctx, f.UploadID)
	}
	if err != nil {
		d.Logger.Error("finish manual upload", "file", fileID, "err", err)
	}
}

// finishUpload completes an upload once every file is final: COMPLETED when
// all files are in the catalog, PARTIAL when some failed, FAILED when all
// did; two or more new packages form a group named after the upload.
func (d *Deps) finishUpload(ctx context.Context, uploadID int64) error {
	return d.DB.InTx(ctx, func(tx *store.DB) error {
		up, err := tx.FindManualUpload(ctx, uploadID)
		if err != nil {
			return err
		}
		if up.FinishedAt != nil {
			return nil
		}
		var ok, failed int
		var pkgs []int64
		var names []string
		for _, f := range up.Files {
			switch f.Status {
			case hoard.UploadCompleted:
				ok++
				if f.PackageID != 0 {
					pkgs = append(pkgs, f.PackageID)
					names = append(names, f.FileName)
				}
			case hoard.UploadFailed:
				failed++
			default:
				return nil // still working
			}
		}
		status, msg := hoard.UploadCompleted, ""
		switch {
		case ok == 0:
			status, msg = hoard.UploadFailed, "No file could be uploaded: "+firstFailure(up.Files)
		case failed > 0:
			status, msg = hoard.UploadPartial, fmt.Sprintf("%d of %d files failed: %s", failed, len(up.Files), firstFailure(up.Files))
		}
		if failed > 0 {
			if err := uploadFailedNotice(ctx, tx, up, msg); err != nil {
				return err
			}
		}
		if len(pkgs) >= 2 {
			name := up.GroupName
			if name == "" {
				name = commonName(names)
			}
			g, err := tx.CreateManualGroup(ctx, name, pkgs)
			if err != nil {
				d.Logger.Warn("group the files of an upload", "upload", up.ID, "err", err)
			} else if err := tx.SetManualUploadGroup(ctx, up.ID, g.ID); err != nil {
				return err
			}
		}
		return tx.SetManualUploadStatus(ctx, up.ID, status, msg)
	})
}

// firstFailure is the reason the first failed file of an upload gives.
func firstFailure(files []hoard.ManualUploadFile) string {
	for _, f := range files {
		if f.Status == hoard.UploadFailed {
			return truncate(f.ErrorMessage, 1500)
		}
	}
	return ""
}

// uploadFailedNotice raises UPLOAD_FAILED for an upload that ends with
// failed files (SPEC rule 14), once while it is live: the upload's page has
// the retry button.
func uploadFailedNotice(ctx context.Context, tx *store.DB, up *hoard.ManualUpload, msg string) error {
	c, _ := json.Marshal(map[string]any{"upload_id": up.ID})
	title := fmt.Sprintf("Upload failed: #%d", up.ID)
	if up.GroupName != "" {
		title += " " + up.GroupName
	}
	_, err := tx.CreateNotification(ctx, &hoard.Notification{Type: hoard.NotifyUploadFailed, Severity: hoard.SeverityError,
		Title: title, Message: msg + " Retry from the upload's page.", Context: c,
		DedupKey: fmt.Sprintf("%s:upload:%d", hoard.NotifyUploadFailed, up.ID)})
	return err
}

// commonName names a group of uploaded files: their common prefix, trimmed
// of separators, or the first file's name without extension.
func commonName(names []string) string {
	prefix := names[0]
	for _, n := range names[1:] {
		for !strings.HasPrefix(n, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	prefix = strings.TrimRight(prefix, " -_.([")
	if len([]rune(prefix)) >= 3 {
		return prefix
	}
	return strings.TrimSuffix(names[0], filepath.Ext(names[0]))
}
