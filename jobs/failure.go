package jobs

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
	"github.com/riverqueue/river"
)

// settled reports the errors a transfer-style job hands to River as they
// are: none, a rate limit or a part job still finishing (snoozed, no
// attempt spent) and a cancellation
// the job decided on. Everything else is a failed attempt the job records
// before River sees it.
func settled(err error) (error, bool) {
	if err == nil {
		return nil, true
	}
	if serr, ok := snoozeIfLimited(err); ok {
		return serr, true
	}
	if serr, ok := snoozeIfPartJobUnfinished(err); ok {
		return serr, true
	}
	var ce *river.JobCancelError
	if errors.As(err, &ce) {
		return err, true
	}
	var se *river.JobSnoozeError
	if errors.As(err, &se) {
		return err, true // a wait that spends no attempt (disk space)
	}
	return err, false
}

// snoozeIfPartJobUnfinished turns errPartJobUnfinished (River records the
// end of the earlier job in a moment) and errPartSplit (the part's first
// piece is posted next) into a short snooze: no attempt spent.
func snoozeIfPartJobUnfinished(err error) (error, bool) {
	if errors.Is(err, errPartJobUnfinished) || errors.Is(err, errPartSplit) {
		return river.JobSnooze(time.Second), true
	}
	return err, false
}

// snoozeIfLimited turns a rate limit into a snooze (no attempt spent): a
// platform FLOOD_WAIT waits what the platform asked plus a second; an
// account whose session another process holds waits a few seconds (that
// process works the account's jobs it fetches; this one hands them back);
// any other rate limit waits rateLimitWait.
func snoozeIfLimited(err error) (error, bool) {
	if fw, ok := messenger.AsFloodWait(err); ok {
		return river.JobSnooze(fw.RetryAfter + time.Second), true
	}
	if errors.Is(err, messenger.ErrSessionBusy) {
		return river.JobSnooze(sessionBusyWait + rand.N(sessionBusyWait)), true
	}
	if hoard.ErrorCode(err) == hoard.ERATELIMITED {
		return river.JobSnooze(rateLimitWait), true
	}
	return err, false
}

// sessionBusyWait is the least a job snoozes for an account whose session
// another process holds (plus as much again at random, so the hand-backs
// spread). Short: the holder takes what is available whenever it has room,
// and a job snoozed longer would leave it idle.
const sessionBusyWait = 500 * time.Millisecond

// nextAttemptAt is when a source set's job (ingest_message, upload_part,
// verify_transfer) runs again after its failed attempt: RetryBase after the
// first (a quick second chance for a transient fault), LaterRetry after any
// other, so the later attempts fall in later cycles (SPEC rule 12).
func (d *Deps) nextAttemptAt(attempt int) time.Time {
	if attempt <= 1 {
		return time.Now().Add(d.RetryBase)
	}
	return time.Now().Add(d.LaterRetry)
}

// retryDelay is the delay before attempt+1 of a cycle job: base, then
// doubling, capped at an hour.
func retryDelay(base time.Duration, attempt int) time.Duration {
	d := base
	for i := 1; i < attempt && d < time.Hour; i++ {
		d *= 2
	}
	return min(d, time.Hour)
}

// permanent reports an error that another attempt cannot fix.
func permanent(err error) bool {
	switch hoard.ErrorCode(err) {
	case hoard.EINVALID, hoard.ETOOLARGE:
		return true
	}
	return errors.Is(err, messenger.ErrNotFound)
}

// recordTimeout bounds the writing of a failed attempt's record, which
// outlives the job's own context (a job timeout).
const recordTimeout = 10 * time.Second

// skipFailure mirrors a failed attempt of a source set's job on its
// SkippedPackage (attempt_count = the job's attempt, SPEC rule 12). On the
// last attempt (or a permanent failure) the record is SKIPPED, the run
// counts it and a notification of the failure kind is created once per
// source message. It returns the error for River: a cancellation for
// permanent failures, else err.
func (d *Deps) skipFailure(ctx context.Context, db *store.DB, rec hoard.SkippedPackage, attempt, maxAttempts int, runID int64, err error) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		// The process is stopping (a job timeout ends in DeadlineExceeded
		// and is a failure): the attempt was interrupted, not failed, and
		// runs again when a worker starts (RequeueJobsOf gives it back).
		d.Logger.Info("ingestion attempt interrupted by shutdown", "file", rec.FileName, "attempt", attempt)
		return err
	}
	final := attempt >= maxAttempts || permanent(err)
	rec.AttemptCount = attempt
	rec.MaxAttempts = maxAttempts
	rec.LastError = truncate(err.Error(), 2000)
	rec.Status = hoard.SkipRetrying
	if final {
		rec.Status = hoard.SkipGaveUp
	}
	// A job timeout has expired ctx: the record is written all the same.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	werr := db.InTx(ctx, func(tx *store.DB) error {
		if err := tx.UpsertSkippedPackage(ctx, &rec); err != nil {
			return err
		}
		if !final {
			return nil
		}
		if runID != 0 {
			if err := tx.AddRunCounters(ctx, runID, hoard.RunCounters{Skipped: 1}); err != nil && hoard.ErrorCode(err) != hoard.ENOTFOUND {
				return err
			}
		}
		if typ, ok := failureNotification(rec.Reason); ok {
			_, err := tx.CreateNotification(ctx, &hoard.Notification{Type: typ, Severity: hoard.SeverityError,
				Title:     fmt.Sprintf("%s: %s", failureTitle(rec.Reason), rec.FileName),
				Message:   fmt.Sprintf("Gave up after %d attempts: %s", attempt, rec.LastError),
				ChannelID: rec.SourceChannelID,
				DedupKey:  fmt.Sprintf("%s:%d:%d", typ, rec.SourceChannelID, rec.SourceMessageID)})
			return err
		}
		return nil
	})
	if werr != nil {
		d.Logger.Error("record skipped package", "channel", rec.SourceChannelID, "message", rec.SourceMessageID, "err", werr)
	} else if final {
		d.metrics().Skipped(rec.Reason)
	}
	d.Logger.Warn("ingestion attempt failed", "file", rec.FileName, "reason", rec.Reason, "attempt", attempt,
		"max_attempts", maxAttempts, "final", final, "err", err)
	if final && attempt < maxAttempts {
		return river.JobCancel(err)
	}
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
