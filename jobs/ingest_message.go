package jobs

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
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

// IngestMessageWorker runs IngestMessageArgs: it downloads one source set
// into the spool (hashing on the fly), de-duplicates it, inspects it and
// hands it over to its upload_part jobs. A failure is the set's
// (outcome.go: each attempt recorded on its skipped record, retried once
// per cycle).
type IngestMessageWorker struct {
	worker[hoard.IngestMessageArgs]
	db        *store.DB
	log       *slog.Logger
	platform  *platform
	spool     *spool
	progress  *progress
	transfers *transfers
	catalog   *catalog
}

func newIngestMessageWorker(p *parts) *IngestMessageWorker {
	return &IngestMessageWorker{worker: worker[hoard.IngestMessageArgs]{fail: p.fail}, db: p.db, log: p.log, platform: p.platform,
		spool: p.spool, progress: p.progress, transfers: p.transfers, catalog: p.catalog}
}

// Timeout implements river.Worker: a download takes as long as it takes;
// stalls are detected by the client, not by a deadline.
func (w *IngestMessageWorker) Timeout(*river.Job[hoard.IngestMessageArgs]) time.Duration { return -1 }

// Work implements river.Worker.
func (w *IngestMessageWorker) Work(ctx context.Context, job *river.Job[hoard.IngestMessageArgs]) error {
	a := job.Args
	set := hoard.SkippedPackage{SourceChannelID: a.ChannelID, SourceMessageID: a.MessageID, SourceTopicID: a.TopicID,
		AccountChannelMapID: a.MapID, FileName: a.FileName, FileSize: a.Size, PartCount: len(a.Parts), RiverJobID: job.ID}
	return w.finish(ctx, job, w.work(ctx, job), w.catalog.skipped(set, a.RunID))
}

// work runs one attempt of an ingestion as its steps, in order: resolve the
// set's source; hold it back when its channel or topic was switched off;
// look at what earlier attempts left; read the set's messages; dedup before
// the download; download into the spool; dedup by hash; take the posted
// photo as preview; inspect; plan the parts; hand the set over to its
// upload_part jobs. A step that settles the set ends the attempt with the
// error River gets (nil when the job is complete).
func (w *IngestMessageWorker) work(ctx context.Context, job *river.Job[hoard.IngestMessageArgs]) error {
	a := job.Args
	if len(a.Parts) == 0 {
		return lookup(hoard.Errorf(hoard.EINVALID, "ingest message: no parts"))
	}
	src, topic, err := w.resolveSetSource(ctx, a)
	if err != nil {
		return err
	}
	if !src.channel.IsActive || (topic != nil && !topic.FetchEnabled) {
		return w.holdBackSet(ctx, job, topic)
	}
	failed, done, err := w.earlierAttempt(ctx, a)
	if done {
		return err
	}
	act := w.progress.run(a.RunID)
	ft := w.progress.file(job.ID, a.RunID, a.ChannelID, a.MessageID, a.FileName)
	byID, parts, err := readSet(ctx, src, a)
	if err != nil {
		return err
	}
	post := setPost(src, topic, a, parts[0], failed)
	if done, err := w.dedupBeforeDownload(ctx, job, parts, post); done {
		return err
	}
	release, err := w.spool.reserve(ctx, a)
	if err != nil {
		return err
	}
	defer release()
	dir, err := w.spool.make(a.ChannelID, a.MessageID)
	if err != nil {
		return err
	}
	keep := false
	defer func() {
		if !keep {
			w.spool.remove(dir)
		}
	}()
	sp, err := w.download(ctx, src, parts, dir, a, act, ft)
	if err != nil {
		return err
	}
	if done, err := w.dedupByHash(ctx, job, sp.hash, post); done {
		return err
	}
	photo := w.photoPreview(ctx, src, byID, a, act)
	kind, err := inspectSet(sp, a)
	if err != nil {
		return err
	}
	ft.phase(ctx, hoard.PhaseSplitting, 0, 0, 0)
	wr, tparts, err := w.planParts(ctx, src, parts, a)
	if err != nil {
		return err
	}
	t := setTransfer(a, post, wr, sp, kind, photo, len(tparts))
	if handed, err := w.handOver(ctx, job, failed, t, tparts, post); !handed {
		return err
	}
	keep = true
	w.log.Info("downloaded", "file", a.FileName, "size", a.Size, "parts", len(tparts), "type", kind.typ)
	return nil
}

