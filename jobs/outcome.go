package jobs

import (
	"errors"
	"time"

	"github.com/hoard/hoard"
	"github.com/riverqueue/river"
)

// rateLimitWait is how long a job snoozes on a rate limit that names no
// wait of its own (ERATELIMITED that is no platform FLOOD_WAIT).
const rateLimitWait = 30 * time.Second

// jobOutcome maps the error a worker ends with to what River does with the
// job, DESIGN.md's rule: nil completes the job; River's own snooze and
// cancel pass as they are; a rate limit snoozes (no attempt spent) for what
// the platform asked plus a second; input that no attempt can fix
// (EINVALID, ETOOLARGE) and a thing the job works on that is gone
// (ENOTFOUND, in hoard or on the platform) cancel it; anything else — a
// dropped connection, a restarting database, a timeout, EINTERNAL — is
// returned as it is, so River retries the job. Every lookup that may
// cancel a job ends through it. A failure recorded on a row the user sees
// first (a source set's skipFailure and transferFailed, a rebuild, a
// preview extraction) cancels only when permanent reports it, a subset of
// the above; workers that never cancel return their errors as they are.
func jobOutcome(err error) error {
	if err == nil {
		return nil
	}
	var snooze *river.JobSnoozeError
	var cancel *river.JobCancelError
	if errors.As(err, &snooze) || errors.As(err, &cancel) {
		return err
	}
	if serr, ok := snoozeIfLimited(err); ok {
		return serr
	}
	switch hoard.ErrorCode(err) {
	case hoard.ERATELIMITED:
		return river.JobSnooze(rateLimitWait)
	case hoard.EINVALID, hoard.ETOOLARGE, hoard.ENOTFOUND:
		return river.JobCancel(err)
	}
	return err
}
