package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// AccountLoginWorker works hoard.AccountLoginArgs: a session that is still
// signed in refreshes the account's profile (AUTHENTICATED); otherwise the
// platform sends a login code to the account's phone and the sealed code
// request is kept on the account, now AWAITING_CODE. Every failure is
// recorded on the account (FAILED with the reason); nothing is retried.
type AccountLoginWorker struct {
	worker[hoard.AccountLoginArgs]
	db     *store.DB
	logins *logins
}

func newAccountLoginWorker(p *parts) *AccountLoginWorker {
	return &AccountLoginWorker{worker: worker[hoard.AccountLoginArgs]{fail: p.fail}, db: p.db, logins: p.logins}
}

// Work implements river.Worker.
func (w *AccountLoginWorker) Work(ctx context.Context, job *river.Job[hoard.AccountLoginArgs]) error {
	a, err := w.db.FindAccountByID(ctx, job.Args.AccountID)
	if err != nil {
		return w.finish(ctx, job, lookup(fmt.Errorf("account login: account %d: %w", job.Args.AccountID, err)), nil)
	}
	return w.finish(ctx, job, w.login(ctx, job, a), &loginSubject{l: w.logins, id: a.ID})
}

// login sends account a a login code, or refreshes a session still signed
// in; a failed step is loginFailed's.
func (w *AccountLoginWorker) login(ctx context.Context, job *river.Job[hoard.AccountLoginArgs], a *hoard.Account) error {
	db := w.db
	client, err := w.logins.client(ctx, a.ID)
	if err != nil {
		return loginFailed("connect", err)
	}
	ok, err := client.Authorized(ctx)
	if err != nil {
		return loginFailed("auth status", err)
	}
	if ok {
		return signedIn(ctx, w.logins, job, a.ID, client)
	}
	if err := client.SendCode(ctx, a.Phone); err != nil {
		return loginFailed("send code", err)
	}
	code, ok := client.PendingCode()
	if !ok {
		// No code to wait for: the platform signed the session in at once
		// (auth.sentCodeSuccess).
		if signed, err := client.Authorized(ctx); err == nil && signed {
			return signedIn(ctx, w.logins, job, a.ID, client)
		}
		return loginFailed("send code", errors.New("the client kept no code request"))
	}
	plain, err := json.Marshal(code)
	if err != nil {
		return loginFailed("send code", err)
	}
	sealed, err := w.logins.secrets.Seal(messenger.LoginLabel(a.ID, messenger.SecretCodeRequest), plain)
	if err != nil {
		return loginFailed("send code", err)
	}
	w.logins.log.Info("login code sent", "account", a.ID)
	return completeTx(ctx, db, job, func(tx *store.DB, _ *river.Client[pgx.Tx]) error {
		return tx.SetAccountCodeSent(ctx, a.ID, sealed)
	})
}
