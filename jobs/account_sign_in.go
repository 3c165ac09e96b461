package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
	"github.com/riverqueue/river"
)

// AccountSignInWorker works hoard.AccountSignInArgs: it opens the code (or
// 2FA password) an administrator submitted and signs in with it. A correct
// code without 2FA, or a correct password, ends AUTHENTICATED with the
// profile (name, Premium) refreshed; a code of an account with 2FA moves it
// to AWAITING_PASSWORD; a wrong code or password leaves it waiting for
// another. The secrets are cleared in the transaction that records the
// outcome, whatever it is, and never logged.
type AccountSignInWorker struct {
	worker[hoard.AccountSignInArgs]
	db     *store.DB
	logins *logins
}

func newAccountSignInWorker(p *parts) *AccountSignInWorker {
	return &AccountSignInWorker{worker: worker[hoard.AccountSignInArgs]{fail: p.fail}, db: p.db, logins: p.logins}
}

// Work implements river.Worker.
func (w *AccountSignInWorker) Work(ctx context.Context, job *river.Job[hoard.AccountSignInArgs]) error {
	id := job.Args.AccountID
	secrets, err := w.db.FindAccountLoginSecrets(ctx, id)
	if err != nil {
		return w.finish(ctx, job, lookup(fmt.Errorf("account sign-in: account %d: %w", id, err)), nil)
	}
	return w.finish(ctx, job, w.signIn(ctx, job, secrets), &loginSubject{l: w.logins, id: id})
}

// signIn signs account job.Args.AccountID in with the secrets submitted;
// a failed step is loginFailed's.
func (w *AccountSignInWorker) signIn(ctx context.Context, job *river.Job[hoard.AccountSignInArgs], secrets store.LoginSecrets) error {
	id := job.Args.AccountID
	if secrets.Code == nil && secrets.Password == nil {
		return nil // nothing submitted (or already used)
	}
	client, err := w.logins.client(ctx, id)
	if err != nil {
		return loginFailed("connect", err)
	}
	open := func(secret string, blob []byte) ([]byte, error) {
		return w.logins.secrets.Open(messenger.LoginLabel(id, secret), blob)
	}
	if secrets.Code != nil {
		if secrets.CodeRequest == nil {
			return loginFailed("sign in", hoard.Errorf(hoard.EINVALID, "No login code was requested; log in again."))
		}
		plain, err := open(messenger.SecretCodeRequest, secrets.CodeRequest)
		if err != nil {
			return loginFailed("sign in", err)
		}
		var req messenger.LoginCode
		if err := json.Unmarshal(plain, &req); err != nil {
			return loginFailed("sign in", fmt.Errorf("code request: %w", err))
		}
		code, err := open(messenger.SecretCode, secrets.Code)
		if err != nil {
			return loginFailed("sign in", err)
		}
		client.ResumeCode(req)
		err = client.SignIn(ctx, string(code))
		clear(code)
		switch {
		case err == nil:
			return signedIn(ctx, w.logins, job, id, client)
		case errors.Is(err, messenger.ErrPasswordNeeded):
			return loginStep(ctx, w.logins, job, id, hoard.AuthAwaitingPassword, "")
		case errors.Is(err, messenger.ErrInvalidCode):
			return loginStep(ctx, w.logins, job, id, hoard.AuthAwaitingCode, "The login code is wrong or has expired. Type it again, or log in again for a new one.")
		}
		return loginFailed("sign in", err)
	}
	password, err := open(messenger.SecretPassword, secrets.Password)
	if err != nil {
		return loginFailed("check password", err)
	}
	err = client.CheckPassword(ctx, string(password))
	clear(password)
	switch {
	case err == nil:
		return signedIn(ctx, w.logins, job, id, client)
	case errors.Is(err, messenger.ErrInvalidCode):
		return loginStep(ctx, w.logins, job, id, hoard.AuthAwaitingPassword, "The password is wrong. Type it again.")
	}
	return loginFailed("check password", err)
}