// resolveSetSource resolves the map a set was queued through and, for a
// forum topic's set, the topic's progress (nil for a channel's), which
// decide whether the set is still wanted and name its source post.
func (w *IngestMessageWorker) resolveSetSource(ctx context.Context, a hoard.IngestMessageArgs) (*channelAccess, *hoard.TopicProgress, error) {
	src, err := w.platform.resolveMap(ctx, a.MapID)
	if err != nil {
		return nil, nil, err
	}
	var topic *hoard.TopicProgress
	if a.TopicID != 0 {
		if topic, err = w.db.FindTopic(ctx, a.MapID, a.TopicID); err != nil {
			return nil, nil, err
		}
	}
	return src, topic, nil
}

// holdBackSet completes the job of a set whose channel was deactivated or
// whose topic was disabled while it waited, read live (SPEC rule 17): the
// set is not downloaded, the run counts it as held back, and the watermark
// goes back before the set, so re-enabling picks it up again.
func (w *IngestMessageWorker) holdBackSet(ctx context.Context, job *river.Job[hoard.IngestMessageArgs], topic *hoard.TopicProgress) error {
	a := job.Args
	return completeTx(ctx, w.db, job, func(tx *store.DB, _ *river.Client[pgx.Tx]) error {
		if err := addCounters(ctx, tx, a.RunID, hoard.RunCounters{HeldBack: 1}); err != nil {
			return err
		}
		if topic != nil {
			return tx.RewindTopicWatermark(ctx, a.MapID, a.TopicID, a.MessageID)
		}
		return tx.RewindWatermarks(ctx, a.ChannelID, a.MessageID)
	})
}

// earlierAttempt looks at what earlier attempts of the set left. done (with
// a nil error) when one indexed the set or handed it over to its
// upload_part jobs, so nothing is left to do; done with the error when the
// lookup failed. Otherwise it returns the set's FAILED transfer (nil when
// there is none): that transfer may have posted parts already, and they are
// taken up again (handOver) rather than posted a second time.
func (w *IngestMessageWorker) earlierAttempt(ctx context.Context, a hoard.IngestMessageArgs) (failed *hoard.Transfer, done bool, err error) {
	if p, err := w.db.FindPackageBySourceMessage(ctx, a.ChannelID, a.MessageID); err == nil && p.DestChannelID != 0 {
		return nil, true, nil // indexed by an earlier attempt
	} else if err != nil && hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return nil, true, err // unknown: a transient fault must not start a second ingest
	}
	if t, err := w.db.FindTransferBySource(ctx, a.ChannelID, a.MessageID); err == nil {
		if t.Status != hoard.TransferFailed {
			return nil, true, nil // an earlier attempt handed it over to its upload_part jobs
		}
		return t, false, nil
	} else if hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return nil, true, err
	}
	return nil, false, nil
}

// readSet reads the set's messages (its parts and its photo) from the
// platform: byID holds every one that is there, parts the set's documents
// in part order. A part that was deleted, or holds no document any more,
// is a permanent failure: recorded as SKIPPED (a row the user sees), then
// cancelled (its policy, outcome.go).
func readSet(ctx context.Context, src *channelAccess, a hoard.IngestMessageArgs) (map[int]messenger.Message, []messenger.Message, error) {
	ids := make([]int, 0, len(a.Parts)+1)
	for _, p := range a.Parts {
		ids = append(ids, int(p.MessageID))
	}
	if a.PhotoMessageID != 0 {
		ids = append(ids, int(a.PhotoMessageID))
	}
	msgs, err := src.account.Messages(ctx, src.peer, ids)
	if err != nil {
		return nil, nil, failedAt(hoard.SkipDownloadFailed, err)
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
			// cancelled (its policy).
			return nil, nil, failedAt(hoard.SkipOther, hoard.Errorf(hoard.EINVALID,
				"source message %d of %s was deleted", p.MessageID, a.FileName))
		}
		parts[i] = m
	}
	return byID, parts, nil
}

