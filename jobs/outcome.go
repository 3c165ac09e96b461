package jobs

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// This file is the one place that decides what River does with a job that
// did not simply succeed. Each job kind declares its policy in policies;
// every worker's Work ends through finish (worker.finish), which applies
// the kind's policy to the error the attempt ended with. A worker only
// says what went wrong (an error, lookup for the thing it works on, a
// subject to record the failure on); it never snoozes, cancels or records
// a failure itself. The snoozes a worker returns are waits that are no
// failure (a cycle polling its jobs, a download waiting for disk space, a
// scan continuing in a fresh attempt) and pass as they are.

// policy is how one job kind fails.
type policy struct {
	// retry is when a failed attempt runs again.
	retry retryRule
	// limits is how a rate limit ends an attempt.
	limits limitRule
	// cancels names the failures no attempt can fix: they end the job at
	// once (a lookup of what the job works on that finds it gone always
	// does).
	cancels cancelRule
	// record is which failed attempts are written on the job's subject
	// (the row the user sees), final says what the last one does to the
	// job.
	record recordRule
	final  finalRule
	// notify is the notifications a failure raises (a set of notifyRule).
	notify notifyRule
}

// retryRule is when a failed attempt runs again.
type retryRule int

const (
	// retryRiver is River's own backoff (attempt⁴ seconds).
	retryRiver retryRule = iota
	// retryPerCycle is a quick first retry (RetryBase), then one attempt
	// per cycle (LaterRetry), so an outage of one interval never spends a
	// source set's attempts (SPEC rule 12).
	retryPerCycle
	// retryDoubling is 5 s, doubling, capped at an hour: a cycle that
	// failed to start or finish holds its run, so it retries soon.
	retryDoubling
	// retrySoon is 5 s times the attempt: a user waits on the page.
	retrySoon
)

// limitRule is how a rate limit ends an attempt.
type limitRule int

const (
	// snoozeRateLimits snoozes on every rate limit (no attempt spent): a
	// FLOOD_WAIT for what the platform asked plus a second, an account
	// whose session another process holds for a moment, any other rate
	// limit for rateLimitWait.
	snoozeRateLimits limitRule = iota
	// snoozeBusySession snoozes only on a session another process holds;
	// a FLOOD_WAIT is the attempt's failure, recorded with its wait (a
	// login the administrator retries).
	snoozeBusySession
)

// cancelRule names the failures no attempt can fix.
type cancelRule int

const (
	// cancelNothing: every failure is retried until the attempts run out.
	cancelNothing cancelRule = iota
	// cancelGone: input no attempt can fix (EINVALID, ETOOLARGE) and a
	// thing the job works on that is gone (ENOTFOUND, in hoard or on the
	// platform) — DESIGN.md's rule for jobs.
	cancelGone
	// cancelPermanent: invalid input (EINVALID, ETOOLARGE) and a platform
	// message that is gone; a row of hoard that is missing is retried
	// (another job may be about to write it).
	cancelPermanent
)

// recordRule is which failed attempts are written on the job's subject.
type recordRule int

const (
	// recordNothing: River's job errors are the only trace.
	recordNothing recordRule = iota
	// recordAttempts: every failed attempt, the final one as given up.
	recordAttempts
	// recordFinal: the final failure only.
	recordFinal
)

// finalRule is what the final failure does to the job.
type finalRule int

const (
	// finalGivesUp ends the job: cancelled when a failure no attempt can
	// fix comes before its last attempt, else discarded by River — a
	// recorded job's subject says it was given up.
	finalGivesUp finalRule = iota
	// finalCompletes completes the job once its subject records the
	// failure: the row holds the outcome and a retry is the user's.
	finalCompletes
)

// notifyRule is a set of notifications a failure raises.
type notifyRule int

