package jobs

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

// The integrity audit (SPEC rule 16) as the audit job and the end of every
// ingestion cycle run it: what the catalog says of itself. The audit job
// adds the destination's orphaned posts (audit.go).

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
