package jobs

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
	"github.com/riverqueue/river"
)

// AuditWorker runs the integrity audit (SPEC rule 16).
type AuditWorker struct {
	river.WorkerDefaults[hoard.AuditArgs]
	deps Deps
}

// AuditResult is what an audit found and notified (recorded as the job's
// output, visible in River UI).
type AuditResult struct {
	MissingParts    int `json:"missing_parts"`
	Orphans         int `json:"orphans"`
	NewNotified     int `json:"new_notifications"`
	AlreadyNotified int `json:"already_notified"`
	// OrphanedPosts counts destination documents that nothing points to,
	// among those posted since the previous audit; DestinationChecked is
	// the newest destination message this audit judged.
	OrphanedPosts      int   `json:"orphaned_posts"`
	DestinationChecked int64 `json:"destination_checked"`
}

// Work implements river.Worker. The destination's history is read when
// the worker has messenger clients; a platform error there is logged and
// leaves the high-water mark where it was (the next audit reads on from it).
func (w *AuditWorker) Work(ctx context.Context, job *river.Job[hoard.AuditArgs]) error {
	res, err := Audit(ctx, w.deps.DB)
	if err != nil {
		return err
	}
	if w.deps.Accounts != nil {
		if err := w.deps.auditDestination(ctx, &res); err != nil {
			if serr, limited := snoozeIfLimited(err); limited {
				return serr
			}
			w.deps.Logger.Warn("audit of the destination channel failed", "err", err)
		}
	}
	if res.NewNotified > 0 {
		w.deps.Logger.Warn("integrity audit found problems", "missing_parts", res.MissingParts, "orphans", res.Orphans,
			"orphaned_posts", res.OrphanedPosts, "new_notifications", res.NewNotified)
	}
	return river.RecordOutput(ctx, res)
}

// notify raises n unless it was raised before (CreateNotificationOnce) and
// counts which of the two it was.
func (r *AuditResult) notify(ctx context.Context, db *store.DB, n *hoard.Notification) error {
	created, err := db.CreateNotificationOnce(ctx, n)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if created {
		r.NewNotified++
	} else {
		r.AlreadyNotified++
	}
	return nil
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
func (d *Deps) auditDestination(ctx context.Context, res *AuditResult) error {
	db := d.DB
	dest, err := db.FindDestinationChannel(ctx)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		return nil
	}
	if err != nil {
		return err
	}
	rd, err := d.destinationReader(ctx, dest.ID)
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

// Audit flags multi-part packages with missing destination parts and
// orphaned index rows, each package once (a dismissed notification is not
// raised again every cycle); a single stored destination id (a legacy
// backfill) is not flagged.
func Audit(ctx context.Context, db *store.DB) (AuditResult, error) {
	var res AuditResult
	missing, err := db.ListIncompleteMultipartPackages(ctx)
	if err != nil {
		return res, fmt.Errorf("audit: %w", err)
	}
	orphans, err := db.ListOrphanedPackages(ctx)
	if err != nil {
		return res, fmt.Errorf("audit: %w", err)
	}
	res.MissingParts, res.Orphans = len(missing), len(orphans)
	notify := func(n *hoard.Notification) error { return res.notify(ctx, db, n) }
	for _, p := range missing {
		c, _ := json.Marshal(map[string]any{"package_id": p.ID, "part_count": p.PartCount, "stored_ids": len(p.DestMessageIDs)})
		if err := notify(&hoard.Notification{Type: hoard.NotifyMissingPart, Severity: hoard.SeverityWarning, PackageID: p.ID,
			Title:   "Incomplete multipart: " + p.FileName,
			Message: fmt.Sprintf("%d of %d parts are recorded in the destination channel. Repair re-publishes the package.", len(p.DestMessageIDs), p.PartCount),
			Context: c}); err != nil {
			return res, err
		}
	}
	for _, p := range orphans {
		c, _ := json.Marshal(map[string]any{"package_id": p.ID, "dest_channel_id": p.DestChannelID})
		if err := notify(&hoard.Notification{Type: hoard.NotifyOrphanedIndex, Severity: hoard.SeverityWarning, PackageID: p.ID,
			Title:   "Orphaned index: " + p.FileName,
			Message: "The package names a destination channel but no destination message.",
			Context: c}); err != nil {
			return res, err
		}
	}
	return res, nil
}
