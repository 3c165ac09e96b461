package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

func (d *Deps) loginClient(ctx context.Context, accountID int64) (messenger.Account, error) {
	if d.Logins == nil || d.Secrets == nil {
		return nil, errNoLogins
	}
	acc, err := d.Logins.Login(ctx, accountID)
	if err != nil {
		return nil, fmt.Errorf("messenger client of account %d: %w", accountID, err)
	}
	return acc, nil
}

// AccountLoginWorker works hoard.AccountLoginArgs: a session that is still
// signed in refreshes the account's profile (AUTHENTICATED); otherwise the
// platform sends a login code to the account's phone and the sealed code
// request is kept on the account, now AWAITING_CODE. Every failure is
// recorded on the account (FAILED with the reason); nothing is retried.
type AccountLoginWorker struct {
	river.WorkerDefaults[hoard.AccountLoginArgs]
	deps Deps
}

// Work implements river.Worker.
func (w *AccountLoginWorker) Work(ctx context.Context, job *river.Job[hoard.AccountLoginArgs]) error {
	db := w.deps.DB
	a, err := db.FindAccountByID(ctx, job.Args.AccountID)
	if err != nil {
		return jobOutcome(fmt.Errorf("account login: account %d: %w", job.Args.AccountID, err))
	}
	client, err := w.deps.loginClient(ctx, a.ID)
	if err != nil {
		return w.deps.loginFailed(ctx, a.ID, "connect", err)
	}
	ok, err := client.Authorized(ctx)
	if err != nil {
		return w.deps.loginFailed(ctx, a.ID, "auth status", err)
	}
	if ok {
		return signedIn(ctx, &w.deps, job, a.ID, client)
	}
	if err := client.SendCode(ctx, a.Phone); err != nil {
		return w.deps.loginFailed(ctx, a.ID, "send code", err)
	}
	code, ok := client.PendingCode()
	if !ok {
		// No code to wait for: the platform signed the session in at once
		// (auth.sentCodeSuccess).
		if signed, err := client.Authorized(ctx); err == nil && signed {
			return signedIn(ctx, &w.deps, job, a.ID, client)
		}
		return w.deps.loginFailed(ctx, a.ID, "send code", errors.New("the client kept no code request"))
	}
	plain, err := json.Marshal(code)
	if err != nil {
		return w.deps.loginFailed(ctx, a.ID, "send code", err)
	}
	sealed, err := w.deps.Secrets.Seal(messenger.LoginLabel(a.ID, messenger.SecretCodeRequest), plain)
	if err != nil {
		return w.deps.loginFailed(ctx, a.ID, "send code", err)
	}
	w.deps.Logger.Info("login code sent", "account", a.ID)
	return completeTx(ctx, db, job, func(tx *store.DB, _ *river.Client[pgx.Tx]) error {
		return tx.SetAccountCodeSent(ctx, a.ID, sealed)
	})
}

// AccountSignInWorker works hoard.AccountSignInArgs: it opens the code (or
// 2FA password) an administrator submitted and signs in with it. A correct
// code without 2FA, or a correct password, ends AUTHENTICATED with the
// profile (name, Premium) refreshed; a code of an account with 2FA moves it
// to AWAITING_PASSWORD; a wrong code or password leaves it waiting for
// another. The secrets are cleared in the transaction that records the
// outcome, whatever it is, and never logged.
type AccountSignInWorker struct {
	river.WorkerDefaults[hoard.AccountSignInArgs]
	deps Deps
}

