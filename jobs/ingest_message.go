package jobs

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/archive"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// downloadTries is how many times one attempt resumes a stalled or broken
// download before the attempt fails.
const downloadTries = 4

// IngestMessageWorker runs IngestMessageArgs.
type IngestMessageWorker struct {
	river.WorkerDefaults[hoard.IngestMessageArgs]
	deps Deps
}

// Timeout implements river.Worker: a download takes as long as it takes;
// stalls are detected by the client, not by a deadline.
func (w *IngestMessageWorker) Timeout(*river.Job[hoard.IngestMessageArgs]) time.Duration { return -1 }

// NextRetry implements river.Worker: a quick first retry, then one attempt
// per cycle (nextAttemptAt).
func (w *IngestMessageWorker) NextRetry(job *river.Job[hoard.IngestMessageArgs]) time.Time {
	return w.deps.nextAttemptAt(job.Attempt)
}

// Work implements river.Worker.
func (w *IngestMessageWorker) Work(ctx context.Context, job *river.Job[hoard.IngestMessageArgs]) error {
	err := w.work(ctx, job)
	if rerr, ok := settled(err); ok {
		return rerr
	}
	a := job.Args
	if errors.Is(err, messenger.ErrAccessLost) {
		if ch, cerr := w.deps.DB.FindChannelByID(ctx, a.ChannelID); cerr == nil {
			w.deps.accessLost(ctx, w.deps.DB, ch, err)
		}
	}
	rec := hoard.SkippedPackage{SourceChannelID: a.ChannelID, SourceMessageID: a.MessageID, SourceTopicID: a.TopicID,
		AccountChannelMapID: a.MapID, FileName: a.FileName, FileSize: a.Size, PartCount: len(a.Parts),
		Reason: reasonOf(err), RiverJobID: job.ID}
	return w.deps.skipFailure(ctx, w.deps.DB, rec, job.Attempt, job.MaxAttempts, a.RunID, err)
}

