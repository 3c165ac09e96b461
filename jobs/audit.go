package jobs

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hoard/hoard"
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
}

// Work implements river.Worker.
func (w *AuditWorker) Work(ctx context.Context, job *river.Job[hoard.AuditArgs]) error {
	res, err := Audit(ctx, w.deps.DB)
	if err != nil {
		return err
	}
	if res.NewNotified > 0 {
		w.deps.Logger.Warn("integrity audit found problems", "missing_parts", res.MissingParts, "orphans", res.Orphans,
			"new_notifications", res.NewNotified)
	}
	return river.RecordOutput(ctx, res)
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
	notify := func(n *hoard.Notification) error {
		created, err := db.CreateNotificationOnce(ctx, n)
		if err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		if created {
			res.NewNotified++
		} else {
			res.AlreadyNotified++
		}
		return nil
	}
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
