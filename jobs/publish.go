package jobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/archive"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// uploadTries is how many times one attempt resumes a failed upload.
const uploadTries = 3

// UploadPartWorker runs UploadPartArgs.
type UploadPartWorker struct {
	river.WorkerDefaults[hoard.UploadPartArgs]
	deps Deps
}

// Timeout implements river.Worker: uploads take as long as they take.
func (w *UploadPartWorker) Timeout(*river.Job[hoard.UploadPartArgs]) time.Duration { return -1 }

// NextRetry implements river.Worker: a quick first retry, then one attempt
// per cycle (nextAttemptAt).
func (w *UploadPartWorker) NextRetry(job *river.Job[hoard.UploadPartArgs]) time.Time {
	return w.deps.nextAttemptAt(job.Attempt)
}

// Work implements river.Worker.
func (w *UploadPartWorker) Work(ctx context.Context, job *river.Job[hoard.UploadPartArgs]) error {
	err := w.work(ctx, job)
	if rerr, ok := settled(err); ok {
		return rerr
	}
	return w.deps.transferFailed(ctx, job.Args.TransferID, job.Attempt, job.MaxAttempts, failedAt(hoard.SkipUploadFailed, err))
}

func (w *UploadPartWorker) work(ctx context.Context, job *river.Job[hoard.UploadPartArgs]) error {
	d, db, a := &w.deps, w.deps.DB, job.Args
	t, err := db.FindTransfer(ctx, a.TransferID)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		// Gone: indexed, a duplicate, or replaced by a new transfer of the
		// same set (its retry, after this job failed an attempt while the
		// database was away) with part jobs of its own. Nothing is left
		// for this job, as for a transfer no longer publishing.
		d.Logger.Info("upload part: its transfer is gone; nothing to do", "transfer", a.TransferID, "part", a.PartNo)
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
		return jobOutcome(fmt.Errorf("upload part %d: %w", a.PartNo, err))
	}
	destID := part.DestMessageID
	if destID == 0 {
		wr, err := d.writerOf(ctx, db, t.DestChannelID, t.AccountID)
		if err != nil {
			return err
		}
		if part.DestAfterID != 0 || job.Attempt > 1 {
			// An earlier attempt may have posted the part without recording
			// it: look before posting again.
			if destID, err = d.findPosted(ctx, db, wr, part); err != nil {
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
			ft := d.trackFile(db, job.ID, t.IngestionRunID, t.SourceChannelID, t.SourceMessageID, t.Draft.FileName)
			if destID, err = d.post(ctx, db, t, part, wr, ft); isTooLarge(err) {
				return d.splitRefusedPart(ctx, job, t, part, wr, err)
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
func (d *Deps) post(ctx context.Context, db *store.DB, t *hoard.Transfer, part *hoard.TransferPart, wr *channelAccess, ft *fileTracker) (int64, error) {
	if part.ResendMessageID != 0 {
		ft.phase(ctx, hoard.PhaseForwarding, part.PartNo+1, t.PartsTotal, 0)
		maps, err := db.ListChannelMaps(ctx, t.SourceChannelID)
		if err != nil {
			return 0, err
		}
		ch, err := db.FindChannelByID(ctx, t.SourceChannelID)
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
					d.metrics().Resent(part.Length)
				}
				if !errors.Is(err, messenger.ErrProtected) {
					return int64(id), err
				}
			}
		}
		d.Logger.Info("source message cannot be re-sent; uploading instead", "part", part.Name)
	}
	return d.upload(ctx, db, t, part, wr, ft)
}

// findPosted looks in the destination, after the id recorded before an
// earlier attempt posted, for a document with the part's name and size
// that no package or other part holds; 0 when there is none.
func (d *Deps) findPosted(ctx context.Context, db *store.DB, wr *channelAccess, part *hoard.TransferPart) (int64, error) {
	msgs, err := wr.account.History(ctx, wr.peer, messenger.HistoryQuery{AfterID: int(part.DestAfterID)})
	if err != nil {
		return 0, err
	}
	for _, m := range msgs {
		if m.Document == nil || m.Document.FileName != part.Name || m.Document.Size != part.Length {
			continue
		}
		taken, err := db.IsDestMessageTaken(ctx, wr.channel.ID, int64(m.ID))
		if err != nil {
			return 0, err
		}
		if !taken {
			d.Logger.Info("found a part posted by an earlier attempt", "part", part.Name, "message", m.ID)
			return int64(m.ID), nil
		}
	}
	return 0, nil
}

// transferFailed mirrors a failed attempt of a transfer's job: on the
// source set's SkippedPackage, or on the manual upload file; on the last
// attempt the transfer is FAILED.
func (d *Deps) transferFailed(ctx context.Context, transferID int64, attempt, maxAttempts int, err error) error {
	db := d.DB
	t, ferr := db.FindTransfer(ctx, transferID)
	if ferr != nil {
		d.Logger.Error("transfer failed", "transfer", transferID, "err", err, "lookup", ferr)
		return err
	}
	final := attempt >= maxAttempts || permanent(err)
	if final {
		if serr := db.SetTransferStatus(ctx, t.ID, hoard.TransferFailed, truncate(err.Error(), 2000)); serr != nil {
			d.Logger.Error("mark transfer failed", "transfer", t.ID, "err", serr)
		}
	}
	if t.ManualUploadFileID != 0 {
		if final {
			d.manualFileFailed(ctx, t, err)
			if attempt < maxAttempts {
				return river.JobCancel(err)
			}
		}
		return err
	}
	rec := hoard.SkippedPackage{SourceChannelID: t.SourceChannelID, SourceMessageID: t.SourceMessageID,
		SourceTopicID: t.Draft.SourceTopicID, FileName: t.Draft.FileName, FileSize: t.Draft.FileSize,
		PartCount: t.PartsTotal, Reason: reasonOf(err)}
	rerr := d.skipFailure(ctx, db, rec, attempt, maxAttempts, t.IngestionRunID, err)
	if final && !t.KeepFiles && len(t.SpoolPaths) > 0 {
		d.removeSpool(filepath.Dir(t.SpoolPaths[0]))
	}
	return rerr
}

// VerifyTransferWorker runs VerifyTransferArgs.
type VerifyTransferWorker struct {
	river.WorkerDefaults[hoard.VerifyTransferArgs]
	deps Deps
}

// Timeout implements river.Worker: re-hashing reads the whole file.
func (w *VerifyTransferWorker) Timeout(*river.Job[hoard.VerifyTransferArgs]) time.Duration { return -1 }

// NextRetry implements river.Worker: a quick first retry, then one attempt
// per cycle (nextAttemptAt), not River's attempt⁴ seconds.
func (w *VerifyTransferWorker) NextRetry(job *river.Job[hoard.VerifyTransferArgs]) time.Time {
	return w.deps.nextAttemptAt(job.Attempt)
}

// Work implements river.Worker.
func (w *VerifyTransferWorker) Work(ctx context.Context, job *river.Job[hoard.VerifyTransferArgs]) error {
	err := w.work(ctx, job)
	if rerr, ok := settled(err); ok {
		return rerr
	}
	return w.deps.transferFailed(ctx, job.Args.TransferID, job.Attempt, job.MaxAttempts, err)
}

// work runs one verification of a transfer as its steps: load the
// transfer and its posted parts, re-hash them (verifyHash), inspect the
// spool, index the package in the transaction that completes the job
// (indexTransfer), then what follows the commit (indexCommitted). A
// transfer that is not VERIFYING has nothing to verify.
func (w *VerifyTransferWorker) work(ctx context.Context, job *river.Job[hoard.VerifyTransferArgs]) error {
	d, db := &w.deps, w.deps.DB
	t, err := db.FindTransfer(ctx, job.Args.TransferID)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		// Gone: indexed and removed by an earlier run of this job whose
		// completion was lost (the database went away), or abandoned.
		// Either way there is nothing to verify, as below.
		return nil
	}
	if err != nil {
		return jobOutcome(fmt.Errorf("verify transfer: %w", err))
	}
	if t.Status != hoard.TransferVerifying {
		return nil
	}
	parts, err := db.ListTransferParts(ctx, t.ID)
	if err != nil {
		return err
	}
	act := &activity{deps: d, db: db, runID: t.IngestionRunID}
	act.set(ctx, hoard.RunActivity{Activity: "Verifying " + t.Draft.FileName, Step: "hashing", ChannelID: t.SourceChannelID,
		File: t.Draft.FileName, TotalBytes: t.Draft.FileSize})
	ft := d.trackFile(db, job.ID, t.IngestionRunID, t.SourceChannelID, t.SourceMessageID, t.Draft.FileName)
	ft.phase(ctx, hoard.PhaseVerifying, 0, 0, t.Draft.FileSize)
	mismatch, err := d.verifyHash(ctx, t, parts, ft)
	if err != nil {
		return err
	}
	ft.phase(ctx, hoard.PhaseIndexing, 0, 0, 0)
	p, files, err := d.inspect(ctx, t)
	if err != nil {
		return err
	}
	setPosted(&p, t, parts)
	created, duplicate, err := d.indexTransfer(ctx, job, t, &p, files, mismatch)
	if err != nil {
		return err
	}
	d.indexCommitted(ctx, t, created, duplicate)
	d.Logger.Info("indexed", "file", p.FileName, "package", p.ID, "created", created, "duplicate", duplicate,
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
func (d *Deps) verifyHash(ctx context.Context, t *hoard.Transfer, parts []hoard.TransferPart, ft *fileTracker) (mismatch string, err error) {
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
				if err := d.DB.ClearTransferPart(ctx, t.ID, part.PartNo); err != nil {
					return "", err
				}
			}
		}
		return "", d.hashMismatch(ctx, t, sum)
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
func (d *Deps) indexTransfer(ctx context.Context, job *river.Job[hoard.VerifyTransferArgs], t *hoard.Transfer, p *hoard.Package,
	files []hoard.PackageFile, mismatch string) (created, duplicate bool, err error) {
	err = completeTx(ctx, d.DB, job, func(tx *store.DB, client *river.Client[pgx.Tx]) error {
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
		if err := d.afterIndexed(ctx, tx, client, t, p, created, mismatch); err != nil {
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
func (d *Deps) indexCommitted(ctx context.Context, t *hoard.Transfer, created, duplicate bool) {
	d.countIndexed(created, duplicate)
	if !t.KeepFiles && len(t.SpoolPaths) > 0 {
		d.removeSpool(filepath.Dir(t.SpoolPaths[0]))
	}
	if t.ManualUploadFileID != 0 {
		d.manualFileDone(ctx, t)
	}
}

// draftPost is the source post of a transfer's draft; its category tag is
// the one ingestion put first.
func draftPost(p hoard.Package) hoard.PackageSource {
	tag := ""
	if len(p.Tags) > 0 {
		tag = p.Tags[0]
	}
	return p.Source(tag)
}

// countIndexed tells the metrics what indexing a transfer did: a new
// package, or a duplicate by content found only then.
func (d *Deps) countIndexed(created, duplicate bool) {
	switch {
	case created:
		d.metrics().Indexed()
	case duplicate:
		d.metrics().Duplicate(store.DupContentHash)
	}
}

// afterIndexed does, in the transaction that indexed p, what a repair and a
// flagged publication need: a package completed in place (a repair) that
// has stale posts gets the job that deletes them, now that its new posts
// are verified; a source set whose parts read back with another hash
// (mismatch, SPEC rule 8) gets its HASH_MISMATCH notification, which
// carries the package so that a repair can publish it again.
func (d *Deps) afterIndexed(ctx context.Context, tx *store.DB, client *river.Client[pgx.Tx], t *hoard.Transfer,
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
	d.Logger.Error("hash mismatch", "file", t.Draft.FileName, "package", p.ID, "want", t.ContentHash, "got", mismatch)
	_, err := tx.CreateNotification(ctx, &hoard.Notification{Type: hoard.NotifyHashMismatch, Severity: hoard.SeverityError,
		PackageID: p.ID, ChannelID: t.SourceChannelID, Title: "Hash mismatch: " + t.Draft.FileName,
		Message: fmt.Sprintf("%s was downloaded as %s but the posted parts read back as %s. "+
			"Repair downloads it again and publishes it into the same package.", t.Draft.FileName, t.ContentHash, mismatch)})
	return err
}

// hashMismatch reports a manual upload's file whose bytes differ from the
// hash taken when it was read: HASH_MISMATCH (once per file), nothing
// indexed.
func (d *Deps) hashMismatch(ctx context.Context, t *hoard.Transfer, got string) error {
	err := hoard.Errorf(hoard.EINVALID, "hash mismatch: %s was downloaded as %s but the posted parts read back as %s",
		t.Draft.FileName, t.ContentHash, got)
	d.Logger.Error("hash mismatch", "file", t.Draft.FileName, "transfer", t.ID, "want", t.ContentHash, "got", got)
	key := fmt.Sprintf("HASH_MISMATCH:transfer:%d:%d:%d", t.SourceChannelID, t.SourceMessageID, t.ManualUploadFileID)
	if _, nerr := d.DB.CreateNotification(ctx, &hoard.Notification{Type: hoard.NotifyHashMismatch, Severity: hoard.SeverityError,
		Title: "Hash mismatch: " + t.Draft.FileName, Message: err.Message, ChannelID: t.SourceChannelID, DedupKey: key}); nerr != nil {
		d.Logger.Error("notify hash mismatch", "err", nerr)
	}
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

// inspect lists the spool files and picks the in-archive preview when the
// transfer has none (SPEC rules 5 and 10). A listing or preview that fails
// leaves an inspection note, never a failure. A draft that carries a note
// already was found unlistable when its type was detected
// (unlistableNote) and is not read again.
func (d *Deps) inspect(ctx context.Context, t *hoard.Transfer) (hoard.Package, []hoard.PackageFile, error) {
	p := t.Draft
	p.PreviewData = t.PreviewData
	at := archiveType(p.ArchiveType)
	listing := archive.Listing{Type: at, Note: p.InspectionNote}
	if p.InspectionNote == "" {
		var err error
		if listing, err = archive.List(ctx, at, t.SpoolPaths, archive.ListOptions{}); err != nil {
			return p, nil, err
		}
	}
	p.InspectionNote = listing.Note
	entries := archive.PackageFiles(p.FileName, p.FileSize, listing)
	files := make([]hoard.PackageFile, len(entries))
	for i, e := range entries {
		files[i] = hoard.PackageFile{Path: storedEntryPath(e.Path),
			Size: max(e.Size, 0), CompressedSize: max(e.CompressedSize, 0)}
		if e.HasCRC {
			crc := e.CRC32
			files[i].CRC32 = &crc
		}
	}
	if len(p.PreviewData) == 0 && at != archive.Document {
		p.PreviewData = d.archivePreview(ctx, at, t.SpoolPaths, listing.Entries, p.FileName)
	}
	p.PreviewData = d.modelPreviewIfNone(ctx, p.PreviewData, &p, at, t.SpoolPaths, listing.Entries)
	return p, files, nil
}

// storedEntryPath is the form an archive entry's path is stored in. Paths
// come from strangers' archives: archive lists them as they are (so that
// extraction finds the exact bytes) and they are made storable here, where
// they enter the catalog; extracting a stored entry later maps names the
// same way (archive.ExtractOptions.NameKey).
func storedEntryPath(raw string) string { return hoard.StorableLongText(raw, hoard.MaxEntryPathLen) }

// previewTries is how many preview candidates of one archive are tried.
const previewTries = 3

// archivePreview extracts the best preview image of an archive's listing
// and re-encodes it as a bounded JPEG (archive.MakeThumbnail, as manual
// extraction does): whatever the archive holds, browsers get at most an
// 800-pixel JPEG, and an image whose header declares too many pixels (a
// decompression bomb) is refused before a pixel is decoded. A candidate
// that cannot be extracted or decoded gives way to the next best, up to
// previewTries; nil when none works.
func (d *Deps) archivePreview(ctx context.Context, at archive.Type, paths []string, entries []archive.Entry, name string) []byte {
	var rest []archive.Entry
	for try := range previewTries {
		e, ok := archive.ChoosePreview(entries)
		if !ok {
			return nil
		}
		data, err := archive.Extract(ctx, at, paths, e.Path, archive.ExtractOptions{})
		if err == nil {
			data, err = archive.MakeThumbnail(ctx, data, archive.ThumbnailOptions{})
		}
		if err == nil {
			return data
		}
		d.Logger.Info("preview candidate refused", "file", name, "entry", hoard.StorableLongText(e.Path, 200), "try", try+1, "err", err)
		if rest == nil {
			rest = slices.Clone(entries)
		}
		rest = slices.DeleteFunc(rest, func(x archive.Entry) bool { return x.Path == e.Path })
		entries = rest
	}
	return nil
}

func archiveType(t hoard.ArchiveType) archive.Type {
	switch t {
	case hoard.ArchiveZIP:
		return archive.ZIP
	case hoard.ArchiveRAR:
		return archive.RAR
	case hoard.Archive7Z:
		return archive.SevenZ
	}
	return archive.Document
}