func (w *IngestMessageWorker) work(ctx context.Context, job *river.Job[hoard.IngestMessageArgs]) error {
	d, db, a := &w.deps, w.deps.DB, job.Args
	if len(a.Parts) == 0 {
		return river.JobCancel(hoard.Errorf(hoard.EINVALID, "ingest message: no parts"))
	}
	src, err := d.resolveMap(ctx, db, a.MapID)
	if err != nil {
		return err
	}
	var topic *hoard.TopicProgress
	if a.TopicID != 0 {
		if topic, err = db.FindTopic(ctx, a.MapID, a.TopicID); err != nil {
			return err
		}
	}
	// Read live (SPEC rule 17): a topic disabled or a channel deactivated
	// while its sets wait is not downloaded; the watermark goes back before
	// the set, so re-enabling picks it up again.
	if !src.channel.IsActive || (topic != nil && !topic.FetchEnabled) {
		return completeTx(ctx, db, job, func(tx *store.DB, _ *river.Client[pgx.Tx]) error {
			if err := addCounters(ctx, tx, a.RunID, hoard.RunCounters{HeldBack: 1}); err != nil {
				return err
			}
			if topic != nil {
				return tx.RewindTopicWatermark(ctx, a.MapID, a.TopicID, a.MessageID)
			}
			return tx.RewindWatermarks(ctx, a.ChannelID, a.MessageID)
		})
	}
	if p, err := db.FindPackageBySourceMessage(ctx, a.ChannelID, a.MessageID); err == nil && p.DestChannelID != 0 {
		return nil // indexed by an earlier attempt
	}
	// A FAILED transfer of this set may have posted parts already: they
	// are taken up again below rather than posted a second time.
	var failed *hoard.Transfer
	if t, err := db.FindTransferBySource(ctx, a.ChannelID, a.MessageID); err == nil {
		if t.Status != hoard.TransferFailed {
			return nil // an earlier attempt handed it over to its upload_part jobs
		}
		failed = t
	} else if hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return err
	}

	act := &activity{deps: d, db: db, runID: a.RunID}
	ids := make([]int, 0, len(a.Parts)+1)
	for _, p := range a.Parts {
		ids = append(ids, int(p.MessageID))
	}
	if a.PhotoMessageID != 0 {
		ids = append(ids, int(a.PhotoMessageID))
	}
	msgs, err := src.account.Messages(ctx, src.peer, ids)
	if err != nil {
		return failedAt(hoard.SkipDownloadFailed, err)
	}
	byID := make(map[int]messenger.Message, len(msgs))
	for _, m := range msgs {
		byID[m.ID] = m
	}
	parts := make([]messenger.Message, len(a.Parts))
	for i, p := range a.Parts {
		m, ok := byID[int(p.MessageID)]
		if !ok || m.Document == nil {
			// Permanent: recorded as SKIPPED (a row the user sees), then
			// cancelled by skipFailure.
			return failedAt(hoard.SkipOther, hoard.Errorf(hoard.EINVALID,
				"source message %d of %s was deleted", p.MessageID, a.FileName))
		}
		parts[i] = m
	}
	post := sourcePost(src.channel, topic, a.FileName, a.MessageID, parts[0], a.Parts)
	if failed != nil {
		// An earlier post that claimed the failed publication's draft
		// stays the source of this attempt's.
		if prev := draftPost(failed.Draft); prev.Before(post) {
			post = prev
		}
	}

	// Dedup (a)–(c) again: the scan's look is as old as the queue, and a
	// copy queued beside this one may have been published since.
	if dup, rule, err := db.FindIngestDuplicate(ctx, a.ChannelID, remoteIDs(parts), post.MessageIDs, a.FileName, a.Size); err == nil {
		return d.ingestDuplicate(ctx, job, dup.FileName, rule, func(tx *store.DB) error {
			if rule == store.DupSourceMessage {
				return nil // this very post is in the package already
			}
			_, err := tx.ClaimPackageSource(ctx, dup.ID, post)
			return err
		})
	} else if hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return err
	}

	dir := d.spoolDir(a.ChannelID, a.MessageID)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	keep := false
	defer func() {
		if !keep {
			d.removeSpool(dir)
		}
	}()
	paths, sum, sniffed, err := d.download(ctx, src, parts, dir, a, act)
	if err != nil {
		return err
	}
	hash := hex.EncodeToString(sum)

	// Dedup (d): the same bytes are already in the catalog, or (found when
	// the transfer is created) being published from another source. Either
	// way the earlier post becomes the package's source (ClaimPackageSource).
	if dup, err := db.FindPublishedByContentHash(ctx, hash); err == nil {
		return d.ingestDuplicate(ctx, job, dup.FileName, store.DupContentHash, func(tx *store.DB) error {
			_, err := tx.ClaimPackageSource(ctx, dup.ID, post)
			return err
		})
	} else if hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return err
	}

	// A photo posted with the set becomes the preview; when its download
	// fails, preview_msg_id stays unset (SPEC rule 10).
	var preview []byte
	var previewMsg int64
	if ph, ok := byID[int(a.PhotoMessageID)]; ok && a.PhotoMessageID != 0 && ph.Photo != nil {
		act.set(ctx, hoard.RunActivity{Activity: "Preview of " + a.FileName, Step: "preview", ChannelID: a.ChannelID, TopicID: a.TopicID})
		data, err := src.account.DownloadThumbnail(ctx, src.peer, ph)
		if err == nil {
			// Re-encoded like every preview: bounded, whatever was posted.
			data, err = archive.MakeThumbnail(data, archive.ThumbnailOptions{})
		}
		if err == nil && len(data) > 0 {
			preview, previewMsg = data, a.PhotoMessageID
		} else {
			d.Logger.Warn("preview photo download failed", "file", a.FileName, "photo", a.PhotoMessageID, "err", err)
		}
	}

	det, err := detectType(paths, a.Size, a.FileName, sniffed)
	if err != nil {
		return failedAt(hoard.SkipExtractFailed, err)
	}
	typ := catalogType(det.Type, a.FileName)
	wr, err := d.writer(ctx, db, src.m.AccountID)
	if err != nil {
		return failedAt(hoard.SkipUploadFailed, err)
	}
	infos := make([]archive.PartInfo, len(parts))
	for i, p := range parts {
		infos[i] = archive.PartInfo{Name: p.Document.FileName, Size: p.Document.Size}
	}
	ranges, err := archive.PlanSplit(a.FileName, d.splitLimit(isPremium(ctx, db, wr.m.AccountID)), infos)
	if err != nil {
		return failedAt(hoard.SkipUploadFailed, err)
	}
	// Re-send when no byte changes and the reader may post into the
	// destination; otherwise upload from the spool.
	canResend := !src.channel.IsProtected && wr.m.AccountID == src.m.AccountID
	tparts := make([]hoard.TransferPart, len(ranges))
	for i, r := range ranges {
		tparts[i] = hoard.TransferPart{Name: r.Name, Offset: r.Offset, Length: r.Length}
		if canResend && r.Source >= 0 && !parts[r.Source].Protected {
			tparts[i].ResendMessageID = int64(parts[r.Source].ID)
		}
	}

	draft := hoard.Package{FileSize: a.Size, ArchiveType: typ, ContentHash: hash, PartCount: len(ranges),
		PreviewMsgID: previewMsg, IngestionRunID: a.RunID}
	draft.SetSource(post)
	draft.InspectionNote = unlistableNote(det, typ)
	if post.Tag != "" {
		draft.Tags = []string{post.Tag}
	}
	t := &hoard.Transfer{SourceChannelID: a.ChannelID, SourceMessageID: a.MessageID, IngestionRunID: a.RunID,
		AccountID: wr.m.AccountID, DestChannelID: wr.channel.ID, SpoolPaths: paths, ContentHash: hash, Draft: draft,
		PreviewData: preview}
	resume, err := d.resumable(ctx, failed, t, tparts)
	if err != nil {
		return err
	}
	err = completeTx(ctx, db, job, func(tx *store.DB, client *river.Client[pgx.Tx]) error {
		if resume != nil {
			t.ID = failed.ID
			if err := tx.ResumeTransfer(ctx, t); err != nil {
				return err
			}
			return d.continueTransfer(ctx, tx, client, t, resume.parts, resume.present, job.MaxAttempts)
		}
		if failed != nil {
			if err := tx.DeleteTransfer(ctx, failed.ID); err != nil {
				return err
			}
		}
		if err := tx.CreateTransfer(ctx, t, tparts); err != nil {
			return err
		}
		params := make([]river.InsertManyParams, len(tparts))
		for i := range tparts {
			args := hoard.UploadPartArgs{RunID: a.RunID, TransferID: t.ID, PartNo: i}
			params[i] = river.InsertManyParams{Args: args, InsertOpts: withMaxAttempts(args.InsertOpts(), job.MaxAttempts)}
		}
		_, err := client.InsertManyTx(ctx, tx.Tx(), params)
		return err
	})
	if errors.Is(err, store.ErrSameContent) {
		return d.ingestDuplicate(ctx, job, err.Error(), store.DupContentHash, func(tx *store.DB) error {
			return claimContent(ctx, tx, hash, post)
		})
	}
	if err != nil {
		return err
	}
	keep = true
	d.Logger.Info("downloaded", "file", a.FileName, "size", a.Size, "parts", len(tparts), "type", typ)
	return nil
}

