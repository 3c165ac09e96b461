package jobs

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/archive"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// scanner is what scan_channel and scan_topic share: reading a channel's
// or topic's history after its watermark (scanHistory, scan_pages.go),
// deciding each set found, and committing the decisions with the
// watermark.
type scanner struct {
	db       *store.DB
	log      *slog.Logger
	platform *platform
	progress *progress
	catalog  *catalog
	notices  *notices
	// settle is Deps.SettleTime, interval WORKER_INTERVAL_MINUTES,
	// maxAttempts WORKER_MAX_SKIP_ATTEMPTS; clock is the clock (time.Now
	// when nil).
	settle      time.Duration
	interval    time.Duration
	maxAttempts int
	clock       func() time.Time
}

// now is the scanner's time now.
func (s *scanner) now() time.Time {
	if s.clock == nil {
		return time.Now()
	}
	return s.clock()
}

// resolve resolves the map a scan job names; a map deleted since the job
// was queued is a lookup that cancels the job (lookup).
func (s *scanner) resolve(ctx context.Context, mapID int64) (*channelAccess, error) {
	src, err := s.platform.resolveMap(ctx, mapID)
	if err != nil {
		return nil, lookup(fmt.Errorf("scan map %d: %w", mapID, err))
	}
	return src, nil
}

// scanFailed is a platform error of a scan of src, named after the
// channel.
func scanFailed(src *channelAccess, err error) error {
	return fmt.Errorf("scan %s: %w", src.channel.Title, err)
}

// scanSubject is a scanned channel as the subject of its scan's failures:
// lost access is recorded on it (accessLost), nothing else.
type scanSubject struct {
	notices *notices
	channel *hoard.Channel
}

// failing is the subject of the failures of a scan of src.
func (s *scanner) failing(src *channelAccess) *scanSubject {
	return &scanSubject{notices: s.notices, channel: src.channel}
}

// failed implements subject.
func (s *scanSubject) failed(ctx context.Context, f failure) error {
	if f.accessLost {
		s.notices.accessLost(ctx, s.channel, f.err)
	}
	return nil
}

// nextWatermark is where a scan leaves the watermark: after the newest
// message it saw (maxID) or the newest the topic list named (top, 0 when
// unknown), but before the first set held back (hold, 0 when none).
func nextWatermark(maxID, top, hold int64) int64 {
	mark := max(maxID, top)
	if hold != 0 {
		mark = min(mark, hold-1)
	}
	return mark
}

// watermark is where a scan reads from and what it advances: a channel
// map's, for a channel scanned whole (channelMark), or one forum topic's
// (topicMark). The scan is one piece of code for both; what differs
// between them is here.
type watermark interface {
	// position is the newest message id processed so far and the state
	// the last scan left (cold-channel backoff).
	position() (last int64, state hoard.ScanState)
	// history is the platform request for the messages after the
	// watermark.
	history() messenger.HistoryQuery
	// next is where the scan leaves the watermark (nextWatermark): after
	// the newest message it saw (maxID) but before the first set held back
	// (hold, 0 when none).
	next(maxID, hold int64) int64
	// advance moves the watermark to mark and records the scan state in
	// tx, the transaction that enqueues the work for the messages below
	// mark, so that no message is forgotten.
	advance(ctx context.Context, tx *store.DB, mark int64, state hoard.ScanState) error
	// progress moves the watermark to mark in tx, the transaction of a
	// page of a scan not finished yet, and records that the page queued
	// work when found (ScanState.PartialScanFound); the scan state is
	// left to the scan's end.
	progress(ctx context.Context, tx *store.DB, mark int64, found bool) error
	// topic is the forum topic scanned, nil for a channel scanned whole: it
	// names the sets' source posts and skipped records.
	topic() *hoard.TopicProgress
	// scanning is the run's live activity while src is scanned.
	scanning(src *channelAccess) hoard.RunActivity
}

// channelMark is the watermark of a channel scanned whole, kept on the
// account's map of it.
type channelMark struct {
	m *hoard.ChannelMap
}

// position implements watermark: the map's.
func (c channelMark) position() (int64, hoard.ScanState) {
	return c.m.LastProcessedMessageID, c.m.ScanState
}

// history implements watermark: the channel's messages after the map's
// watermark.
func (c channelMark) history() messenger.HistoryQuery {
	return messenger.HistoryQuery{AfterID: int(c.m.LastProcessedMessageID)}
}

// next implements watermark: a channel has no topic list naming its
// newest message.
func (c channelMark) next(maxID, hold int64) int64 { return nextWatermark(maxID, 0, hold) }

