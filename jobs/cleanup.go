package jobs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/riverqueue/river"
)

// staleUploadAge is how long an upload may stay UPLOADING untouched before
// the clean-up takes its request for dead (its web process stopped while
// it streamed) and discards it.
const staleUploadAge = 48 * time.Hour

// CleanupWorker removes expired sessions, link codes, stale sign-in
// throttles and long-dismissed notifications, and the manual upload files
// whose retention ran out (UploadRetention after their publication), with
// uploads whose request died while streaming.
type CleanupWorker struct {
	river.WorkerDefaults[hoard.CleanupArgs]
	deps Deps
}

// cleanupOutput is what a clean-up removed (the job's output).
type cleanupOutput struct {
	store.CleanupCounts
	// UploadFiles counts manual upload files removed from UPLOAD_DIR.
	UploadFiles int
	// StaleUploads counts uploads discarded whose request died.
	StaleUploads int
}

// Work implements river.Worker.
func (w *CleanupWorker) Work(ctx context.Context, job *river.Job[hoard.CleanupArgs]) error {
	c, err := w.deps.DB.DeleteExpired(ctx, w.deps.KeepDismissedNotifications)
	if err != nil {
		return fmt.Errorf("cleanup: %w", err)
	}
	out := cleanupOutput{CleanupCounts: c}
	if w.deps.UploadDir != "" {
		if out.UploadFiles, err = w.deps.expireUploadFiles(ctx); err != nil {
			return fmt.Errorf("cleanup: %w", err)
		}
		if out.StaleUploads, err = w.deps.discardStaleUploads(ctx); err != nil {
			return fmt.Errorf("cleanup: %w", err)
		}
		w.deps.sweepDeletedUploads()
	}
	if out != (cleanupOutput{}) {
		w.deps.Logger.Info("cleanup removed expired rows", "sessions", c.Sessions, "link_codes", c.LinkCodes,
			"throttles", c.Throttles, "notifications", c.Notifications, "login_secrets", c.LoginSecrets,
			"upload_files", out.UploadFiles, "stale_uploads", out.StaleUploads)
	}
	return river.RecordOutput(ctx, out)
}

// now is the clock of Deps built with or without Register.
func (d *Deps) now() time.Time {
	if d.Now == nil {
		return time.Now()
	}
	return d.Now()
}

// expireUploadFiles removes the files published longer than
// UploadRetention ago (at most 1,000 a run; the clean-up runs hourly).
func (d *Deps) expireUploadFiles(ctx context.Context) (int, error) {
	keep := d.UploadRetention
	switch {
	case keep == 0:
		keep = 7 * 24 * time.Hour
	case keep < 0:
		keep = 0
	}
	files, err := d.DB.ListExpiredUploadFiles(ctx, d.now().Add(-keep), 1000)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, f := range files {
		if err := d.removeUploadFile(ctx, f); err != nil {
			d.Logger.Warn("remove an expired upload file", "file", f.ID, "err", err)
			continue
		}
		n++
	}
	return n, nil
}

// removeUploadFile removes one manual upload file from UPLOAD_DIR (and its
// upload's directory once empty), then records it removed, which gives its
// bytes back to its user's quota. A file already gone is recorded all the
// same.
func (d *Deps) removeUploadFile(ctx context.Context, f hoard.ManualUploadFile) error {
	if !filepath.IsLocal(f.StoredPath) {
		return hoard.Errorf(hoard.EINVALID, "stored path of %s is not inside UPLOAD_DIR", f.FileName)
	}
	p := filepath.Join(d.UploadDir, f.StoredPath)
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove upload file: %w", err)
	}
	_ = os.Remove(filepath.Dir(p)) // only when empty: the upload's other files stay
	if _, err := d.DB.MarkUploadFileRemoved(ctx, f.ID); err != nil {
		return err
	}
	return nil
}

// discardStaleUploads removes uploads left UPLOADING by a request that
// died with its process: their files and rows, and what they held.
func (d *Deps) discardStaleUploads(ctx context.Context) (int, error) {
	ids, err := d.DB.ListStaleUploads(ctx, d.now().Add(-staleUploadAge))
	if err != nil {
		return 0, err
	}
	for _, id := range ids {
		if err := os.RemoveAll(filepath.Join(d.UploadDir, strconv.FormatInt(id, 10))); err != nil {
			return 0, fmt.Errorf("remove stale upload %d: %w", id, err)
		}
		if err := d.DB.DiscardManualUpload(ctx, id); err != nil && hoard.ErrorCode(err) != hoard.ENOTFOUND {
			return 0, err
		}
	}
	return len(ids), nil
}

// sweepDeletedUploads removes what a deletion moved aside and could not
// remove: the web's .deleted-<upload>-<unix nanoseconds> directories older
// than an hour (a younger one may belong to a deletion not yet committed).
func (d *Deps) sweepDeletedUploads() {
	des, err := os.ReadDir(d.UploadDir)
	if err != nil {
		return
	}
	for _, de := range des {
		name, ok := strings.CutPrefix(de.Name(), ".deleted-")
		if !ok || !de.IsDir() {
			continue
		}
		at, err := strconv.ParseInt(name[strings.LastIndexByte(name, '-')+1:], 10, 64)
		if err == nil && d.now().Sub(time.Unix(0, at)) > time.Hour {
			if err := os.RemoveAll(filepath.Join(d.UploadDir, de.Name())); err != nil {
				d.Logger.Warn("remove a deleted upload's files", "dir", de.Name(), "err", err)
			}
		}
	}
}
