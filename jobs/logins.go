package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// Logins gives the messenger client of an account whether or not it is
// signed in, for the login jobs. A client that signs in through it becomes
// the one Accounts returns.
type Logins interface {
	Login(ctx context.Context, accountID int64) (messenger.Account, error)
}

// errNoLogins is the failure of login jobs on a worker built without
// messenger clients or without AUTH_SECRET.
var errNoLogins = hoard.Errorf(hoard.EINTERNAL, "this worker cannot sign accounts in (no messenger clients or no AUTH_SECRET)")

// logins signs accounts in for the login jobs (account_login,
// account_sign_in): their clients, the sealed secrets in flight, and the
// account's state after each step.
type logins struct {
	db      *store.DB
	log     *slog.Logger
	logins  Logins
	secrets *messenger.Sealer
}

// client is the messenger client of accountID, signed in or not;
// errNoLogins without clients or AUTH_SECRET.
func (l *logins) client(ctx context.Context, accountID int64) (messenger.Account, error) {
	if l.logins == nil || l.secrets == nil {
		return nil, errNoLogins
	}
	acc, err := l.logins.Login(ctx, accountID)
	if err != nil {
		return nil, fmt.Errorf("messenger client of account %d: %w", accountID, err)
	}
	return acc, nil
}

// signedIn records a signed-in account: its profile (platform id, name,
// Premium) and AUTHENTICATED, with the login secrets cleared, in the
// transaction that completes job.
func signedIn[T river.JobArgs](ctx context.Context, l *logins, job *river.Job[T], id int64, client messenger.Account) error {
	self, err := client.Self(ctx)
	if err != nil {
		return loginFailed("read profile", err)
	}
	name := strings.TrimSpace(self.FirstName + " " + self.LastName)
	if self.Username != "" {
		name = strings.TrimSpace(name + " (@" + self.Username + ")")
	}
	l.log.Info("account signed in", "account", id, "premium", self.Premium)
	return completeTx(ctx, l.db, job, func(tx *store.DB, _ *river.Client[pgx.Tx]) error {
		if err := tx.SetAccountProfile(ctx, id, self.ID, name, self.Premium); err != nil {
			return err
		}
		return tx.FinishAccountLogin(ctx, id, hoard.AuthAuthenticated, "")
	})
}

// loginStep records an intermediate state of a login (waiting for another
// code or for the password) in the transaction that completes job.
func loginStep[T river.JobArgs](ctx context.Context, l *logins, job *river.Job[T], id int64, state hoard.AuthState, message string) error {
	return completeTx(ctx, l.db, job, func(tx *store.DB, _ *river.Client[pgx.Tx]) error {
		return tx.FinishAccountLogin(ctx, id, state, message)
	})
}

// loginStepError is a failed step of a login: the step's name and why.
type loginStepError struct {
	step string
	err  error
}

func (e *loginStepError) Error() string { return e.step + ": " + e.err.Error() }
func (e *loginStepError) Unwrap() error { return e.err }

// loginFailed is the failure of login step step (connect, send code, sign
// in, …) for cause: its policy records it on the account (loginSubject).
func loginFailed(step string, cause error) error {
	return &loginStepError{step: step, err: cause}
}

// loginSubject is an account as the subject of its login jobs' failures
// (which are not retried): a failed step makes it FAILED with the reason
// (loginReason; for a rate limit, when to try again), its secrets cleared.
// A failure that is no login step's (the database) leaves it as it is.
type loginSubject struct {
	l  *logins
	id int64
}

// failed implements subject.
func (s *loginSubject) failed(ctx context.Context, f failure) error {
	var se *loginStepError
	if !errors.As(f.err, &se) {
		return nil
	}
	s.l.log.Warn("login step failed", "account", s.id, "step", se.step, "err", se.err)
	return s.l.db.FinishAccountLogin(ctx, s.id, hoard.AuthFailed, se.step+": "+loginReason(se.err))
}