// setPost is the post this attempt records as the set's source: the set's
// own (sourcePost, first being its first part), unless an earlier post
// claimed the failed publication's draft, which then stays the source of
// this attempt's too — a retry never undoes a claim.
func setPost(src *channelAccess, topic *hoard.TopicProgress, a hoard.IngestMessageArgs, first messenger.Message, failed *hoard.Transfer) hoard.PackageSource {
	post := sourcePost(src.channel, topic, a.FileName, a.MessageID, first, a.Parts)
	if failed != nil {
		// An earlier post that claimed the failed publication's draft
		// stays the source of this attempt's.
		if prev := draftPost(failed.Draft); prev.Before(post) {
			post = prev
		}
	}
	return post
}

// dedupBeforeDownload applies dedup (a)–(c) again: the scan's look is as
// old as the queue, and a copy queued beside this one may have been
// published since. done when the set is a duplicate (its job completed by
// ingestDuplicate, the post claiming the package unless it is in it
// already) or the lookup failed; err is then what River gets.
func (w *IngestMessageWorker) dedupBeforeDownload(ctx context.Context, job *river.Job[hoard.IngestMessageArgs], parts []messenger.Message, post hoard.PackageSource) (done bool, err error) {
	a := job.Args
	dup, rule, err := w.db.FindIngestDuplicate(ctx, a.ChannelID, remoteIDs(parts), post.MessageIDs, a.FileName, a.Size)
	if err == nil {
		return true, w.ingestDuplicate(ctx, job, dup.FileName, rule, func(tx *store.DB) error {
			if rule == store.DupSourceMessage {
				return nil // this very post is in the package already
			}
			_, err := tx.ClaimPackageSource(ctx, dup.ID, post)
			return err
		})
	}
	if hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return true, err
	}
	return false, nil
}

// dedupByHash applies dedup (d): the same bytes are already in the
// catalog, or (found when the transfer is created, handOver) being
// published from another source. Either way the earlier post becomes the
// package's source (ClaimPackageSource). done as dedupBeforeDownload's.
func (w *IngestMessageWorker) dedupByHash(ctx context.Context, job *river.Job[hoard.IngestMessageArgs], hash string, post hoard.PackageSource) (done bool, err error) {
	dup, err := w.db.FindPublishedByContentHash(ctx, hash)
	if err == nil {
		return true, w.ingestDuplicate(ctx, job, dup.FileName, store.DupContentHash, func(tx *store.DB) error {
			_, err := tx.ClaimPackageSource(ctx, dup.ID, post)
			return err
		})
	}
	if hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return true, err
	}
	return false, nil
}

// postedPhoto is a preview taken from the photo posted with a set: the
// bounded image and the photo's message id (preview_msg_id). The zero
// value is no preview.
type postedPhoto struct {
	data      []byte
	messageID int64
}

// photoPreview makes the photo posted with the set its preview, re-encoded
// like every preview: bounded, whatever was posted. When its download
// fails, preview_msg_id stays unset (SPEC rule 10): the failure is logged
// and the zero postedPhoto returned, never an error, because a missing
// picture is no reason to lose the set.
func (w *IngestMessageWorker) photoPreview(ctx context.Context, src *channelAccess, byID map[int]messenger.Message, a hoard.IngestMessageArgs, act *activity) postedPhoto {
	ph, ok := byID[int(a.PhotoMessageID)]
	if !ok || a.PhotoMessageID == 0 || ph.Photo == nil {
		return postedPhoto{}
	}
	act.set(ctx, hoard.RunActivity{Activity: "Preview of " + a.FileName, Step: "preview", ChannelID: a.ChannelID, TopicID: a.TopicID})
	data, err := src.account.DownloadThumbnail(ctx, src.peer, ph)
	if err == nil {
		// Re-encoded like every preview: bounded, whatever was posted.
		data, err = archive.MakeThumbnail(ctx, data, archive.ThumbnailOptions{})
	}
	if err == nil && len(data) > 0 {
		return postedPhoto{data: data, messageID: a.PhotoMessageID}
	}
	w.log.Warn("preview photo download failed", "file", a.FileName, "photo", a.PhotoMessageID, "err", err)
	return postedPhoto{}
}

// inspection is what inspecting a downloaded set decided: its catalog type
// and, for an archive no decoder can list, the note saying so
// (unlistableNote; "" otherwise).
type inspection struct {
	typ  hoard.ArchiveType
	note string
}