// ingestDuplicate completes the job of a set found to be a duplicate (by
// rule, of the package or publication named of): claim, which lets an
// earlier post take the package's source, the run's count and the removal
// of the set's skipped record commit together with the job.
func (d *Deps) ingestDuplicate(ctx context.Context, job *river.Job[hoard.IngestMessageArgs], of, rule string, claim func(tx *store.DB) error) error {
	a := job.Args
	d.Logger.Info("duplicate content skipped", "file", a.FileName, "of", of, "rule", rule)
	err := completeTx(ctx, d.DB, job, func(tx *store.DB, _ *river.Client[pgx.Tx]) error {
		if err := claim(tx); err != nil {
			return err
		}
		if err := tx.DeleteSkippedBySource(ctx, a.ChannelID, a.MessageID); err != nil && hoard.ErrorCode(err) != hoard.ENOTFOUND {
			return err
		}
		return addCounters(ctx, tx, a.RunID, hoard.RunCounters{Duplicates: 1})
	})
	if err != nil {
		return fmt.Errorf("record duplicate %s: %w", a.FileName, err)
	}
	d.metrics().Duplicate(rule)
	return nil
}

// claimContent lets post take the source of the content hash's package:
// of the transfer publishing it, or of the package once published. When
// neither is there any more (the other publication failed after this copy
// was refused), it fails, and the next attempt publishes this copy.
func claimContent(ctx context.Context, tx *store.DB, hash string, post hoard.PackageSource) error {
	_, err := tx.ClaimTransferSource(ctx, hash, post)
	if hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return err
	}
	p, err := tx.FindPublishedByContentHash(ctx, hash)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		return fmt.Errorf("claim source: the other publication of the same bytes failed meanwhile: %w", err)
	}
	if err != nil {
		return err
	}
	_, err = tx.ClaimPackageSource(ctx, p.ID, post)
	return err
}

