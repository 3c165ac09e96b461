package jobs

import (
	"context"
	"fmt"
	"log/slog"
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
// throttles and long-dismissed notifications, the tokens of paths and names
// nothing holds any more (a slice an hour), and the manual upload files
// whose retention ran out (UploadRetention after their publication), with
// uploads whose request died while streaming.
type CleanupWorker struct {
	worker[hoard.CleanupArgs]
	db      *store.DB
	log     *slog.Logger
	catalog *catalog
	// keepDismissed is Deps.KeepDismissedNotifications, uploadDir UPLOAD_DIR,
	// retention Deps.UploadRetention; now is the clock (time.Now when nil).
	keepDismissed time.Duration
	uploadDir     string
	retention     time.Duration
	now           func() time.Time
}

func newCleanupWorker(p *parts) *CleanupWorker {
	return &CleanupWorker{worker: worker[hoard.CleanupArgs]{fail: p.fail}, db: p.db, log: p.log, catalog: p.catalog,
		keepDismissed: p.cfg.KeepDismissedNotifications, uploadDir: p.cfg.UploadDir, retention: p.cfg.UploadRetention, now: p.cfg.Now}
}

// cleanupOutput is what a clean-up removed (the job's output).
type cleanupOutput struct {
	store.CleanupCounts
	// UploadFiles counts manual upload files removed from UPLOAD_DIR.
	UploadFiles int
	// StaleUploads counts uploads discarded whose request died.
	StaleUploads int
	// Tokens counts the tokens of paths and names that nothing held any
	// more (store.PruneTokens, this hour's slice), TokenBatchesLeft the
	// batches left for next week because writers held their list.
	Tokens           int64
	TokenBatchesLeft int
}

// tokenSlices is how many slices the lists of tokens are pruned in: one an
// hour, each token once a week (at 10,000,000 packages 1,470,000 names'
// tokens, about 8,800 an hour).
const tokenSlices = 7 * 24

// Work implements river.Worker.
func (w *CleanupWorker) Work(ctx context.Context, job *river.Job[hoard.CleanupArgs]) error {
	return w.finish(ctx, job, w.work(ctx), nil)
}

func (w *CleanupWorker) work(ctx context.Context) error {
	c, err := w.db.DeleteExpired(ctx, w.keepDismissed)
	if err != nil {
		return fmt.Errorf("cleanup: %w", err)
	}
	out := cleanupOutput{CleanupCounts: c}
	now := w.clock().UTC()
	pruned, err := w.db.PruneTokens(ctx, int(now.Weekday())*24+now.Hour(), tokenSlices)
	if err != nil {
		return fmt.Errorf("cleanup: %w", err)
	}
	out.Tokens, out.TokenBatchesLeft = pruned.Removed, pruned.Skipped
	if w.uploadDir != "" {
		if out.UploadFiles, err = w.expireUploadFiles(ctx); err != nil {
			return fmt.Errorf("cleanup: %w", err)
		}
		if out.StaleUploads, err = w.discardStaleUploads(ctx); err != nil {
			return fmt.Errorf("cleanup: %w", err)
		}
		w.sweepDeletedUploads()
	}
	if out != (cleanupOutput{}) {
		w.log.Info("cleanup removed expired rows", "sessions", c.Sessions, "link_codes", c.LinkCodes,
			"throttles", c.Throttles, "notifications", c.Notifications, "login_secrets", c.LoginSecrets,
			"upload_files", out.UploadFiles, "stale_uploads", out.StaleUploads,
			"tokens", out.Tokens, "token_batches_left", out.TokenBatchesLeft)
	}
	return river.RecordOutput(ctx, out)
}

// clock is the worker's time now.
func (w *CleanupWorker) clock() time.Time {
	if w.now == nil {
		return time.Now()
	}
	return w.now()
}

// expireUploadFiles removes the files published longer than
// UploadRetention ago (at most 1,000 a run; the clean-up runs hourly).
func (w *CleanupWorker) expireUploadFiles(ctx context.Context) (int, error) {
	keep := w.retention
	switch {
	case keep == 0:
		keep = 7 * 24 * time.Hour
	case keep < 0:
		keep = 0
	}
	files, err := w.db.ListExpiredUploadFiles(ctx, w.clock().Add(-keep), 1000)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, f := range files {
		if err := w.catalog.removeUploadFile(ctx, f); err != nil {
			w.log.Warn("remove an expired upload file", "file", f.ID, "err", err)
			continue
		}
		n++
	}
	return n, nil
}

// discardStaleUploads removes uploads left UPLOADING by a request that
// died with its process: their files and rows, and what they held.
func (w *CleanupWorker) discardStaleUploads(ctx context.Context) (int, error) {
	ids, err := w.db.ListStaleUploads(ctx, w.clock().Add(-staleUploadAge))
	if err != nil {
		return 0, err
	}
	for _, id := range ids {
		if err := os.RemoveAll(filepath.Join(w.uploadDir, strconv.FormatInt(id, 10))); err != nil {
			return 0, fmt.Errorf("remove stale upload %d: %w", id, err)
		}
		if err := w.db.DiscardManualUpload(ctx, id); err != nil && hoard.ErrorCode(err) != hoard.ENOTFOUND {
			return 0, err
		}
	}
	return len(ids), nil
}

// sweepDeletedUploads removes what a deletion moved aside and could not
// remove: the web's .deleted-<upload>-<unix nanoseconds> directories older
// than an hour (a younger one may belong to a deletion not yet committed).
func (w *CleanupWorker) sweepDeletedUploads() {
	des, err := os.ReadDir(w.uploadDir)
	if err != nil {
		return
	}
	for _, de := range des {
		name, ok := strings.CutPrefix(de.Name(), ".deleted-")
		if !ok || !de.IsDir() {
			continue
		}
		at, err := strconv.ParseInt(name[strings.LastIndexByte(name, '-')+1:], 10, 64)
		if err == nil && w.clock().Sub(time.Unix(0, at)) > time.Hour {
			if err := os.RemoveAll(filepath.Join(w.uploadDir, de.Name())); err != nil {
				w.log.Warn("remove a deleted upload's files", "dir", de.Name(), "err", err)
			}
		}
	}
}