// advance implements watermark on the map.
func (c channelMark) advance(ctx context.Context, tx *store.DB, mark int64, state hoard.ScanState) error {
	if err := tx.AdvanceWatermark(ctx, c.m.ID, mark); err != nil {
		return err
	}
	return tx.SetMapScanState(ctx, c.m.ID, state)
}

// progress implements watermark on the map.
func (c channelMark) progress(ctx context.Context, tx *store.DB, mark int64, found bool) error {
	if err := tx.AdvanceWatermark(ctx, c.m.ID, mark); err != nil {
		return err
	}
	if found {
		return tx.MarkMapPartialScanFound(ctx, c.m.ID)
	}
	return nil
}

// topic implements watermark: no topic.
func (c channelMark) topic() *hoard.TopicProgress { return nil }

// scanning implements watermark: the channel's title.
func (c channelMark) scanning(src *channelAccess) hoard.RunActivity {
	return hoard.RunActivity{Activity: "Scanning " + src.channel.Title, Step: "scanning",
		ChannelID: src.channel.ID, AccountChannelMapID: src.m.ID}
}

// topicMark is the watermark of one forum topic t of map mapID, kept on the
// topic's progress row. newest is the topic's newest message id from the
// topic list (0 when unknown): the watermark advances at least that far.
type topicMark struct {
	mapID  int64
	t      *hoard.TopicProgress
	newest int64
}

// position implements watermark: the topic's.
func (m topicMark) position() (int64, hoard.ScanState) {
	return m.t.LastProcessedMessageID, m.t.ScanState
}

// history implements watermark: the topic's messages after its watermark.
func (m topicMark) history() messenger.HistoryQuery {
	return messenger.HistoryQuery{TopicID: int(m.t.TopicID), AfterID: int(m.t.LastProcessedMessageID)}
}

// next implements watermark: at least as far as the topic list's newest
// message, so that a topic whose last messages are no candidates counts as
// idle next time (topicIdle).
func (m topicMark) next(maxID, hold int64) int64 { return nextWatermark(maxID, m.newest, hold) }

// advance implements watermark on the topic's progress row.
func (m topicMark) advance(ctx context.Context, tx *store.DB, mark int64, state hoard.ScanState) error {
	if err := tx.AdvanceTopicWatermark(ctx, m.mapID, m.t.TopicID, mark); err != nil {
		return err
	}
	return tx.SetTopicScanState(ctx, m.mapID, m.t.TopicID, state)
}

// progress implements watermark on the topic's progress row.
func (m topicMark) progress(ctx context.Context, tx *store.DB, mark int64, found bool) error {
	if err := tx.AdvanceTopicWatermark(ctx, m.mapID, m.t.TopicID, mark); err != nil {
		return err
	}
	if found {
		return tx.MarkTopicPartialScanFound(ctx, m.mapID, m.t.TopicID)
	}
	return nil
}

// topic implements watermark.
func (m topicMark) topic() *hoard.TopicProgress { return m.t }

// scanning implements watermark: the channel's title and the topic's name.
func (m topicMark) scanning(src *channelAccess) hoard.RunActivity {
	return hoard.RunActivity{Activity: "Scanning " + src.channel.Title + " › " + m.t.TopicName, Step: "scanning",
		ChannelID: src.channel.ID, TopicID: m.t.TopicID, AccountChannelMapID: src.m.ID}
}

// topicIDOf is the id of topic, 0 for a channel scanned whole (nil), as
// skipped records, job args and logs carry it.
func topicIDOf(topic *hoard.TopicProgress) int64 {
	if topic == nil {
		return 0
	}
	return topic.TopicID
}

// scanPlan is what a commit of a scan writes: the run's counters, the
// ingest_message jobs, the skipped records, the duplicates' claims on
// their packages, and (at the scan's end) hold, the first set held back (0
// when none). dupRules are told to the metrics once the commit is done.
type scanPlan struct {
	counters hoard.RunCounters
	params   []river.InsertManyParams
	skips    []hoard.SkippedPackage
	dupRules []string
	claims   []sourceClaim
	hold     int64
}

