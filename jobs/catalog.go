package jobs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
)

// catalog writes the rows of the catalog that several job kinds share — a
// source set's skipped record, a run's counters, a manual upload's files
// and their end — and tells the metrics what was committed.
type catalog struct {
	db      *store.DB
	log     *slog.Logger
	metrics Metrics
	notices *notices
	// uploadDir is UPLOAD_DIR (Deps.UploadDir).
	uploadDir string
}

// addCounters adds to a run's counters; runs that no longer exist are
// ignored.
func addCounters(ctx context.Context, db *store.DB, runID int64, c hoard.RunCounters) error {
	if runID == 0 {
		return nil
	}
	if err := db.AddRunCounters(ctx, runID, c); err != nil && hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return err
	}
	return nil
}

// skippedSet is a source set as the subject of its jobs' failures
// (ingest_message, and upload_part and verify through their transfer):
// each failed attempt upserts its SkippedPackage (attempt_count = the
// job's attempt, SPEC rule 12); the final one makes it SKIPPED, counts it
// in its run and raises the gave-up notification once per source message.
type skippedSet struct {
	c     *catalog
	rec   hoard.SkippedPackage
	runID int64
}

// skipped is the subject of the failures of set rec of run runID.
func (c *catalog) skipped(rec hoard.SkippedPackage, runID int64) *skippedSet {
	return &skippedSet{c: c, rec: rec, runID: runID}
}

