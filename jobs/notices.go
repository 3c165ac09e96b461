package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

// notices raises the system notifications of the jobs, each with its
// title, message and dedup key in one place. A method given a tx writes in
// it (the notification commits with the rows it is about); the others
// write on their own and log a failure, which never fails a job.
type notices struct {
	db  *store.DB
	log *slog.Logger
}

// accessLost records that a source channel became inaccessible: the
// channel's flag and, once while unresolved, a CHANNEL_ACCESS_LOST
// notification (SPEC rule 13).
func (n *notices) accessLost(ctx context.Context, ch *hoard.Channel, cause error) {
	err := n.db.InTx(ctx, func(tx *store.DB) error {
		changed, err := tx.SetChannelAccessLost(ctx, ch.ID, true)
		if err != nil || !changed {
			return err
		}
		_, err = tx.CreateNotification(ctx, &hoard.Notification{Type: hoard.NotifyChannelAccessLost, Severity: hoard.SeverityError,
			Title:     "Channel access lost: " + ch.Title,
			Message:   "The account can no longer read this channel: " + truncate(cause.Error(), 2000),
			ChannelID: ch.ID, DedupKey: "CHANNEL_ACCESS_LOST:" + strconv.FormatInt(ch.ID, 10)})
		return err
	})
	if err != nil {
		n.log.Error("record lost channel access", "channel", ch.ID, "err", err)
	}
	n.log.Warn("channel access lost", "channel", ch.Title, "err", cause)
}

// accessLostOf is accessLost of the channel with id channelID (nothing
// when it cannot be read).
func (n *notices) accessLostOf(ctx context.Context, channelID int64, cause error) {
	if ch, err := n.db.FindChannelByID(ctx, channelID); err == nil {
		n.accessLost(ctx, ch, cause)
	}
}

// accessRestored clears a channel's lost-access flag after a good scan.
func (n *notices) accessRestored(ctx context.Context, ch *hoard.Channel) {
	if ch.AccessLostAt == nil {
		return
	}
	if _, err := n.db.SetChannelAccessLost(ctx, ch.ID, false); err != nil {
		n.log.Warn("clear lost channel access", "channel", ch.ID, "err", err)
	}
}

// diskLow tells the administrators that downloads wait for disk space
// (one live DISK_LOW): file of size bytes did not fit the spool's volume
// (dir), which has free bytes and keeps floor free.
func (n *notices) diskLow(ctx context.Context, dir, file string, size, free, floor int64) {
	n.log.Warn("download waits for disk space", "file", file, "size", size, "free", free, "keep_free", floor)
	c, _ := json.Marshal(map[string]any{"file_name": file, "size": size, "free": free, "keep_free": floor})
	_, err := n.db.CreateNotification(ctx, &hoard.Notification{Type: hoard.NotifyDiskLow, Severity: hoard.SeverityWarning,
		Title: "Downloads wait for disk space",
		Message: fmt.Sprintf("%s (%d bytes) is not downloaded: the spool's volume (%s) has %d bytes free and keeps %d free. "+
			"Free some space (or lower UPLOAD_MIN_FREE_BYTES); the downloads start again by themselves.", file, size, dir, free, floor),
		Context: c, DedupKey: string(hoard.NotifyDiskLow) + ":spool"})
	if err != nil {
		n.log.Warn("notify disk space", "err", err)
	}
}

// gaveUp raises, in tx, the notification of a source set given up after
// attempts (DOWNLOAD_FAILED, UPLOAD_FAILED by its skip reason), once per
// source message; reasons the skipped record alone reports raise none.
func (n *notices) gaveUp(ctx context.Context, tx *store.DB, rec *hoard.SkippedPackage, attempts int) error {
	typ, ok := failureNotification(rec.Reason)
	if !ok {
		return nil
	}
	_, err := tx.CreateNotification(ctx, &hoard.Notification{Type: typ, Severity: hoard.SeverityError,
		Title:     fmt.Sprintf("%s: %s", failureTitle(rec.Reason), rec.FileName),
		Message:   fmt.Sprintf("Gave up after %d attempts: %s", attempts, rec.LastError),
		ChannelID: rec.SourceChannelID,
		DedupKey:  fmt.Sprintf("%s:%d:%d", typ, rec.SourceChannelID, rec.SourceMessageID)})
	return err
}

