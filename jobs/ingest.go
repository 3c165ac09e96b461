package jobs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// Accounts gives the messenger client of a signed-in account. Clients are
// long-lived and shared by every job of the process.
type Accounts interface {
	Account(ctx context.Context, accountID int64) (messenger.Account, error)
}

// errNoAccounts is returned by ingestion jobs of a worker built without
// messenger clients.
var errNoAccounts = hoard.Errorf(hoard.EINTERNAL, "no messenger clients configured: the worker cannot reach the messaging platform")

// source is a channel map resolved for talking to the platform.
type source struct {
	m       *hoard.ChannelMap
	channel *hoard.Channel
	account messenger.Account
	peer    messenger.Channel
}

// resolveMap loads a channel map, its channel and its account's client.
func (d *Deps) resolveMap(ctx context.Context, db *store.DB, mapID int64) (*source, error) {
	m, err := db.FindChannelMap(ctx, mapID)
	if err != nil {
		return nil, err
	}
	ch, err := db.FindChannelByID(ctx, m.ChannelID)
	if err != nil {
		return nil, err
	}
	acc, err := d.account(ctx, m.AccountID)
	if err != nil {
		return nil, err
	}
	return &source{m: m, channel: ch, account: acc, peer: peerOf(ch, m)}, nil
}

func (d *Deps) account(ctx context.Context, accountID int64) (messenger.Account, error) {
	if d.Accounts == nil {
		return nil, errNoAccounts
	}
	acc, err := d.Accounts.Account(ctx, accountID)
	if err != nil {
		return nil, fmt.Errorf("messenger client of account %d: %w", accountID, err)
	}
	return acc, nil
}

// peerOf is the platform's view of a channel through one account's map.
func peerOf(ch *hoard.Channel, m *hoard.ChannelMap) messenger.Channel {
	return messenger.Channel{ID: ch.PlatformID, AccessHash: m.AccessHash, Title: ch.Title, Username: ch.Username,
		Forum: ch.IsForum, Protected: ch.IsProtected, Member: true}
}

// writer resolves the destination channel and the map of the account that
// posts to it, preferring preferAccountID.
func (d *Deps) writer(ctx context.Context, db *store.DB, preferAccountID int64) (*source, error) {
	dest, err := db.FindDestinationChannel(ctx)
	if err != nil {
		return nil, fmt.Errorf("destination channel: %w", err)
	}
	m, err := db.FindWriterMap(ctx, dest.ID, preferAccountID)
	if err != nil {
		return nil, fmt.Errorf("destination channel %q has no signed-in writer account: %w", dest.Title, err)
	}
	acc, err := d.account(ctx, m.AccountID)
	if err != nil {
		return nil, err
	}
	return &source{m: m, channel: dest, account: acc, peer: peerOf(dest, m)}, nil
}

// writerOf resolves the destination map of one account (the one a transfer
// was planned for).
func (d *Deps) writerOf(ctx context.Context, db *store.DB, destChannelID, accountID int64) (*source, error) {
	dest, err := db.FindChannelByID(ctx, destChannelID)
	if err != nil {
		return nil, fmt.Errorf("destination channel: %w", err)
	}
	maps, err := db.ListChannelMaps(ctx, destChannelID)
	if err != nil {
		return nil, err
	}
	for i := range maps {
		if maps[i].AccountID == accountID {
			acc, err := d.account(ctx, accountID)
			if err != nil {
				return nil, err
			}
			return &source{m: &maps[i], channel: dest, account: acc, peer: peerOf(dest, &maps[i])}, nil
		}
	}
	return nil, hoard.Errorf(hoard.ENOTFOUND, "account %d no longer writes to destination %q", accountID, dest.Title)
}

// isPremium reports whether an account is Premium (larger uploads); one
// that cannot be read counts as not Premium.
func isPremium(ctx context.Context, db *store.DB, accountID int64) bool {
	acc, err := db.FindAccountByID(ctx, accountID)
	return err == nil && acc.IsPremium
}

// splitLimit is the largest file an account uploads whole: Premium
// accounts have the platform's larger limit.
func (d *Deps) splitLimit(premium bool) int64 {
	if premium {
		return PremiumSplitThreshold
	}
	return d.SplitThreshold
}

// destinationReader is a signed-in account's view of destination channel
// destID, for reading what hoard published there (rebuild, previews).
// EINVALID, with a message for the user, when the channel is gone or no
// signed-in account can read it.
func (d *Deps) destinationReader(ctx context.Context, destID int64) (*source, error) {
	dest, err := d.DB.FindChannelByID(ctx, destID)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND || destID == 0 {
		return nil, hoard.Errorf(hoard.EINVALID, "The destination channel no longer exists.")
	}
	if err != nil {
		return nil, fmt.Errorf("destination channel: %w", err)
	}
	m, err := d.DB.FindWriterMap(ctx, dest.ID, 0)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		return nil, hoard.Errorf(hoard.EINVALID, "No signed-in account can read the destination channel %q.", dest.Title)
	}
	if err != nil {
		return nil, err
	}
	acc, err := d.account(ctx, m.AccountID)
	if err != nil {
		return nil, err
	}
	return &source{m: m, channel: dest, account: acc, peer: peerOf(dest, m)}, nil
}