// The zero notifyRule raises nothing.
const (
	// notifyAccessLost raises CHANNEL_ACCESS_LOST (once while unresolved)
	// when the job's source channel became unreadable.
	notifyAccessLost notifyRule = 1 << iota
	// notifyAccessLostEnds does as notifyAccessLost and then completes the
	// job: a scan's other work and the other channels go on.
	notifyAccessLostEnds
	// notifyGaveUp raises, when a source set is given up, DOWNLOAD_FAILED
	// or UPLOAD_FAILED after the step that failed, once per source
	// message; a manual upload's file raises its upload's UPLOAD_FAILED
	// once the upload ends (SPEC rule 14).
	notifyGaveUp
	// notifyUploadFailed raises UPLOAD_FAILED once per manual upload that
	// ends with failed files.
	notifyUploadFailed
)

// policies is how every job kind fails, by River kind. A kind missing here
// fails to register.
var policies = map[string]policy{
	hoard.CleanupArgs{}.Kind():          {retry: retryRiver, cancels: cancelNothing},
	hoard.GroupChannelArgs{}.Kind():     {retry: retryRiver, cancels: cancelGone},
	hoard.LearnGroupRuleArgs{}.Kind():   {retry: retryRiver, cancels: cancelGone},
	hoard.AuditArgs{}.Kind():            {retry: retryRiver, cancels: cancelNothing},
	hoard.IngestCycleArgs{}.Kind():      {retry: retryDoubling, cancels: cancelNothing},
	hoard.ScanChannelArgs{}.Kind():      {retry: retryRiver, cancels: cancelNothing, notify: notifyAccessLostEnds},
	hoard.ScanTopicArgs{}.Kind():        {retry: retryRiver, cancels: cancelNothing, notify: notifyAccessLostEnds},
	hoard.RecoverTransfersArgs{}.Kind(): {retry: retryRiver, cancels: cancelNothing},
	hoard.RescanChannelArgs{}.Kind():    {retry: retryRiver, cancels: cancelGone},
	hoard.RepairPackageArgs{}.Kind():    {retry: retryRiver, cancels: cancelGone},
	hoard.RetrySkippedArgs{}.Kind():     {retry: retryRiver, cancels: cancelGone},
	hoard.DeleteStalePostsArgs{}.Kind(): {retry: retryRiver, cancels: cancelGone},
	hoard.AddBotAdminArgs{}.Kind():      {retry: retryRiver, cancels: cancelGone},
	hoard.IngestMessageArgs{}.Kind(): {retry: retryPerCycle, cancels: cancelPermanent, record: recordAttempts, final: finalGivesUp,
		notify: notifyAccessLost | notifyGaveUp},
	hoard.UploadPartArgs{}.Kind():             {retry: retryPerCycle, cancels: cancelPermanent, record: recordAttempts, final: finalGivesUp, notify: notifyGaveUp},
	hoard.VerifyTransferArgs{}.Kind():         {retry: retryPerCycle, cancels: cancelPermanent, record: recordAttempts, final: finalGivesUp, notify: notifyGaveUp},
	hoard.RebuildFromDestinationArgs{}.Kind(): {retry: retryRiver, cancels: cancelPermanent, record: recordAttempts, final: finalGivesUp},
	hoard.ExtractPreviewArgs{}.Kind():         {retry: retrySoon, cancels: cancelPermanent, record: recordAttempts, final: finalGivesUp},
	hoard.JoinChannelArgs{}.Kind():            {retry: retryRiver, cancels: cancelNothing, record: recordAttempts, final: finalCompletes},
	hoard.ManualUploadArgs{}.Kind(): {retry: retryRiver, cancels: cancelNothing, record: recordFinal, final: finalCompletes,
		notify: notifyUploadFailed},
	hoard.AccountLoginArgs{}.Kind():  {retry: retryRiver, limits: snoozeBusySession, cancels: cancelNothing, record: recordAttempts},
	hoard.AccountSignInArgs{}.Kind(): {retry: retryRiver, limits: snoozeBusySession, cancels: cancelNothing, record: recordAttempts},
}

// rateLimitWait is how long a job snoozes on a rate limit that names no
// wait of its own (ERATELIMITED that is no platform FLOOD_WAIT).
const rateLimitWait = 30 * time.Second

// sessionBusyWait is the least a job snoozes for an account whose session
// another process holds (plus as much again at random, so the hand-backs
// spread). Short: the holder takes what is available whenever it has room,
// and a job snoozed longer would leave it idle.
const sessionBusyWait = 500 * time.Millisecond

