package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
	"github.com/riverqueue/river"
)

// AuditWorker runs the integrity audit (SPEC rule 16).
type AuditWorker struct {
	worker[hoard.AuditArgs]
	db       *store.DB
	log      *slog.Logger
	platform *platform
}

func newAuditWorker(p *parts) *AuditWorker {
	return &AuditWorker{worker: worker[hoard.AuditArgs]{fail: p.fail}, db: p.db, log: p.log, platform: p.platform}
}

// Work implements river.Worker. The destination's history is read when
// the worker has messenger clients; a platform error there is logged and
// leaves the high-water mark where it was (the next audit reads on from it).
func (w *AuditWorker) Work(ctx context.Context, job *river.Job[hoard.AuditArgs]) error {
	return w.finish(ctx, job, w.work(ctx), nil)
}

// work audits; a rate limit of the destination's read ends the attempt
// (its policy snoozes the job), any other failure there is logged.
func (w *AuditWorker) work(ctx context.Context) error {
	res, err := Audit(ctx, w.db)
	if err != nil {
		return err
	}
	if w.platform.accounts != nil {
		if err := w.auditDestination(ctx, &res); rateLimited(err) {
			return err
		} else if err != nil {
			w.log.Warn("audit of the destination channel failed", "err", err)
		}
	}
	if res.NewNotified > 0 {
		w.log.Warn("integrity audit found problems", "missing_parts", res.MissingParts, "orphans", res.Orphans,
			"orphaned_posts", res.OrphanedPosts, "new_notifications", res.NewNotified)
	}
	return river.RecordOutput(ctx, res)
}

// destinationMarkKey is the setting holding the newest destination message
// an audit judged, per destination channel.
func destinationMarkKey(destChannelID int64) string {
	return fmt.Sprintf("audit_destination_mark:%d", destChannelID)
}

// auditDestination reports the orphaned posts of the destination channel:
// documents posted since the last audit's high-water mark that no package
// and no publication (in flight, or failed and waiting for a retry) points
// to — what a failure after publishing would leave behind. One history
// request reads only what is new; messages after the mark a part in flight
// recorded before posting are left for a later audit, as they may be that
// part's post, not yet recorded. Each orphan is notified once (ORPHANED_POST).
// No destination or no account that reads it: nothing to do.
func (w *AuditWorker) auditDestination(ctx context.Context, res *AuditResult) error {
	db := w.db
	dest, err := db.FindDestinationChannel(ctx)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		return nil
	}
	if err != nil {
		return err
	}
	rd, err := w.platform.destinationReader(ctx, dest.ID)
	if hoard.ErrorCode(err) == hoard.EINVALID {
		return nil
	}
	if err != nil {
		return err
	}
	key := destinationMarkKey(dest.ID)
	var mark int64
	if _, err := db.GetSetting(ctx, key, &mark); err != nil {
		return err
	}
	msgs, err := rd.account.History(ctx, rd.peer, messenger.HistoryQuery{AfterID: int(mark)})
	if err != nil {
		return fmt.Errorf("destination history: %w", err)
	}
	limit := mark
	for _, m := range msgs {
		limit = max(limit, int64(m.ID))
	}
	if posting, ok, err := db.FindOldestPostingMark(ctx, dest.ID); err != nil {
		return err
	} else if ok {
		limit = min(limit, max(posting, mark))
	}
	docs := map[int64]*messenger.Document{}
	var ids []int64
	for _, m := range msgs {
		if id := int64(m.ID); id <= limit && m.Document != nil {
			ids, docs[id] = append(ids, id), m.Document
		}
	}
	orphans, err := db.ListUnreferencedDestMessages(ctx, dest.ID, ids)
	if err != nil {
		return err
	}
	for _, id := range orphans {
		doc := docs[id]
		c, _ := json.Marshal(map[string]any{"dest_channel_id": dest.ID, "message_id": id, "file_name": doc.FileName, "size": doc.Size})
		err := res.notify(ctx, db, &hoard.Notification{Type: hoard.NotifyOrphanedPost, Severity: hoard.SeverityWarning,
			Title: "Orphaned destination post: " + doc.FileName,
			Message: fmt.Sprintf("Message %d of %s holds %s (%d bytes), but no package or publication points to it: "+
				"a publication failed after posting. Delete the message, or rebuild from the destination to index it.",
				id, dest.Title, doc.FileName, doc.Size),
			ChannelID: dest.ID, Context: c, DedupKey: fmt.Sprintf("%s:%d:%d", hoard.NotifyOrphanedPost, dest.ID, id)})
		if err != nil {
			return err
		}
	}
	res.OrphanedPosts, res.DestinationChecked = len(orphans), limit
	if limit != mark {
		return db.SetSetting(ctx, key, limit)
	}
	return nil
}