// planSets applies the rules that need no bytes to each decided set
// (planSet), with the candidates' messages byID and the photos read for
// their previews; re-posts of the same name and size among the messages
// read (rules a and c, set aside by GroupSets) are duplicates.
func (d *scanner) planSets(ctx context.Context, src *channelAccess, topic *hoard.TopicProgress, sets []archive.Set,
	byID map[int64]messenger.Message, photos []archive.Photo, runID int64) (scanPlan, error) {
	var plan scanPlan
	for _, set := range sets {
		plan.counters.ArchivesFound += 1 + len(set.Duplicates)
		plan.counters.Duplicates += len(set.Duplicates)
		for range set.Duplicates {
			plan.dupRules = append(plan.dupRules, store.DupNameAndSize)
		}
		out, err := d.planSet(ctx, src, set, byID, photos, topic, runID)
		if err != nil {
			return scanPlan{}, err
		}
		switch {
		case out.job != nil:
			plan.params = append(plan.params, *out.job)
		case out.skip != nil:
			plan.counters.Skipped++
			plan.skips = append(plan.skips, *out.skip)
		case out.duplicate != "":
			plan.counters.Duplicates++
			plan.dupRules = append(plan.dupRules, out.duplicate)
			if out.claim != nil {
				plan.claims = append(plan.claims, *out.claim)
			}
		default: // skipped before, waiting for a manual retry
			plan.counters.Skipped++
		}
	}
	return plan, nil
}

// empty reports a plan that writes nothing but counters.
func (plan *scanPlan) empty() bool {
	return len(plan.params) == 0 && len(plan.skips) == 0 && len(plan.claims) == 0 && plan.counters == hoard.RunCounters{}
}

// nextScanState is the scan state a scan as of now records, from the
// state the last one left: it found something when it queued work (in its
// last commit or, PartialScanFound, an earlier one), held a set back or
// the channel has skipped sets still pending; a scan that found nothing
// adds one to the empty scans in a row (cold-channel backoff).
func (d *scanner) nextScanState(ctx context.Context, src *channelAccess, plan scanPlan, state hoard.ScanState, now time.Time) (hoard.ScanState, error) {
	pending, err := d.db.CountPendingSkipped(ctx, src.channel.ID)
	if err != nil {
		return hoard.ScanState{}, err
	}
	found := len(plan.params) > 0 || plan.hold != 0 || pending > 0 || state.PartialScanFound
	next := hoard.ScanState{LastScannedAt: now, LastScanFoundArchives: found}
	if !found {
		next.ConsecutiveEmptyScans = state.ConsecutiveEmptyScans + 1
	}
	return next, nil
}

// commit writes the plan in tx: the ingest_message jobs, the skipped
// records, the claims and the run's counters. The caller moves the
// watermark in the same transaction.
func (plan *scanPlan) commit(ctx context.Context, tx *store.DB, client *river.Client[pgx.Tx], runID int64) error {
	if len(plan.params) > 0 {
		if _, err := client.InsertManyTx(ctx, tx.Tx(), plan.params); err != nil {
			return fmt.Errorf("enqueue ingestion: %w", err)
		}
	}
	for i := range plan.skips {
		if err := tx.UpsertSkippedPackage(ctx, &plan.skips[i]); err != nil {
			return err
		}
	}
	// In package order: two scans claiming the same packages never
	// wait for each other in a circle (a deadlock).
	slices.SortFunc(plan.claims, func(a, b sourceClaim) int { return cmp.Compare(a.packageID, b.packageID) })
	for _, c := range plan.claims {
		if _, err := tx.ClaimPackageSource(ctx, c.packageID, c.post); err != nil && hoard.ErrorCode(err) != hoard.ENOTFOUND {
			return err
		}
	}
	if runID != 0 {
		if err := tx.AddRunCounters(ctx, runID, plan.counters); err != nil && hoard.ErrorCode(err) != hoard.ENOTFOUND {
			return err
		}
	}
	return nil
}

// setOutcome is what a scan does with one settled set: queue its
// ingest_message job, record it as skipped, count it as a duplicate (by
// the dedup rule that matched, with the claim of its post on the package),
// or nothing (it waits for a manual retry).
type setOutcome struct {
	job       *river.InsertManyParams
	skip      *hoard.SkippedPackage
	duplicate string
	claim     *sourceClaim
}

// sourceClaim is a duplicate's post, which becomes the source of the
// package it duplicates when it was posted earlier
// (store.ClaimPackageSource).
type sourceClaim struct {
	packageID int64
	post      hoard.PackageSource
}