// failed implements subject.
func (s *skippedSet) failed(ctx context.Context, f failure) error {
	rec := s.rec
	if f.accessLost {
		s.c.notices.accessLostOf(ctx, rec.SourceChannelID, f.err)
	}
	if rec.Reason == "" {
		rec.Reason = reasonOf(f.err)
	}
	rec.AttemptCount = f.attempt
	rec.MaxAttempts = f.maxAttempts
	rec.LastError = truncate(f.err.Error(), 2000)
	rec.Status = hoard.SkipRetrying
	if f.final {
		rec.Status = hoard.SkipGaveUp
	}
	err := s.c.db.InTx(ctx, func(tx *store.DB) error {
		if err := tx.UpsertSkippedPackage(ctx, &rec); err != nil {
			return err
		}
		if !f.final {
			return nil
		}
		if err := addCounters(ctx, tx, s.runID, hoard.RunCounters{Skipped: 1}); err != nil {
			return err
		}
		if f.gaveUp {
			return s.c.notices.gaveUp(ctx, tx, &rec, f.attempt)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record skipped package (channel %d, message %d): %w", rec.SourceChannelID, rec.SourceMessageID, err)
	}
	if f.final {
		s.c.metrics.Skipped(rec.Reason)
	}
	s.c.log.Warn("ingestion attempt failed", "file", rec.FileName, "reason", rec.Reason, "attempt", f.attempt,
		"max_attempts", f.maxAttempts, "final", f.final, "err", f.err)
	return nil
}

// stepError tags an error with the skip reason of the step that failed.
type stepError struct {
	reason hoard.SkipReason
	err    error
}

func (e *stepError) Error() string { return e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

// failedAt tags err with the skip reason of the step that failed (nil
// stays nil); an error tagged by an inner step keeps its tag, so the
// first step that knew the reason names it.
func failedAt(reason hoard.SkipReason, err error) error {
	if err == nil {
		return nil
	}
	var se *stepError
	if errors.As(err, &se) {
		return err
	}
	return &stepError{reason: reason, err: err}
}

// reasonOf is the skip reason a failed attempt is recorded with: the
// failing step's tag, ACCESS_LOST for lost access, else OTHER.
func reasonOf(err error) hoard.SkipReason {
	var se *stepError
	if errors.As(err, &se) {
		return se.reason
	}
	if errors.Is(err, messenger.ErrAccessLost) {
		return hoard.SkipAccessLost
	}
	return hoard.SkipOther
}

// countIndexed tells the metrics what indexing a transfer did: a new
// package, or a duplicate by content found only then.
func (c *catalog) countIndexed(created, duplicate bool) {
	switch {
	case created:
		c.metrics.Indexed()
	case duplicate:
		c.metrics.Duplicate(store.DupContentHash)
	}
}

// uploadFileFailed records a manual upload file's final failure, then
// ends its upload when every file is final (finishUploadOf).
func (c *catalog) uploadFileFailed(ctx context.Context, fileID int64, cause error) {
	if err := c.db.SetManualUploadFileStatus(ctx, fileID, hoard.UploadFailed, truncate(cause.Error(), 2000), "", 0); err != nil {
		c.log.Error("mark upload file failed", "file", fileID, "err", err)
	}
	c.finishUploadOf(ctx, fileID)
}

// finishUploadOf ends the upload of file fileID when every file of it is
// final (finishUpload); a failure is logged.
func (c *catalog) finishUploadOf(ctx context.Context, fileID int64) {
	f, err := c.db.FindManualUploadFile(ctx, fileID)
	if err == nil {
		err = c.finishUpload(ctx, f.UploadID)
	}
	if err != nil {
		c.log.Error("finish manual upload", "file", fileID, "err", err)
	}
}

// finishUpload completes an upload once every file is final: COMPLETED when
// all files are in the catalog, PARTIAL when some failed (UPLOAD_FAILED
// raised), FAILED when all did; two or more new packages form a group
// named after the upload.
func (c *catalog) finishUpload(ctx context.Context, uploadID int64) error {
	return c.db.InTx(ctx, func(tx *store.DB) error {
		up, err := tx.FindManualUpload(ctx, uploadID)
		if err != nil {
			return err
		}
		if up.FinishedAt != nil {
			return nil
		}
		var ok, failed int
		var pkgs []int64
		var names []string
		for _, f := range up.Files {
			switch f.Status {
			case hoard.UploadCompleted:
				ok++
				if f.PackageID != 0 {
					pkgs = append(pkgs, f.PackageID)
					names = append(names, f.FileName)
				}
			case hoard.UploadFailed:
				failed++
			default:
				return nil // still working
			}
		}
		status, msg := hoard.UploadCompleted, ""
		switch {
		case ok == 0:
			status, msg = hoard.UploadFailed, "No file could be uploaded: "+firstFailure(up.Files)
		case failed > 0:
			status, msg = hoard.UploadPartial, fmt.Sprintf("%d of %d files failed: %s", failed, len(up.Files), firstFailure(up.Files))
		}
		if failed > 0 {
			if err := c.notices.uploadFailed(ctx, tx, up, msg); err != nil {
				return err
			}
		}
		if len(pkgs) >= 2 {
			name := up.GroupName
			if name == "" {
				name = commonName(names)
			}
			g, err := tx.CreateManualGroup(ctx, name, pkgs)
			if err != nil {
				c.log.Warn("group the files of an upload", "upload", up.ID, "err", err)
			} else if err := tx.SetManualUploadGroup(ctx, up.ID, g.ID); err != nil {
				return err
			}
		}
		return tx.SetManualUploadStatus(ctx, up.ID, status, msg)
	})
}

// firstFailure is the reason the first failed file of an upload gives.
func firstFailure(files []hoard.ManualUploadFile) string {
	for _, f := range files {
		if f.Status == hoard.UploadFailed {
			return truncate(f.ErrorMessage, 1500)
		}
	}
	return ""
}

// commonName names a group of uploaded files: their common prefix, trimmed
// of separators, or the first file's name without extension.
func commonName(names []string) string {
	prefix := names[0]
	for _, n := range names[1:] {
		for !strings.HasPrefix(n, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	prefix = strings.TrimRight(prefix, " -_.([")
	if len([]rune(prefix)) >= 3 {
		return prefix
	}
	return strings.TrimSuffix(names[0], filepath.Ext(names[0]))
}

// removeUploadFile removes one manual upload file from UPLOAD_DIR (and its
// upload's directory once empty), then records it removed, which gives its
// bytes back to its user's quota. A file already gone is recorded all the
// same.
func (c *catalog) removeUploadFile(ctx context.Context, f hoard.ManualUploadFile) error {
	if !filepath.IsLocal(f.StoredPath) {
		return hoard.Errorf(hoard.EINVALID, "stored path of %s is not inside UPLOAD_DIR", f.FileName)
	}
	p := filepath.Join(c.uploadDir, f.StoredPath)
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove upload file: %w", err)
	}
	_ = os.Remove(filepath.Dir(p)) // only when empty: the upload's other files stay
	if _, err := c.db.MarkUploadFileRemoved(ctx, f.ID); err != nil {
		return err
	}
	return nil
}

// truncate makes a message for a row storable: error texts quote platform
// text (names, titles), so NUL and invalid UTF-8 are replaced; then it is
// cut to at most n characters, never inside a UTF-8 sequence, with an
// ellipsis when cut.
func truncate(s string, n int) string {
	s = hoard.StorableLongText(s, 0)
	if cut := hoard.StorableLongText(s, n); cut != s {
		return cut + "…"
	}
	return s
}
