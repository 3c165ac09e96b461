package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
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

// Cold-channel backoff (SPEC rule 18). A channel or topic whose last scans
// found nothing is scanned less often: after backoffAfter empty scans in a
// row, only when backoffCycles(n) intervals have passed since its last
// scan. One that found archives or has retryable work pending is always
// scanned; so is everything in a cycle a user triggered.
const (
	backoffAfter     = 3
	backoffMaxCycles = 8
)

// shouldScan decides whether a scheduled cycle scans a channel or topic
// with scan state s; reason says why not.
func shouldScan(s hoard.ScanState, now time.Time, interval time.Duration, manual bool) (bool, string) {
	if manual || s.LastScanFoundArchives || s.LastScannedAt.IsZero() {
		return true, ""
	}
	since := now.Sub(s.LastScannedAt)
	if since < interval/2 {
		return false, "scanned recently and found nothing"
	}
	if s.ConsecutiveEmptyScans >= backoffAfter {
		cycles := min(s.ConsecutiveEmptyScans-backoffAfter+2, backoffMaxCycles)
		// 10 % slack: periodic cycles do not land on exact multiples.
		if since < time.Duration(cycles)*interval*9/10 {
			return false, fmt.Sprintf("idle for %d scans: scanned every %d cycles", s.ConsecutiveEmptyScans, cycles)
		}
	}
	return true, ""
}

// ScanChannelWorker runs ScanChannelArgs.
type ScanChannelWorker struct {
	river.WorkerDefaults[hoard.ScanChannelArgs]
	deps Deps
}

// Work implements river.Worker: it refreshes what the platform says of the
// channel, then scans a plain channel's history (when shouldScan lets it)
// or, for a forum, queues a scan_topic job per topic that needs one.
func (w *ScanChannelWorker) Work(ctx context.Context, job *river.Job[hoard.ScanChannelArgs]) error {
	d, db := &w.deps, w.deps.DB
	src, err := d.resolveScanMap(ctx, job.Args.MapID)
	if err != nil {
		return err
	}
	if !src.channel.IsActive {
		return nil
	}
	run, err := db.FindRun(ctx, job.Args.RunID)
	if err != nil && hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return fmt.Errorf("scan channel: find run %d: %w", job.Args.RunID, err) // transient: retried
	}
	manual := run != nil && run.Trigger != hoard.TriggerSchedule

	info, err := src.account.ChannelInfo(ctx, src.peer)
	if err != nil {
		return d.scanFailed(ctx, src, err)
	}
	if err := d.refreshChannel(ctx, src, info); err != nil {
		return err
	}
	d.accessRestored(ctx, db, src.channel)

	if !src.channel.IsForum {
		if ok, why := shouldScan(src.m.ScanState, d.Now(), d.WorkerInterval, manual); !ok {
			d.Logger.Debug("channel scan skipped", "channel", src.channel.Title, "reason", why)
			return nil
		}
		return scan(ctx, d, job, src, channelMark{m: src.m}, job.Args.RunID)
	}
	return d.queueTopicScans(ctx, job, src, manual)
}

// refreshChannel stores what changed of the channel on the platform
// (forum, protected, title) and the peer that follows from it, so that
// the scan reads the channel as it is now: one that became a forum is
// scanned by topics, one that became protected is not re-sent from.
func (d *Deps) refreshChannel(ctx context.Context, src *channelAccess, info messenger.Channel) error {
	if info.Forum == src.channel.IsForum && info.Protected == src.channel.IsProtected && info.Title == src.channel.Title {
		return nil
	}
	src.channel.IsForum, src.channel.IsProtected, src.channel.Title = info.Forum, info.Protected, info.Title
	if err := d.DB.UpsertChannel(ctx, src.channel); err != nil {
		return fmt.Errorf("scan channel: update channel: %w", err)
	}
	src.peer = peerOf(src.channel, src.m)
	return nil
}

// queueTopicScans lists a forum's topics and, in the transaction that
// completes the job, queues a scan_topic job for each topic that needs one
// (topicsToScan). Listing fails as a scan does (scanFailed).
func (d *Deps) queueTopicScans(ctx context.Context, job *river.Job[hoard.ScanChannelArgs], src *channelAccess, manual bool) error {
	act := &activity{deps: d, db: d.DB, runID: job.Args.RunID}
	act.set(ctx, hoard.RunActivity{Activity: "Listing topics of " + src.channel.Title, Step: "scanning",
		ChannelID: src.channel.ID, AccountChannelMapID: src.m.ID})
	topics, err := src.account.Topics(ctx, src.peer)
	if err != nil {
		return d.scanFailed(ctx, src, err)
	}
	params, err := d.topicsToScan(ctx, src, topics, job.Args.RunID, manual)
	if err != nil {
		return err
	}
	return completeTx(ctx, d.DB, job, func(tx *store.DB, client *river.Client[pgx.Tx]) error {
		if len(params) == 0 {
			return nil
		}
		_, err := client.InsertManyTx(ctx, tx.Tx(), params)
		return err
	})
}

