package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/archive"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// rebuildPageSize is how many destination messages one progress step of a
// rebuild covers (a page may run longer so that no part set is cut in two).
const rebuildPageSize = 100

// RebuildFromDestinationWorker runs RebuildFromDestinationArgs.
//
// It reads the destination channel oldest to newest: one History call from
// the run's resume point (LastMessageID; 0 on the first attempt) returns
// every later message, which are grouped into part sets with
// archive.GroupSets (our own byte splits <name>.001, .002 … included) and
// then committed page by page. Each page's transaction creates the page's
// missing package rows and advances the run's counters and resume point,
// so the progress the admin page polls is exactly what has been written,
// and a retried job continues after the last committed page without
// counting or creating anything twice.
type RebuildFromDestinationWorker struct {
	worker[hoard.RebuildFromDestinationArgs]
	db       *store.DB
	log      *slog.Logger
	platform *platform
	// pageSize overrides rebuildPageSize (tests).
	pageSize int
	// afterPage, when set (tests), runs after each committed page; an error
	// ends the attempt as a crash would.
	afterPage func(page int) error
}

func newRebuildFromDestinationWorker(p *parts) *RebuildFromDestinationWorker {
	return &RebuildFromDestinationWorker{worker: worker[hoard.RebuildFromDestinationArgs]{fail: p.fail}, db: p.db, log: p.log,
		platform: p.platform}
}

// Timeout implements river.Worker: a large channel takes long to read, and
// every committed page is safe to interrupt.
func (w *RebuildFromDestinationWorker) Timeout(*river.Job[hoard.RebuildFromDestinationArgs]) time.Duration {
	return 6 * time.Hour
}

// Work implements river.Worker. A rate limit snoozes; a failure the next
// attempt cannot fix (EINVALID: no destination, no reader), or the last
// attempt's, marks the run FAILED with the error; other failures are
// recorded on the run and retried from its resume point (its policy; the
// run is the subject, rebuildSubject).
func (w *RebuildFromDestinationWorker) Work(ctx context.Context, job *river.Job[hoard.RebuildFromDestinationArgs]) error {
	run, err := w.db.FindRebuild(ctx, job.Args.RebuildID)
	if err != nil {
		return w.finish(ctx, job, lookup(fmt.Errorf("rebuild %d: %w", job.Args.RebuildID, err)), nil)
	}
	if run.Status != hoard.RunRunning {
		return nil // finished by an earlier attempt
	}
	if err := w.rebuild(ctx, job, run); err != nil {
		return w.finish(ctx, job, fmt.Errorf("rebuild from destination: %w", err), &rebuildSubject{w: w, run: run})
	}
	return nil
}

// rebuildSubject is a rebuild run as the subject of its job's failures: a
// failed attempt is noted on it, the final one makes it FAILED, each with
// the error's message (an internal error's text: the admin page shows it).
type rebuildSubject struct {
	w   *RebuildFromDestinationWorker
	run *hoard.RebuildRun
}

// failed implements subject.
func (s *rebuildSubject) failed(ctx context.Context, f failure) error {
	msg := hoard.ErrorMessage(f.err)
	if hoard.ErrorCode(f.err) == hoard.EINTERNAL {
		msg = f.err.Error() // the admin page shows it; internal errors say what broke
	}
	msg = truncate(msg, 2000)
	if !f.final {
		return s.w.db.SetRebuildError(ctx, s.run.ID, fmt.Sprintf("Attempt %d failed, retrying: %s", f.attempt, msg))
	}
	_, err := s.w.db.FinishRebuild(ctx, s.run.ID, hoard.RunFailed, msg)
	return err
}

func (w *RebuildFromDestinationWorker) rebuild(ctx context.Context, job *river.Job[hoard.RebuildFromDestinationArgs], run *hoard.RebuildRun) error {
	db := w.db
	dest, err := w.rebuildReader(ctx, run)
	if err != nil {
		return err
	}
	msgs, err := dest.account.History(ctx, dest.peer, messenger.HistoryQuery{AfterID: int(run.LastMessageID)})
	if err != nil {
		return fmt.Errorf("read %s: %w", dest.channel.Title, err)
	}
	size := rebuildPageSize
	if w.pageSize > 0 {
		size = w.pageSize
	}
	pages := rebuildPages(msgs, size)
	byID := make(map[int64]messenger.Message, len(msgs))
	for _, m := range msgs {
		byID[int64(m.ID)] = m
	}
	for i, pg := range pages {
		err := db.InTx(ctx, func(tx *store.DB) error {
			c := hoard.RebuildCounters{MessagesScanned: pg.messages}
			for _, set := range pg.sets {
				if !set.Complete {
					c.SetsSkipped++
					w.log.Info("rebuild: incomplete set skipped", "set", set.BaseName, "reason", set.Reason)
					continue
				}
				p, reposts := rebuiltPackage(set, byID, dest.channel.ID)
				out, err := tx.CreateRebuiltPackage(ctx, p, reposts)
				if err != nil {
					return err
				}
				switch out {
				case store.RebuildCreated:
					c.PackagesCreated++
				case store.RebuildExisting:
					c.PackagesExisting++
				default:
					c.SetsSkipped++
					w.log.Info("rebuild: set of a publication in flight skipped", "file", p.FileName)
				}
			}
			return tx.AdvanceRebuild(ctx, run.ID, c, pg.lastID)
		})
		if hoard.ErrorCode(err) == hoard.ENOTFOUND {
			return nil // the run was finished meanwhile (marked failed by a new start)
		}
		if err != nil {
			return fmt.Errorf("page %d of %d: %w", i+1, len(pages), err)
		}
		if w.afterPage != nil {
			if err := w.afterPage(i + 1); err != nil {
				return err
			}
		}
	}
	var finished bool
	err = completeTx(ctx, db, job, func(tx *store.DB, _ *river.Client[pgx.Tx]) error {
		var err error
		finished, err = tx.FinishRebuild(ctx, run.ID, hoard.RunCompleted, "")
		return err
	})
	if err != nil {
		return err
	}
	if finished {
		final, _ := db.FindRebuild(ctx, run.ID)
		if final != nil {
			w.log.Info("rebuild completed", "rebuild", run.ID, "messages", final.MessagesScanned,
				"created", final.PackagesCreated, "existing", final.PackagesExisting, "skipped", final.SetsSkipped)
		}
	}
	return nil
}