// completeTx runs fn and marks job completed in one transaction: the rows fn
// writes, the jobs it inserts and the completion commit together or not at
// all.
func completeTx[T river.JobArgs](ctx context.Context, db *store.DB, job *river.Job[T], fn func(tx *store.DB, client *river.Client[pgx.Tx]) error) error {
	client := river.ClientFromContext[pgx.Tx](ctx)
	return db.InTx(ctx, func(tx *store.DB) error {
		if fn != nil {
			if err := fn(tx, client); err != nil {
				return err
			}
		}
		if _, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx.Tx(), job); err != nil {
			return fmt.Errorf("complete job %d: %w", job.ID, err)
		}
		return nil
	})
}

// withMaxAttempts returns args' insert options with another attempt budget.
func withMaxAttempts(opts river.InsertOpts, n int) *river.InsertOpts {
	opts.MaxAttempts = n
	return &opts
}

// settled reports the errors a transfer-style job hands to River as they
// are: none, a rate limit (snoozed, no attempt spent) and a cancellation
// the job decided on. Everything else is a failed attempt the job records
// before River sees it.
func settled(err error) (error, bool) {
	if err == nil {
		return nil, true
	}
	if serr, ok := snoozeIfLimited(err); ok {
		return serr, true
	}
	var ce *river.JobCancelError
	if errors.As(err, &ce) {
		return err, true
	}
	return err, false
}

// snoozeIfLimited turns a platform rate limit into a snooze (no attempt
// spent), waiting what the platform asked plus a second.
func snoozeIfLimited(err error) (error, bool) {
	if fw, ok := messenger.AsFloodWait(err); ok {
		return river.JobSnooze(fw.RetryAfter + time.Second), true
	}
	return err, false
}

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

// skipFailure mirrors a failed attempt of a source set's job on its
// SkippedPackage (attempt_count = the job's attempt, SPEC rule 12). On the
// last attempt (or a permanent failure) the record is SKIPPED, the run
// counts it and a notification of the failure kind is created once per
// source message. It returns the error for River: a cancellation for
// permanent failures, else err.
func (d *Deps) skipFailure(ctx context.Context, db *store.DB, rec hoard.SkippedPackage, attempt, maxAttempts int, runID int64, err error) error {
	final := attempt >= maxAttempts || permanent(err)
	rec.AttemptCount = attempt
	rec.MaxAttempts = maxAttempts
	rec.LastError = truncate(err.Error(), 2000)
	rec.Status = hoard.SkipRetrying
	if final {
		rec.Status = hoard.SkipGaveUp
	}
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

func failureNotification(r hoard.SkipReason) (hoard.NotificationType, bool) {
	switch r {
	case hoard.SkipDownloadFailed:
		return hoard.NotifyDownloadFailed, true
	case hoard.SkipUploadFailed:
		return hoard.NotifyUploadFailed, true
	}
	return "", false
}

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

// accessLost records that a source channel became inaccessible: the
// channel's flag and, once while unresolved, a CHANNEL_ACCESS_LOST
// notification (SPEC rule 13).
func (d *Deps) accessLost(ctx context.Context, db *store.DB, ch *hoard.Channel, cause error) {
	err := db.InTx(ctx, func(tx *store.DB) error {
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
		d.Logger.Error("record lost channel access", "channel", ch.ID, "err", err)
	}
	d.Logger.Warn("channel access lost", "channel", ch.Title, "err", cause)
}

// accessRestored clears a channel's lost-access flag after a good scan.
func (d *Deps) accessRestored(ctx context.Context, db *store.DB, ch *hoard.Channel) {
	if ch.AccessLostAt == nil {
		return
	}
	if _, err := db.SetChannelAccessLost(ctx, ch.ID, false); err != nil {
		d.Logger.Warn("clear lost channel access", "channel", ch.ID, "err", err)
	}
}

// spoolDir is the server-chosen directory of one source set's download.
func (d *Deps) spoolDir(channelID, messageID int64) string {
	return filepath.Join(d.SpoolDir, fmt.Sprintf("c%d-m%d", channelID, messageID))
}

// removeSpool deletes a spool directory; failures are logged only.
func (d *Deps) removeSpool(dir string) {
	if dir == "" {
		return
	}
	if err := os.RemoveAll(dir); err != nil {
		d.Logger.Warn("remove spool", "dir", dir, "err", err)
	}
}

// activity writes a run's live activity at most every 2 s (and always for
// a new step), so progress callbacks cost no more than that.
type activity struct {
	deps  *Deps
	db    *store.DB
	runID int64
	mu    sync.Mutex
	last  time.Time
	step  string
}

func (a *activity) set(ctx context.Context, act hoard.RunActivity) {
	if a == nil || a.runID == 0 {
		return
	}
	a.mu.Lock()
	now := time.Now()
	if act.Step == a.step && now.Sub(a.last) < 2*time.Second {
		a.mu.Unlock()
		return
	}
	a.last, a.step = now, act.Step
	a.mu.Unlock()
	if err := a.db.SetRunActivity(ctx, a.runID, act); err != nil {
		a.deps.Logger.Debug("set run activity", "run", a.runID, "err", err)
	}
}