// topicsToScan records the forum's topics (new ones, and renamed ones
// under their new name) and returns the scan_topic jobs of those that
// need a scan: fetching enabled, something after the watermark
// (topicIdle) and, in a scheduled cycle, not cold (shouldScan).
func (d *Deps) topicsToScan(ctx context.Context, src *channelAccess, topics []messenger.Topic, runID int64, manual bool) ([]river.InsertManyParams, error) {
	known, err := d.DB.ListTopics(ctx, src.m.ID)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]hoard.TopicProgress, len(known))
	for _, t := range known {
		byID[t.TopicID] = t
	}
	var params []river.InsertManyParams
	err = d.DB.InTx(ctx, func(tx *store.DB) error {
		for _, t := range topics {
			p, seen := byID[int64(t.ID)]
			if !seen || p.TopicName != t.Title {
				got, err := tx.UpsertTopic(ctx, src.m.ID, int64(t.ID), t.Title, t.ID == messenger.GeneralTopicID)
				if err != nil {
					return err
				}
				p = *got
			}
			if !p.FetchEnabled {
				continue
			}
			if topicIdle(t, p) {
				continue
			}
			if ok, _ := shouldScan(p.ScanState, d.Now(), d.WorkerInterval, manual); !ok {
				continue
			}
			params = append(params, river.InsertManyParams{Args: hoard.ScanTopicArgs{RunID: runID, MapID: src.m.ID,
				TopicID: int64(t.ID), TopMessageID: int64(t.TopMessageID)}})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scan channel: topics: %w", err)
	}
	return params, nil
}

// topicIdle reports a topic with nothing after its watermark: the topic
// list carries each topic's newest message, so an idle topic costs no
// history call at all. Whether the last scan found archives does not
// matter: what it found was queued and the watermark moved past it (a set
// held back keeps the watermark below it, so its topic is not idle).
func topicIdle(t messenger.Topic, p hoard.TopicProgress) bool {
	return t.TopMessageID != 0 && int64(t.TopMessageID) <= p.LastProcessedMessageID
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

// resolveScanMap resolves the map a scan job names; a map deleted since the
// job was queued cancels the job, any other failure retries it
// (jobOutcome).
func (d *Deps) resolveScanMap(ctx context.Context, mapID int64) (*channelAccess, error) {
	src, err := d.resolveMap(ctx, d.DB, mapID)
	if err != nil {
		return nil, jobOutcome(fmt.Errorf("scan map %d: %w", mapID, err))
	}
	return src, nil
}

// scanFailed handles a platform error of a scan: a rate limit snoozes, lost
// access is recorded (and the job ends: the channel's other work and the
// other channels go on), anything else is retried.
func (d *Deps) scanFailed(ctx context.Context, src *channelAccess, err error) error {
	if serr, ok := snoozeIfLimited(err); ok {
		return serr
	}
	if errors.Is(err, messenger.ErrAccessLost) {
		d.accessLost(ctx, d.DB, src.channel, err)
		return nil
	}
	return fmt.Errorf("scan %s: %w", src.channel.Title, err)
}

// ScanTopicWorker runs ScanTopicArgs.
type ScanTopicWorker struct {
	river.WorkerDefaults[hoard.ScanTopicArgs]
	deps Deps
}

// Work implements river.Worker.
func (w *ScanTopicWorker) Work(ctx context.Context, job *river.Job[hoard.ScanTopicArgs]) error {
	d, db := &w.deps, w.deps.DB
	src, err := d.resolveScanMap(ctx, job.Args.MapID)
	if err != nil {
		return err
	}
	topic, err := db.FindTopic(ctx, src.m.ID, job.Args.TopicID)
	if err != nil {
		return jobOutcome(fmt.Errorf("scan topic: %w", err)) // gone: cancelled; else retried
	}
	if !topic.FetchEnabled || !src.channel.IsActive {
		return nil
	}
	return scan(ctx, d, job, src, topicMark{mapID: src.m.ID, t: topic, newest: job.Args.TopMessageID}, job.Args.RunID)
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
func (d *Deps) planSets(ctx context.Context, src *channelAccess, topic *hoard.TopicProgress, sets []archive.Set,
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
func (d *Deps) nextScanState(ctx context.Context, src *channelAccess, plan scanPlan, state hoard.ScanState, now time.Time) (hoard.ScanState, error) {
	pending, err := d.DB.CountPendingSkipped(ctx, src.channel.ID)
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
func (d *Deps) planSet(ctx context.Context, src *channelAccess, set archive.Set, byID map[int64]messenger.Message,
	photos []archive.Photo, topic *hoard.TopicProgress, runID int64) (out setOutcome, err error) {
	db := d.DB
	topicID := topicIDOf(topic)
	var name string
	skip := func(reason hoard.SkipReason, msg string) setOutcome {
		return setOutcome{skip: &hoard.SkippedPackage{SourceChannelID: src.channel.ID, SourceMessageID: set.FirstMessageID,
			SourceTopicID: topicID, AccountChannelMapID: src.m.ID, FileName: hoard.StorableFileName(name), FileSize: set.TotalSize,
			PartCount: len(set.Parts), Reason: reason, Status: hoard.SkipGaveUp, MaxAttempts: d.MaxSkipAttempts,
			LastError: truncate(msg, 2000)}}
	}
	defer func() {
		if p := recover(); p != nil {
			err = hoard.Errorf(hoard.EINVALID, "%v", p)
		}
		if err != nil && hoard.ErrorCode(err) == hoard.EINVALID {
			d.Logger.Warn("message skipped by the scan", "channel", src.channel.Title, "message", set.FirstMessageID, "err", err)
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
		d.Logger.Debug("duplicate skipped before download", "file", name, "rule", rule, "package", dup.ID)
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
	return setOutcome{job: &river.InsertManyParams{Args: args, InsertOpts: withMaxAttempts(args.InsertOpts(), d.MaxSkipAttempts)}}, nil
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