// sourcePost is the post of a set as the catalog records it: messageID
// is the set's first message, first its first part, parts its source
// parts.
func sourcePost(ch *hoard.Channel, topic *hoard.TopicProgress, name string, messageID int64, first messenger.Message, parts []hoard.SourcePart) hoard.PackageSource {
	topicName, general, topicID := "", false, int64(0)
	if topic != nil {
		topicName, general, topicID = topic.TopicName, topic.IsGeneral, topic.TopicID
	}
	s := hoard.PackageSource{ChannelID: ch.ID, MessageID: messageID, TopicID: topicID, Caption: first.Text,
		PostedAt: first.Date, ReplyToMessageID: int64(first.ReplyToID), MediaAlbumID: first.GroupedID, FileName: name,
		Creator: hoard.StorableText(archive.Creator(topicName, general, name, ch.Title), hoard.MaxCreatorLen), Tag: ch.Category}
	if first.Document != nil {
		s.RemoteUniqueID = first.Document.RemoteUniqueID()
	}
	for _, p := range parts {
		s.MessageIDs = append(s.MessageIDs, p.MessageID)
	}
	return s
}

// remoteIDs are the remote unique ids of messages' documents.
func remoteIDs(msgs []messenger.Message) []string {
	ids := make([]string, 0, len(msgs))
	for _, m := range msgs {
		if m.Document != nil {
			ids = append(ids, m.Document.RemoteUniqueID())
		}
	}
	return ids
}

// resumption is a FAILED transfer's parts that a new attempt takes up, and
// which of their recorded posts are still in the destination.
type resumption struct {
	parts   []hoard.TransferPart
	present map[int64]bool
}

// resumable decides whether a new attempt t of a source set takes up the
// set's FAILED transfer (nil when there is none): when the bytes are the
// same (content hash) and so is the split plan, the parts it posted stay
// and only the others are posted — a failure after publishing never
// leaves a second copy in the destination. Otherwise (the source changed,
// or the plan did) it returns nil and the old transfer is dropped; what it
// posted is then reported by the audit as orphaned.
func (d *Deps) resumable(ctx context.Context, failed, t *hoard.Transfer, plan []hoard.TransferPart) (*resumption, error) {
	if failed == nil || failed.ContentHash != t.ContentHash || failed.DestChannelID != t.DestChannelID ||
		failed.AccountID != t.AccountID {
		return nil, nil
	}
	parts, present, err := d.postedParts(ctx, d.DB, failed)
	if err != nil {
		return nil, err
	}
	if len(parts) != len(plan) {
		return nil, nil
	}
	for i, p := range parts {
		if p.Name != plan[i].Name || p.Offset != plan[i].Offset || p.Length != plan[i].Length {
			return nil, nil
		}
	}
	d.Logger.Info("taking up a failed publication", "file", t.Draft.FileName, "transfer", failed.ID, "posted", len(present))
	return &resumption{parts: parts, present: present}, nil
}