// briefWait is how long a job waits for River to record the end of
// another job (errPartJobUnfinished) or to post the first piece of a part
// just split (errPartSplit).
const briefWait = time.Second

// recordTimeout bounds the writing of a failed attempt's record, which
// outlives the job's own context (a job timeout).
const recordTimeout = 10 * time.Second

// failure is one failed attempt as its kind's policy judged it: what its
// subject writes.
type failure struct {
	err         error
	attempt     int
	maxAttempts int
	// final: no attempt follows.
	final bool
	// accessLost: the source channel became unreadable and the policy
	// notifies it; gaveUp: the set is given up and the policy notifies it.
	accessLost bool
	gaveUp     bool
}

// subject is what a failing job worked on, written on for the user to see
// as its kind's policy says: a source set's skipped record, a rebuild run,
// a join request, an account's login. Its failed writes f (and the
// notifications f asks for); finish decides everything else.
type subject interface {
	failed(ctx context.Context, f failure) error
}

// lookupError marks the failure to find what a job works on.
type lookupError struct{ err error }

func (e *lookupError) Error() string { return e.err.Error() }
func (e *lookupError) Unwrap() error { return e.err }

// lookup marks err as the failure to find what the job works on (its row,
// its channel map, its args' target): when that thing is gone or never was
// (ENOTFOUND, EINVALID, ETOOLARGE), finish cancels the job under every
// policy, unrecorded, as no attempt can find it; any other failure of the
// lookup is an attempt's failure like another. nil stays nil.
func lookup(err error) error {
	if err == nil {
		return nil
	}
	return &lookupError{err: err}
}

// failures applies the policies: the part every worker holds (through
// worker) to end its Work and time its retries.
type failures struct {
	log *slog.Logger
	// retryBase and laterRetry time retryPerCycle (Deps.RetryBase and
	// Deps.LaterRetry).
	retryBase, laterRetry time.Duration
}

// worker is embedded in every worker of the package: River's defaults,
// with NextRetry following the kind's policy and finish ending Work.
type worker[T river.JobArgs] struct {
	river.WorkerDefaults[T]
	fail *failures
}

// NextRetry implements river.Worker: the kind's retry policy.
func (w worker[T]) NextRetry(job *river.Job[T]) time.Time {
	return w.fail.nextRetry(job.Kind, job.Attempt)
}

// finish is the end of every Work: err (nil when the attempt succeeded)
// as the kind's policy says, subj (nil when there is nothing to write on
// yet) recording the failure.
func (w worker[T]) finish(ctx context.Context, job *river.Job[T], err error, subj subject) error {
	return w.fail.finish(ctx, job.JobRow, err, subj)
}

// policyOf is kind's policy; a kind without one fails as cancelNothing
// (Register refuses such a kind, so only tests see it).
func policyOf(kind string) policy { return policies[kind] }

// nextRetry is when attempt+1 of a job of kind runs after attempt failed;
// the zero time leaves it to River.
func (o *failures) nextRetry(kind string, attempt int) time.Time {
	switch policyOf(kind).retry {
	case retryPerCycle:
		if attempt <= 1 {
			return time.Now().Add(o.retryBase)
		}
		return time.Now().Add(o.laterRetry)
	case retryDoubling:
		return time.Now().Add(doubling(5*time.Second, attempt))
	case retrySoon:
		return time.Now().Add(time.Duration(attempt) * 5 * time.Second)
	}
	return time.Time{}
}

// doubling is the delay before attempt+1: base, then doubling, capped at
// an hour.
func doubling(base time.Duration, attempt int) time.Duration {
	d := base
	for i := 1; i < attempt && d < time.Hour; i++ {
		d *= 2
	}
	return min(d, time.Hour)
}