// Work implements river.Worker.
func (w *AccountSignInWorker) Work(ctx context.Context, job *river.Job[hoard.AccountSignInArgs]) error {
	db := w.deps.DB
	id := job.Args.AccountID
	secrets, err := db.FindAccountLoginSecrets(ctx, id)
	if err != nil {
		return jobOutcome(fmt.Errorf("account sign-in: account %d: %w", id, err))
	}
	if secrets.Code == nil && secrets.Password == nil {
		return nil // nothing submitted (or already used)
	}
	client, err := w.deps.loginClient(ctx, id)
	if err != nil {
		return w.deps.loginFailed(ctx, id, "connect", err)
	}
	open := func(secret string, blob []byte) ([]byte, error) {
		return w.deps.Secrets.Open(messenger.LoginLabel(id, secret), blob)
	}
	if secrets.Code != nil {
		if secrets.CodeRequest == nil {
			return w.deps.loginFailed(ctx, id, "sign in", hoard.Errorf(hoard.EINVALID, "No login code was requested; log in again."))
		}
		plain, err := open(messenger.SecretCodeRequest, secrets.CodeRequest)
		if err != nil {
			return w.deps.loginFailed(ctx, id, "sign in", err)
		}
		var req messenger.LoginCode
		if err := json.Unmarshal(plain, &req); err != nil {
			return w.deps.loginFailed(ctx, id, "sign in", fmt.Errorf("code request: %w", err))
		}
		code, err := open(messenger.SecretCode, secrets.Code)
		if err != nil {
			return w.deps.loginFailed(ctx, id, "sign in", err)
		}
		client.ResumeCode(req)
		err = client.SignIn(ctx, string(code))
		clear(code)
		switch {
		case err == nil:
			return signedIn(ctx, &w.deps, job, id, client)
		case errors.Is(err, messenger.ErrPasswordNeeded):
			return loginStep(ctx, &w.deps, job, id, hoard.AuthAwaitingPassword, "")
		case errors.Is(err, messenger.ErrInvalidCode):
			return loginStep(ctx, &w.deps, job, id, hoard.AuthAwaitingCode, "The login code is wrong or has expired. Type it again, or log in again for a new one.")
		}
		return w.deps.loginFailed(ctx, id, "sign in", err)
	}
	password, err := open(messenger.SecretPassword, secrets.Password)
	if err != nil {
		return w.deps.loginFailed(ctx, id, "check password", err)
	}
	err = client.CheckPassword(ctx, string(password))
	clear(password)
	switch {
	case err == nil:
		return signedIn(ctx, &w.deps, job, id, client)
	case errors.Is(err, messenger.ErrInvalidCode):
		return loginStep(ctx, &w.deps, job, id, hoard.AuthAwaitingPassword, "The password is wrong. Type it again.")
	}
	return w.deps.loginFailed(ctx, id, "check password", err)
}

// signedIn records a signed-in account: its profile (platform id, name,
// Premium) and AUTHENTICATED, with the login secrets cleared, in the
// transaction that completes job.
func signedIn[T river.JobArgs](ctx context.Context, d *Deps, job *river.Job[T], id int64, client messenger.Account) error {
	self, err := client.Self(ctx)
	if err != nil {
		return d.loginFailed(ctx, id, "read profile", err)
	}
	name := strings.TrimSpace(self.FirstName + " " + self.LastName)
	if self.Username != "" {
		name = strings.TrimSpace(name + " (@" + self.Username + ")")
	}
	d.Logger.Info("account signed in", "account", id, "premium", self.Premium)
	return completeTx(ctx, d.DB, job, func(tx *store.DB, _ *river.Client[pgx.Tx]) error {
		if err := tx.SetAccountProfile(ctx, id, self.ID, name, self.Premium); err != nil {
			return err
		}
		return tx.FinishAccountLogin(ctx, id, hoard.AuthAuthenticated, "")
	})
}

// loginStep records an intermediate state of a login (waiting for another
// code or for the password) in the transaction that completes job.
func loginStep[T river.JobArgs](ctx context.Context, d *Deps, job *river.Job[T], id int64, state hoard.AuthState, message string) error {
	return completeTx(ctx, d.DB, job, func(tx *store.DB, _ *river.Client[pgx.Tx]) error {
		return tx.FinishAccountLogin(ctx, id, state, message)
	})
}

// loginFailed records a failed login step on the account (FAILED, with the
// reason and, for a rate limit, when to try again), clears its secrets and
// returns the error for River, which does not retry login jobs.
func (d *Deps) loginFailed(ctx context.Context, id int64, step string, cause error) error {
	if errors.Is(cause, messenger.ErrSessionBusy) {
		// Another process holds the account's session (its login client):
		// the step waits for it, the login has not failed.
		serr, _ := snoozeIfLimited(cause)
		return serr
	}
	if err := d.DB.FinishAccountLogin(ctx, id, hoard.AuthFailed, step+": "+loginReason(cause)); err != nil {
		d.Logger.Warn("login: record failure", "account", id, "err", err)
	}
	d.Logger.Warn("login step failed", "account", id, "step", step, "err", cause)
	return fmt.Errorf("account %d: %s: %w", id, step, cause)
}