// inspectSet decides the downloaded set's type from its content (the name
// deciding when the content is not recognised); a failure to read the
// spool back is recorded as EXTRACT_FAILED.
func inspectSet(sp spooled, a hoard.IngestMessageArgs) (inspection, error) {
	det, err := detectType(sp.paths, a.Size, a.FileName, sp.sniffed)
	if err != nil {
		return inspection{}, failedAt(hoard.SkipExtractFailed, err)
	}
	typ := catalogType(det.Type, a.FileName)
	return inspection{typ: typ, note: unlistableNote(det, typ)}, nil
}

// planParts plans how the set is published: the destination's writer
// (preferring the account that read the set) and the split plan's parts,
// each at most the writer's upload limit as the platform reports it now
// (splitLimitFor). A part is re-sent when no byte
// changes and the reader may post into the destination (the same account,
// an unprotected channel and message); otherwise it is uploaded from the
// spool. Failures are recorded as UPLOAD_FAILED.
func (w *IngestMessageWorker) planParts(ctx context.Context, src *channelAccess, parts []messenger.Message, a hoard.IngestMessageArgs) (*channelAccess, []hoard.TransferPart, error) {
	wr, err := w.platform.writer(ctx, src.m.AccountID)
	if err != nil {
		return nil, nil, failedAt(hoard.SkipUploadFailed, err)
	}
	infos := make([]archive.PartInfo, len(parts))
	var largest int64
	for i, p := range parts {
		infos[i] = archive.PartInfo{Name: p.Document.FileName, Size: p.Document.Size}
		largest = max(largest, p.Document.Size)
	}
	ranges, err := archive.PlanSplit(a.FileName, w.transfers.splitLimitFor(ctx, wr, largest), infos)
	if err != nil {
		return nil, nil, failedAt(hoard.SkipUploadFailed, err)
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
	return wr, tparts, nil
}

// setTransfer is the transfer that publishes the set through writer wr in
// partCount parts: the spool files and their hash, and the draft of the
// package that verify_transfer indexes (type, inspection note, preview,
// source post and its category tag), so that nothing the download learnt
// is looked up again.
func setTransfer(a hoard.IngestMessageArgs, post hoard.PackageSource, wr *channelAccess, sp spooled, kind inspection, photo postedPhoto, partCount int) *hoard.Transfer {
	draft := hoard.Package{FileSize: a.Size, ArchiveType: kind.typ, ContentHash: sp.hash, PartCount: partCount,
		PreviewMsgID: photo.messageID, IngestionRunID: a.RunID}
	draft.SetSource(post)
	draft.InspectionNote = kind.note
	if post.Tag != "" {
		draft.Tags = []string{post.Tag}
	}
	return &hoard.Transfer{SourceChannelID: a.ChannelID, SourceMessageID: a.MessageID, IngestionRunID: a.RunID,
		AccountID: wr.m.AccountID, DestChannelID: wr.channel.ID, SpoolPaths: sp.paths, ContentHash: sp.hash, Draft: draft,
		PreviewData: photo.data}
}

// handOver hands the downloaded set over to its upload_part jobs in the
// transaction that completes the job: a new transfer and one job per part
// (the set's FAILED transfer, if any, replaced), or that FAILED transfer
// taken up when resumable allows, so the parts it posted are not posted
// again. handed is false when the set was not handed over: err says why,
// or is nil when the same bytes turned out to be published from another
// source meanwhile (store.ErrSameContent) and the set completed as a
// duplicate whose post claims that publication (claimContent).
func (w *IngestMessageWorker) handOver(ctx context.Context, job *river.Job[hoard.IngestMessageArgs], failed, t *hoard.Transfer, tparts []hoard.TransferPart, post hoard.PackageSource) (handed bool, err error) {
	a := job.Args
	resume, err := w.resumable(ctx, failed, t, tparts)
	if err != nil {
		return false, err
	}
	err = completeTx(ctx, w.db, job, func(tx *store.DB, client *river.Client[pgx.Tx]) error {
		if resume != nil {
			t.ID = failed.ID
			if err := tx.ResumeTransfer(ctx, t); err != nil {
				return err
			}
			return w.transfers.continueTransfer(ctx, tx, client, t, resume.parts, resume.present, job.MaxAttempts, true)
		}
		if failed != nil {
			if err := tx.DeleteTransfer(ctx, failed.ID); err != nil {
				return err
			}
		}
		if err := tx.CreateTransfer(ctx, t, tparts); err != nil {
			return err
		}
		return queueParts(ctx, tx, a.RunID, t.ID, partNumbers(len(tparts)), job.MaxAttempts)
	})
	if errors.Is(err, store.ErrSameContent) {
		return false, w.ingestDuplicate(ctx, job, err.Error(), store.DupContentHash, func(tx *store.DB) error {
			return claimContent(ctx, tx, t.ContentHash, post)
		})
	}
	return err == nil, err
}

// ingestDuplicate completes the job of a set found to be a duplicate (by
// rule, of the package or publication named of): claim, which lets an
// earlier post take the package's source, the run's count and the removal
// of the set's skipped record commit together with the job.
func (w *IngestMessageWorker) ingestDuplicate(ctx context.Context, job *river.Job[hoard.IngestMessageArgs], of, rule string, claim func(tx *store.DB) error) error {
	a := job.Args
	w.log.Info("duplicate content skipped", "file", a.FileName, "of", of, "rule", rule)
	err := completeTx(ctx, w.db, job, func(tx *store.DB, _ *river.Client[pgx.Tx]) error {
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
	w.catalog.metrics.Duplicate(rule)
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
func (w *IngestMessageWorker) resumable(ctx context.Context, failed, t *hoard.Transfer, plan []hoard.TransferPart) (*resumption, error) {
	if failed == nil || failed.ContentHash != t.ContentHash || failed.DestChannelID != t.DestChannelID ||
		failed.AccountID != t.AccountID {
		return nil, nil
	}
	parts, present, err := w.transfers.postedParts(ctx, failed)
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
	w.log.Info("taking up a failed publication", "file", t.Draft.FileName, "transfer", failed.ID, "posted", len(present))
	return &resumption{parts: parts, present: present}, nil
}

// spooled is a set downloaded into the spool: its part files in order, the
// SHA-256 over all of them (hex) and a Sniffer that saw the same bytes.
type spooled struct {
	paths   []string
	hash    string
	sniffed *archive.Sniffer
}

// download fetches every part into dir (part-000, part-001, …) and returns
// the paths, the SHA-256 over all parts in order and a Sniffer that saw the
// same bytes, both fed while the bytes arrive (no second pass). Stalls and
// broken connections resume from the last good offset, up to downloadTries
// times per part.
func (w *IngestMessageWorker) download(ctx context.Context, src *channelAccess, parts []messenger.Message, dir string, a hoard.IngestMessageArgs, act *activity, ft *fileTracker) (spooled, error) {
	ft.phase(ctx, hoard.PhaseDownloading, 0, 0, a.Size)
	paths := make([]string, len(parts))
	var state archive.HashState
	var done int64
	sniffer := archive.NewSniffer(0)
	for i, m := range parts {
		paths[i] = filepath.Join(dir, fmt.Sprintf("part-%03d", i))
		f, err := os.OpenFile(paths[i], os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o640)
		if err != nil {
			return spooled{}, fmt.Errorf("spool: %w", err)
		}
		hw, err := archive.NewHashingWriter(ctx, f, state, 0)
		if err != nil {
			f.Close()
			return spooled{}, err
		}
		hw.Observe(sniffer)
		req := messenger.DownloadRequest{Channel: src.peer, MessageID: m.ID, Document: *m.Document,
			Progress: func(n int64) {
				ft.progress(ctx, done+n)
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
			if rateLimited(err) || !errors.As(err, &de) || try >= downloadTries || ctx.Err() != nil {
				break
			}
			w.log.Warn("download interrupted; resuming", "file", m.Document.FileName, "offset", de.Offset, "try", try, "err", err)
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
			return spooled{}, failedAt(hoard.SkipDownloadFailed, err)
		}
		done += m.Document.Size
		w.catalog.metrics.Downloaded(m.Document.Size)
		state = state.NextPart()
	}
	h, err := state.NewHash()
	if err != nil {
		return spooled{}, err
	}
	return spooled{paths: paths, hash: hex.EncodeToString(h.Sum(nil)), sniffed: sniffer}, nil
}