// finish maps the error an attempt of job row ended with to what River
// does with the job, by the kind's policy, in this order: nil completes;
// a snooze or cancellation the worker chose passes; a rate limit (limits)
// and a wait for another job to finish snooze, no attempt spent; a lookup
// that finds the job's thing gone cancels it; an attempt the process's
// shutdown interrupted is no failure (it runs again when a worker starts:
// store.RequeueJobsOf) and is returned unrecorded. Any other failure is
// judged final when the attempts ran out or cancels says no attempt can
// fix it; subj writes it (record) with the notifications it raises
// (notify); then the final one ends the job (final) and any other is
// returned for River to retry at the kind's nextRetry.
func (o *failures) finish(ctx context.Context, row *rivertype.JobRow, err error, subj subject) error {
	if err == nil {
		return nil
	}
	p := policyOf(row.Kind)
	var snooze *river.JobSnoozeError
	var cancel *river.JobCancelError
	if errors.As(err, &snooze) || errors.As(err, &cancel) {
		return err
	}
	if serr, ok := p.limits.snooze(err); ok {
		return serr
	}
	if errors.Is(err, errPartJobUnfinished) || errors.Is(err, errPartSplit) {
		return river.JobSnooze(briefWait)
	}
	if le := (*lookupError)(nil); errors.As(err, &le) && cancelGone.matches(le.err) {
		return river.JobCancel(err)
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		o.log.Info("attempt interrupted by shutdown", "kind", row.Kind, "job", row.ID, "attempt", row.Attempt)
		return err
	}
	permanent := p.cancels.matches(err)
	f := failure{err: err, attempt: row.Attempt, maxAttempts: row.MaxAttempts, final: row.Attempt >= row.MaxAttempts || permanent}
	f.accessLost = p.notify&(notifyAccessLost|notifyAccessLostEnds) != 0 && errors.Is(err, messenger.ErrAccessLost)
	f.gaveUp = f.final && p.notify&notifyGaveUp != 0
	if subj != nil && (p.record == recordAttempts || (p.record == recordFinal && f.final) || f.accessLost) {
		// A job timeout has expired ctx: the record is written all the same.
		rctx, done := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
		rerr := subj.failed(rctx, f)
		done()
		if rerr != nil {
			o.log.Error("record a failed attempt", "kind", row.Kind, "job", row.ID, "err", rerr)
			if f.final && p.final == finalCompletes {
				return rerr
			}
		}
	}
	o.log.Warn("attempt failed", "kind", row.Kind, "job", row.ID, "attempt", row.Attempt, "max_attempts", row.MaxAttempts,
		"final", f.final, "err", err)
	switch {
	case f.accessLost && p.notify&notifyAccessLostEnds != 0:
		return nil
	case f.final && p.final == finalCompletes:
		return nil
	case permanent && (row.Attempt < row.MaxAttempts || p.record == recordNothing):
		return river.JobCancel(err)
	}
	return err
}

// matches reports a failure no attempt can fix under rule c.
func (c cancelRule) matches(err error) bool {
	switch c {
	case cancelGone:
		switch hoard.ErrorCode(err) {
		case hoard.EINVALID, hoard.ETOOLARGE, hoard.ENOTFOUND:
			return true
		}
	case cancelPermanent:
		switch hoard.ErrorCode(err) {
		case hoard.EINVALID, hoard.ETOOLARGE:
			return true
		}
		return errors.Is(err, messenger.ErrNotFound)
	}
	return false
}

// snooze is the snooze a rate limit gets under rule l; false when err is
// no rate limit l snoozes on. The platform's FLOOD_WAIT is mapped here and
// nowhere else.
func (l limitRule) snooze(err error) (error, bool) {
	if errors.Is(err, messenger.ErrSessionBusy) {
		return river.JobSnooze(sessionBusyWait + rand.N(sessionBusyWait)), true
	}
	if l == snoozeBusySession {
		return err, false
	}
	if fw, ok := messenger.AsFloodWait(err); ok {
		return river.JobSnooze(fw.RetryAfter + time.Second), true
	}
	if hoard.ErrorCode(err) == hoard.ERATELIMITED {
		return river.JobSnooze(rateLimitWait), true
	}
	return err, false
}

// rateLimited reports a rate limit that ends an attempt at once rather
// than be retried within it (downloads and uploads resume broken
// transfers inline, never a rate limit: finish snoozes the job).
func rateLimited(err error) bool {
	_, ok := snoozeRateLimits.snooze(err)
	return ok
}