// rebuildReader resolves the run's destination channel and an account that
// reads it (a signed-in writer of the channel).
func (w *RebuildFromDestinationWorker) rebuildReader(ctx context.Context, run *hoard.RebuildRun) (*channelAccess, error) {
	if run.DestChannelID == 0 {
		return nil, hoard.Errorf(hoard.EINVALID, "The destination channel of this rebuild no longer exists.")
	}
	return w.platform.destinationReader(ctx, run.DestChannelID)
}

// rebuildPage is one progress step: messages messages up to lastID, and the
// sets whose first message lies among them (all their parts do too).
type rebuildPage struct {
	messages int
	lastID   int64
	sets     []archive.Set
}

// rebuildPages groups the candidate files of msgs (ascending ids) into sets
// and cuts msgs into pages of at least size messages (the last may be
// shorter). A page ends only where no set has parts on both sides, so that
// the resume point never falls inside a set.
func rebuildPages(msgs []messenger.Message, size int) []rebuildPage {
	var cands []archive.Message
	for _, m := range msgs {
		if m.Document != nil && archive.IsCandidate(m.Document.FileName) {
			cands = append(cands, archive.Message{ID: int64(m.ID), Name: m.Document.FileName, Size: m.Document.Size, Date: m.Date})
		}
	}
	startsAt := map[int64][]archive.Set{}
	lastOf := map[int64]int64{} // first message id → newest id of the set
	for _, s := range archive.GroupSets(cands) {
		startsAt[s.FirstMessageID] = append(startsAt[s.FirstMessageID], s)
		last := s.FirstMessageID
		for _, p := range s.Parts {
			last = max(last, p.ID)
		}
		for _, m := range append(s.Duplicates, s.Conflicts...) {
			last = max(last, m.ID)
		}
		lastOf[s.FirstMessageID] = max(lastOf[s.FirstMessageID], last)
	}
	var pages []rebuildPage
	cur := rebuildPage{}
	reach := int64(0)
	for _, m := range msgs {
		id := int64(m.ID)
		cur.messages++
		cur.lastID = id
		if sets, ok := startsAt[id]; ok {
			cur.sets = append(cur.sets, sets...)
			reach = max(reach, lastOf[id])
		}
		if cur.messages >= size && reach <= id {
			pages = append(pages, cur)
			cur = rebuildPage{}
		}
	}
	if cur.messages > 0 {
		pages = append(pages, cur)
	}
	return pages
}

// rebuiltPackage is the package row of a complete set found in the
// destination channel: only what the destination tells (names, sizes, the
// parts' message ids in order, the first part's caption) and what the name
// implies (archive type, creator). No content hash: the bytes were not
// read. reposts are the set's re-posted parts.
func rebuiltPackage(s archive.Set, byID map[int64]messenger.Message, destChannelID int64) (*hoard.Package, []int64) {
	ids := make([]int64, len(s.Parts))
	for i, p := range s.Parts {
		ids[i] = p.ID
	}
	var reposts []int64
	for _, m := range s.Duplicates {
		reposts = append(reposts, m.ID)
	}
	name := packageName(s)
	p := &hoard.Package{FileName: name, FileSize: s.TotalSize, ArchiveType: rebuiltType(s), DestChannelID: destChannelID,
		DestMessageIDs: ids, Creator: archive.CreatorFromFileName(name),
		SourceCaption: strings.TrimSpace(byID[s.Parts[0].ID].Text)}
	return p, reposts
}

// rebuiltType is a set's archive type as its names tell it; a name that
// does not tell is a DOCUMENT, as for ingestion when content does not tell.
func rebuiltType(s archive.Set) hoard.ArchiveType {
	return catalogType(s.Type, packageName(s))
}
