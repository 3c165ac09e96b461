package jobs

import (
	"context"
	"fmt"
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

// A scan reads a history oldest first, a page at a time, and commits after
// every page what that page let it decide: the ingest_message jobs of the
// sets decided, and the watermark moved to just before the first set it
// has not decided. A flood wait that snoozes the job, a crash or a restart
// then costs only the pages read since the last commit: the scan that
// resumes starts at the watermark. A set is decided once its newest part is
// the settle time older than the newest message read so far (at the live
// end, than now: SPEC's settle rule, as if the channel had been scanned
// when that message was posted), so no page boundary and no resume splits
// it.

// pageSettleFloor is the least settle time within a history: a set whose
// newest part was posted less than this before the newest message read may
// still go on in the next page, whatever the configured settle time (0
// included), so it is not decided yet. At the live end the configured
// settle time alone applies.
const pageSettleFloor = time.Minute

// scanHistory reads the history of a channel or forum topic after its watermark
// wm, page by page oldest first, commits each page's decisions
// (historyScan.commitPage) and completes job in the last page's commit
// (finishScan). A flood wait longer than the inline one snoozes
// the job; what was committed stays. It is generic only to complete job,
// of either scan kind, in that transaction.
func scanHistory[T river.JobArgs](ctx context.Context, d *scanner, job *river.Job[T], src *channelAccess, wm watermark, runID int64) error {
	act := d.progress.run(runID)
	act.set(ctx, wm.scanning(src))
	s := newHistoryScan(d, src, wm, runID)
	start := time.Now()
	for {
		page, err := src.account.HistoryPage(ctx, src.peer, s.query())
		if err != nil {
			return scanFailed(src, err)
		}
		s.add(page)
		if !page.More {
			return finishScan(ctx, s, job)
		}
		if err := s.commitPage(ctx); err != nil {
			return err
		}
		progress := wm.scanning(src)
		progress.Activity += fmt.Sprintf(" (%d messages read, up to message %d)", s.read, s.last)
		act.set(ctx, progress)
		// Past three quarters of its time, the job continues in a fresh
		// attempt rather than fail this one on its timeout.
		if deadline, ok := ctx.Deadline(); ok && time.Since(start) > deadline.Sub(start)*3/4 {
			d.log.Info("scan continues in a new attempt", "channel", src.channel.Title, "watermark", s.mark)
			return river.JobSnooze(time.Second)
		}
	}
}

// historyScan is a scan under way: the committed watermark, what it read
// since and has not decided yet, and what it did so far (for the log).
type historyScan struct {
	d     *scanner
	src   *channelAccess
	wm    watermark
	runID int64
	state hoard.ScanState // as the last finished scan left it

	mark   int64     // the committed watermark
	last   int64     // the newest message id read
	newest time.Time // the newest post date read
	// cands are the candidate files read and not decided yet, byID their
	// messages; photos are every photo read that a set may still match.
	cands  []archive.Message
	byID   map[int64]messenger.Message
	photos []archive.Photo
	// uncounted are the ids of the messages read that the run's
	// MessagesScanned does not count yet (it counts a message once,
	// when the watermark passes it or the scan ends).
	uncounted []int64
	// singles are the single files this attempt decided, by lower-cased
	// name and size (repostKey): a later page's re-post of one is a
	// duplicate, as GroupSets makes it within what it groups.
	singles map[string]bool
	queued  bool // a commit of this scan queued work
	// pages, read, totals and queuedN are what this attempt did, for the
	// run's activity and the log.
	pages   int
	read    int
	totals  hoard.RunCounters
	queuedN int
}

// newHistoryScan starts a scan at wm's watermark, with the scan state the
// last finished scan left.
func newHistoryScan(d *scanner, src *channelAccess, wm watermark, runID int64) *historyScan {
	mark, state := wm.position()
	return &historyScan{d: d, src: src, wm: wm, runID: runID, state: state, mark: mark, last: mark,
		byID: map[int64]messenger.Message{}, singles: map[string]bool{}}
}

// query is the request for the next page: after the newest message read.
func (s *historyScan) query() messenger.HistoryQuery {
	q := s.wm.history()
	q.AfterID = int(s.last)
	return q
}

// add takes in a page: candidate documents and photos are kept for the
// decisions, every message for the run's count.
func (s *historyScan) add(page messenger.HistoryPage) {
	s.pages++
	s.read += len(page.Messages)
	s.last = max(s.last, int64(page.Last))
	for _, m := range page.Messages {
		id := int64(m.ID)
		s.uncounted = append(s.uncounted, id)
		if m.Date.After(s.newest) {
			s.newest = m.Date
		}
		switch {
		case m.Document != nil && archive.IsCandidate(m.Document.FileName):
			s.cands = append(s.cands, archive.Message{ID: id, Name: m.Document.FileName, Size: m.Document.Size, Date: m.Date})
			s.byID[id] = m
		case m.Photo != nil:
			s.photos = append(s.photos, archive.Photo{ID: id, AlbumID: m.GroupedID, Caption: m.Text, Date: m.Date})
		}
	}
}

// decide groups the candidates not decided yet into sets and splits them
// (splitSettled) into those settled as of ref and the others, which hold
// the watermark before them (hold, 0 when none). A photo of an album
// posted less than settle before ref holds it too: the album's archive
// may follow in the next page, and a resume that started past the photo
// would lose the preview.
func (s *historyScan) decide(ref time.Time, settle time.Duration) (decided, held []archive.Set, hold int64) {
	var photoHold int64
	for _, p := range s.photos {
		if p.AlbumID != 0 && p.Date.After(ref.Add(-settle)) && p.ID > s.mark && (photoHold == 0 || p.ID < photoHold) {
			photoHold = p.ID
		}
	}
	sets := archive.GroupSets(s.cands)
	return splitSettled(sets, func(set archive.Set) bool { return set.Settled(ref, settle) }, s.albumFloor, photoHold)
}

// albumFloor is the lowest id a set's preview may have among the photos
// kept above the watermark: its first message's album's photos precede it
// or follow it, and a resume that started past them would lose the
// preview (one below the watermark is lost to a resume already).
func (s *historyScan) albumFloor(set archive.Set) int64 {
	floor := set.FirstMessageID
	if album := s.byID[set.FirstMessageID].GroupedID; album != 0 {
		for _, p := range s.photos {
			if p.AlbumID == album && p.ID > s.mark {
				floor = min(floor, p.ID)
			}
		}
	}
	return floor
}

// splitSettled splits sets (in FirstMessageID order) into those that can
// be decided now and those held back, and returns hold, the first message
// id the watermark must stay below (0 when none is held), which starts at
// start (0: none). A set is held when it is not settled, or when any of
// its messages lies at or above hold (deciding it would leave part of it
// for a resume to read again as a set of its own); a held set's floor (its
// first message, or a photo of its album before it) lowers hold. Pure.
func splitSettled(sets []archive.Set, settled func(archive.Set) bool, floor func(archive.Set) int64,
	start int64) (decided, held []archive.Set, hold int64) {
	hold = start
	holds := make([]bool, len(sets))
	lower := func(i int) {
		holds[i] = true
		if f := floor(sets[i]); hold == 0 || f < hold {
			hold = f
		}
	}
	for i, set := range sets {
		if !settled(set) {
			lower(i)
		}
	}
	for changed := hold != 0; changed; {
		changed = false
		for i, set := range sets {
			if !holds[i] && lastMessageID(set) >= hold {
				lower(i)
				changed = true
			}
		}
	}
	for i, set := range sets {
		if holds[i] {
			held = append(held, set)
		} else {
			decided = append(decided, set)
		}
	}
	return decided, held, hold
}

// lastMessageID is the newest message of a set: parts, re-posts and
// conflicting posts alike.
func lastMessageID(set archive.Set) int64 {
	var last int64
	for _, p := range set.Parts {
		last = max(last, p.ID)
	}
	for _, m := range set.Duplicates {
		last = max(last, m.ID)
	}
	for _, m := range set.Conflicts {
		last = max(last, m.ID)
	}
	return last
}

// commitPage decides what the pages read so far settle, and in one
// transaction queues the decided sets' work and moves the watermark to
// just before the first set held back (or past everything read). Sets
// are decided against the newest post read, at least pageSettleFloor
// back.
func (s *historyScan) commitPage(ctx context.Context) error {
	decided, _, hold := s.decide(s.newest, max(s.d.settle, pageSettleFloor))
	plan, err := s.plan(ctx, decided)
	if err != nil {
		return err
	}
	mark := s.last
	if hold != 0 {
		mark = min(mark, hold-1)
	}
	mark = max(mark, s.mark)
	counted := s.countUpTo(mark)
	plan.counters.MessagesScanned = counted
	found := len(plan.params) > 0
	if mark == s.mark && plan.empty() {
		return nil
	}
	err = s.d.db.InTx(ctx, func(tx *store.DB) error {
		if err := plan.commit(ctx, tx, river.ClientFromContext[pgx.Tx](ctx), s.runID); err != nil {
			return err
		}
		return s.wm.progress(ctx, tx, mark, found)
	})
	if err != nil {
		return fmt.Errorf("scan %s: commit a page: %w", s.src.channel.Title, err)
	}
	s.committed(plan, decided, counted)
	s.mark = mark
	s.queued = s.queued || found
	s.prunePhotos()
	return nil
}

// finishScan decides what is left as of now (the settle rule at the live
// end) and, in the transaction that completes job, queues its work, moves
// the watermark (watermark.next: before the first set held back) and
// records the scan state, which counts what earlier commits of the scan
// queued.
func finishScan[T river.JobArgs](ctx context.Context, s *historyScan, job *river.Job[T]) error {
	d := s.d
	now := d.now()
	decided, held, hold := s.decide(now, d.settle)
	plan, err := s.plan(ctx, decided)
	if err != nil {
		return err
	}
	for _, set := range held {
		plan.counters.ArchivesFound += 1 + len(set.Duplicates)
		plan.counters.HeldBack += 1 + len(set.Duplicates)
	}
	if len(held) > 0 { // a recent album photo alone is nothing found
		plan.hold = hold
	}
	plan.counters.MessagesScanned = len(s.uncounted)
	mark := max(s.wm.next(s.last, hold), s.mark)
	state := s.state
	state.PartialScanFound = state.PartialScanFound || s.queued
	next, err := d.nextScanState(ctx, s.src, plan, state, now)
	if err != nil {
		return err
	}
	err = completeTx(ctx, d.db, job, func(tx *store.DB, client *river.Client[pgx.Tx]) error {
		if err := plan.commit(ctx, tx, client, s.runID); err != nil {
			return err
		}
		return s.wm.advance(ctx, tx, mark, next)
	})
	if err != nil {
		return fmt.Errorf("scan %s: %w", s.src.channel.Title, err)
	}
	s.committed(plan, decided, len(s.uncounted))
	d.log.Info("scanned", "channel", s.src.channel.Title, "topic", topicIDOf(s.wm.topic()), "pages", s.pages,
		"messages", s.totals.MessagesScanned, "sets", s.totals.ArchivesFound, "queued", s.queuedN,
		"duplicates", s.totals.Duplicates, "held", hold != 0, "watermark", mark)
	return nil
}

// plan plans the decided sets (scanner.planSets), but for re-posts of single
// files an earlier commit of this attempt decided: those count as
// duplicates by name and size.
func (s *historyScan) plan(ctx context.Context, decided []archive.Set) (scanPlan, error) {
	var fresh, reposts []archive.Set
	for _, set := range decided {
		if k, ok := repostKey(set); ok && s.singles[k] {
			reposts = append(reposts, set)
		} else {
			fresh = append(fresh, set)
		}
	}
	plan, err := s.d.planSets(ctx, s.src, s.wm.topic(), fresh, s.byID, s.photos, s.runID)
	if err != nil {
		return scanPlan{}, err
	}
	for _, set := range reposts {
		n := 1 + len(set.Duplicates)
		plan.counters.ArchivesFound += n
		plan.counters.Duplicates += n
		for range n {
			plan.dupRules = append(plan.dupRules, store.DupNameAndSize)
		}
	}
	return plan, nil
}

// repostKey is a single file's lower-cased name and size; ok is false for
// a multi-part set.
func repostKey(set archive.Set) (string, bool) {
	if set.MultiPart() || len(set.Parts) != 1 {
		return "", false
	}
	return fmt.Sprintf("%s|%d", strings.ToLower(set.Parts[0].Name), set.Parts[0].Size), true
}

// countUpTo is how many of the messages read and not counted yet lie at
// or below mark.
func (s *historyScan) countUpTo(mark int64) int {
	n := 0
	for _, id := range s.uncounted {
		if id <= mark {
			n++
		}
	}
	return n
}

// committed forgets what a commit wrote: the decided sets' candidates and
// the messages counted; and adds the plan to the scan's totals.
func (s *historyScan) committed(plan scanPlan, decided []archive.Set, counted int) {
	done := map[int64]bool{}
	for _, set := range decided {
		if k, ok := repostKey(set); ok {
			s.singles[k] = true
		}
		for _, p := range set.Parts {
			done[p.ID] = true
		}
		for _, m := range set.Duplicates {
			done[m.ID] = true
		}
		for _, m := range set.Conflicts {
			done[m.ID] = true
		}
	}
	s.cands = slices.DeleteFunc(s.cands, func(m archive.Message) bool { return done[m.ID] })
	for id := range done {
		delete(s.byID, id)
	}
	if counted > 0 {
		slices.Sort(s.uncounted)
		s.uncounted = s.uncounted[counted:]
	}
	for _, rule := range plan.dupRules {
		s.d.catalog.metrics.Duplicate(rule)
	}
	for _, sk := range plan.skips {
		s.d.catalog.metrics.Skipped(sk.Reason)
	}
	s.totals.MessagesScanned += plan.counters.MessagesScanned
	s.totals.ArchivesFound += plan.counters.ArchivesFound
	s.totals.Duplicates += plan.counters.Duplicates
	s.queuedN += len(plan.params)
}

// prunePhotos forgets the photos no set read later can match: posted more
// than the photo window before both the oldest candidate kept and the
// newest message read, and not in the album of a candidate kept.
func (s *historyScan) prunePhotos() {
	cutoff := s.newest
	albums := map[int64]bool{}
	for _, c := range s.cands {
		if c.Date.Before(cutoff) {
			cutoff = c.Date
		}
		if a := s.byID[c.ID].GroupedID; a != 0 {
			albums[a] = true
		}
	}
	cutoff = cutoff.Add(-archive.DefaultPhotoWindow)
	s.photos = slices.DeleteFunc(s.photos, func(p archive.Photo) bool {
		return p.Date.Before(cutoff) && !albums[p.AlbumID]
	})
}