// download fetches every part into dir (part-000, part-001, …) and returns
// the paths, the SHA-256 over all parts in order and a Sniffer that saw the
// same bytes, both fed while the bytes arrive (no second pass). Stalls and
// broken connections resume from the last good offset, up to downloadTries
// times per part.
func (d *Deps) download(ctx context.Context, src *channelAccess, parts []messenger.Message, dir string, a hoard.IngestMessageArgs, act *activity) ([]string, []byte, *archive.Sniffer, error) {
	paths := make([]string, len(parts))
	var state archive.HashState
	var done int64
	sniffer := archive.NewSniffer(0)
	for i, m := range parts {
		paths[i] = filepath.Join(dir, fmt.Sprintf("part-%03d", i))
		f, err := os.OpenFile(paths[i], os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o640)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("spool: %w", err)
		}
		hw, err := archive.NewHashingWriter(ctx, f, state, 0)
		if err != nil {
			f.Close()
			return nil, nil, nil, err
		}
		hw.Observe(sniffer)
		req := messenger.DownloadRequest{Channel: src.peer, MessageID: m.ID, Document: *m.Document,
			Progress: func(n int64) {
				act.set(ctx, hoard.RunActivity{Activity: "Downloading " + a.FileName, Step: "downloading",
					ChannelID: a.ChannelID, TopicID: a.TopicID, AccountChannelMapID: a.MapID, File: a.FileName,
					Bytes: done + n, TotalBytes: a.Size})
			}}
		for try := 1; ; try++ {
			err = src.account.Download(ctx, req, hw)
			if err == nil {
				break
			}
			var de *messenger.DownloadError
			if _, limited := messenger.AsFloodWait(err); limited || !errors.As(err, &de) || try >= downloadTries || ctx.Err() != nil {
				break
			}
			d.Logger.Warn("download interrupted; resuming", "file", m.Document.FileName, "offset", de.Offset, "try", try, "err", err)
			req.Offset = de.Offset
		}
		if err == nil && hw.Offset() != m.Document.Size {
			err = fmt.Errorf("download of %s ended at %d of %d bytes", m.Document.FileName, hw.Offset(), m.Document.Size)
		}
		if err == nil {
			state, err = hw.State()
		}
		cerr := hw.Close()
		if ferr := f.Close(); err == nil {
			err = errors.Join(cerr, ferr)
		}
		if err != nil {
			return nil, nil, nil, failedAt(hoard.SkipDownloadFailed, err)
		}
		done += m.Document.Size
		d.metrics().Downloaded(m.Document.Size)
		state = state.NextPart()
	}
	h, err := state.NewHash()
	if err != nil {
		return nil, nil, nil, err
	}
	return paths, h.Sum(nil), sniffer, nil
}

// detectType decides the type of a package of size bytes from its content,
// the name deciding when the content is not recognised: from what sniffed
// saw while the parts were downloaded or hashed when it saw every byte,
// else by reading the parts back.
func detectType(paths []string, size int64, name string, sniffed *archive.Sniffer) (archive.Detection, error) {
	if sniffed != nil && sniffed.Seen() == size {
		return sniffed.Detect(name), nil
	}
	parts, err := archive.OpenParts(paths...)
	if err != nil {
		return archive.Detection{}, err
	}
	defer parts.Close()
	return archive.Detect(parts, parts.Size(), name, 0)
}

// unlistableNote is the inspection note of an archive whose type came from
// its name alone: neither magic, nor a signature in the scan window, nor a
// ZIP directory record at the end, so no decoder can list it and inspection
// need not read it back to find that out. It is "" otherwise.
func unlistableNote(det archive.Detection, typ hoard.ArchiveType) string {
	if !det.ByName || typ == hoard.ArchiveDocument {
		return ""
	}
	return fmt.Sprintf("not listed: the content is not a recognisable %s archive", typ)
}

// catalogType is the catalog's archive type for t, or for what name tells
// when t is Unknown; a file neither tells about is a DOCUMENT.
func catalogType(t archive.Type, name string) hoard.ArchiveType {
	if t == archive.Unknown {
		t = archive.NameType(name)
	}
	switch t {
	case archive.ZIP:
		return hoard.ArchiveZIP
	case archive.RAR:
		return hoard.ArchiveRAR
	case archive.SevenZ:
		return hoard.Archive7Z
	}
	return hoard.ArchiveDocument
}

// addCounters adds to a run's counters; runs that no longer exist are
// ignored.
func addCounters(ctx context.Context, db *store.DB, runID int64, c hoard.RunCounters) error {
	if runID == 0 {
		return nil
	}
	if err := db.AddRunCounters(ctx, runID, c); err != nil && hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return err
	}
	return nil
}