// planSet applies the rules that need no bytes to one settled set. What
// one set's own content causes — a panic, or an error the store calls
// invalid input — is that set's alone: it becomes a SKIPPED record saying
// why, and the scan goes on with the others. Any other error (the database
// is down, say) fails the scan, which River retries.
func (d *scanner) planSet(ctx context.Context, src *channelAccess, set archive.Set, byID map[int64]messenger.Message,
	photos []archive.Photo, topic *hoard.TopicProgress, runID int64) (out setOutcome, err error) {
	db := d.db
	topicID := topicIDOf(topic)
	var name string
	skip := func(reason hoard.SkipReason, msg string) setOutcome {
		return setOutcome{skip: &hoard.SkippedPackage{SourceChannelID: src.channel.ID, SourceMessageID: set.FirstMessageID,
			SourceTopicID: topicID, AccountChannelMapID: src.m.ID, FileName: hoard.StorableFileName(name), FileSize: set.TotalSize,
			PartCount: len(set.Parts), Reason: reason, Status: hoard.SkipGaveUp, MaxAttempts: d.maxAttempts,
			LastError: truncate(msg, 2000)}}
	}
	defer func() {
		if p := recover(); p != nil {
			err = hoard.Errorf(hoard.EINVALID, "%v", p)
		}
		if err != nil && hoard.ErrorCode(err) == hoard.EINVALID {
			d.log.Warn("message skipped by the scan", "channel", src.channel.Title, "message", set.FirstMessageID, "err", err)
			out, err = skip(hoard.SkipOther, "This message could not be read: "+err.Error()), nil
		}
	}()
	name = hoard.StorableFileName(packageName(set))
	ids := make([]int64, len(set.Parts))
	remote := make([]string, 0, len(set.Parts))
	parts := make([]hoard.SourcePart, len(set.Parts))
	for i, p := range set.Parts {
		ids[i] = p.ID
		parts[i] = hoard.SourcePart{MessageID: p.ID, Name: hoard.StorableFileName(p.Name), Size: p.Size}
		if doc := byID[p.ID].Document; doc != nil {
			remote = append(remote, doc.RemoteUniqueID())
		}
	}
	if prev, err := db.FindSkippedBySource(ctx, src.channel.ID, set.FirstMessageID); err == nil && prev.Status == hoard.SkipGaveUp {
		return setOutcome{}, nil // waits for a manual retry
	} else if err != nil && hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return setOutcome{}, err
	}
	if !set.Complete {
		return skip(hoard.SkipIncompleteSet, "Incomplete multi-part set: "+set.Reason), nil
	}
	if dup, rule, err := db.FindIngestDuplicate(ctx, src.channel.ID, remote, ids, name, set.TotalSize); err == nil {
		d.log.Debug("duplicate skipped before download", "file", name, "rule", rule, "package", dup.ID)
		out := setOutcome{duplicate: rule}
		if rule != store.DupSourceMessage {
			post := sourcePost(src.channel, topic, name, set.FirstMessageID, byID[set.Parts[0].ID], parts)
			out.claim = &sourceClaim{packageID: dup.ID, post: post}
		}
		return out, nil
	} else if hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return setOutcome{}, err
	}
	args := hoard.IngestMessageArgs{RunID: runID, ChannelID: src.channel.ID, MessageID: set.FirstMessageID,
		MapID: src.m.ID, TopicID: topicID, FileName: name, Size: set.TotalSize, Parts: parts}
	first := byID[set.FirstMessageID]
	if ph, ok := archive.MatchPhoto(first.GroupedID, name, first.Date, 0, photos); ok {
		args.PhotoMessageID = ph.ID
	}
	return setOutcome{job: &river.InsertManyParams{Args: args, InsertOpts: withMaxAttempts(args.InsertOpts(), d.maxAttempts)}}, nil
}

// packageName is the file name a set is catalogued under: the file's own
// name for a single file, else the base name with the archive's extension
// ("x.rar" for x.part1.rar … x.part3.rar).
func packageName(s archive.Set) string {
	if !s.MultiPart() {
		return s.Parts[0].Name
	}
	// Byte-split sets (x.zip.001, model.stl.001, and hoard's own splits)
	// are named by the file that was split.
	switch s.Scheme {
	case archive.ZipNumbered, archive.SevenZipNumbered, archive.Numbered:
		if info, ok := archive.ParseName(s.Parts[0].Name); ok && info.Stem != "" {
			return info.Stem
		}
	}
	ext := ""
	switch s.Type {
	case archive.ZIP:
		ext = ".zip"
	case archive.RAR:
		ext = ".rar"
	case archive.SevenZ:
		ext = ".7z"
	}
	if ext != "" && !strings.EqualFold(path.Ext(s.BaseName), ext) {
		return s.BaseName + ext
	}
	return s.BaseName
}