// failureNotification is the notification type a given-up set's skip
// reason raises (DOWNLOAD_FAILED, UPLOAD_FAILED); false for reasons the
// skipped record alone reports.
func failureNotification(r hoard.SkipReason) (hoard.NotificationType, bool) {
	switch r {
	case hoard.SkipDownloadFailed:
		return hoard.NotifyDownloadFailed, true
	case hoard.SkipUploadFailed:
		return hoard.NotifyUploadFailed, true
	}
	return "", false
}

// failureTitle is the first words of a given-up set's notification title,
// named after the step that failed so the user sees which one.
func failureTitle(r hoard.SkipReason) string {
	switch r {
	case hoard.SkipDownloadFailed:
		return "Download failed"
	case hoard.SkipUploadFailed:
		return "Upload failed"
	}
	return "Ingestion failed"
}

// uploadFailed raises, in tx, UPLOAD_FAILED for a manual upload that ends
// with failed files (SPEC rule 14), once while it is live: the upload's
// page has the retry button.
func (n *notices) uploadFailed(ctx context.Context, tx *store.DB, up *hoard.ManualUpload, msg string) error {
	c, _ := json.Marshal(map[string]any{"upload_id": up.ID})
	title := fmt.Sprintf("Upload failed: #%d", up.ID)
	if up.GroupName != "" {
		title += " " + up.GroupName
	}
	_, err := tx.CreateNotification(ctx, &hoard.Notification{Type: hoard.NotifyUploadFailed, Severity: hoard.SeverityError,
		Title: title, Message: msg + " Retry from the upload's page.", Context: c,
		DedupKey: fmt.Sprintf("%s:upload:%d", hoard.NotifyUploadFailed, up.ID)})
	return err
}

// postedMismatch raises, in tx, HASH_MISMATCH for package p of transfer t,
// indexed as posted though its parts read back as got (SPEC rule 8): it
// carries the package, so that a repair can publish it again.
func (n *notices) postedMismatch(ctx context.Context, tx *store.DB, t *hoard.Transfer, p *hoard.Package, got string) error {
	n.log.Error("hash mismatch", "file", t.Draft.FileName, "package", p.ID, "want", t.ContentHash, "got", got)
	_, err := tx.CreateNotification(ctx, &hoard.Notification{Type: hoard.NotifyHashMismatch, Severity: hoard.SeverityError,
		PackageID: p.ID, ChannelID: t.SourceChannelID, Title: "Hash mismatch: " + t.Draft.FileName,
		Message: fmt.Sprintf("%s was downloaded as %s but the posted parts read back as %s. "+
			"Repair downloads it again and publishes it into the same package.", t.Draft.FileName, t.ContentHash, got)})
	return err
}

// transferMismatch raises HASH_MISMATCH (once per file) for transfer t,
// whose parts read back as got: nothing is indexed; msg says so.
func (n *notices) transferMismatch(ctx context.Context, t *hoard.Transfer, got, msg string) {
	n.log.Error("hash mismatch", "file", t.Draft.FileName, "transfer", t.ID, "want", t.ContentHash, "got", got)
	key := fmt.Sprintf("HASH_MISMATCH:transfer:%d:%d:%d", t.SourceChannelID, t.SourceMessageID, t.ManualUploadFileID)
	if _, err := n.db.CreateNotification(ctx, &hoard.Notification{Type: hoard.NotifyHashMismatch, Severity: hoard.SeverityError,
		Title: "Hash mismatch: " + t.Draft.FileName, Message: msg, ChannelID: t.SourceChannelID, DedupKey: key}); err != nil {
		n.log.Error("notify hash mismatch", "err", err)
	}
}
