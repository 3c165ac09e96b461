package store

import (
	"cmp"
	"context"
	"strings"

	"github.com/hoard/hoard"
)

const accountColumns = `id, phone, display_name, coalesce(platform_user_id, 0) AS platform_user_id, is_premium, is_active,
	auth_state, auth_error, (login_code_enc IS NOT NULL OR login_password_enc IS NOT NULL) AS login_pending,
	last_seen_at, created_at, updated_at`

// CreateAccount adds a messenger account by phone number (state PENDING).
// A phone that is already known is ECONFLICT.
func (db *DB) CreateAccount(ctx context.Context, phone string) (*hoard.Account, error) {
	if phone == "" {
		return nil, hoard.Errorf(hoard.EINVALID, "create account: phone is required")
	}
	return getOne[hoard.Account](ctx, db.q, "create account",
		`INSERT INTO messenger_accounts (phone) VALUES ($1) RETURNING `+accountColumns, phone)
}

// FindAccountByID returns an account.
func (db *DB) FindAccountByID(ctx context.Context, id int64) (*hoard.Account, error) {
	return getOne[hoard.Account](ctx, db.q, "find account", `SELECT `+accountColumns+` FROM messenger_accounts WHERE id = $1`, id)
}

// FindAccountByPhone returns the account with that phone number.
func (db *DB) FindAccountByPhone(ctx context.Context, phone string) (*hoard.Account, error) {
	return getOne[hoard.Account](ctx, db.q, "find account by phone",
		`SELECT `+accountColumns+` FROM messenger_accounts WHERE phone = $1`, phone)
}

// ListAccounts returns every account, oldest first.
func (db *DB) ListAccounts(ctx context.Context) ([]hoard.Account, error) {
	return getAll[hoard.Account](ctx, db.q, "list accounts", `SELECT `+accountColumns+` FROM messenger_accounts ORDER BY id`)
}

// SetAccountAuthState moves an account to a sign-in state with an error
// message ("" clears it). Any state may move to any other: an expired
// session is never a dead end.
func (db *DB) SetAccountAuthState(ctx context.Context, id int64, state hoard.AuthState, authError string) error {
	tag, err := db.q.Exec(ctx, `UPDATE messenger_accounts SET auth_state = $2, auth_error = $3, updated_at = now(),
		last_seen_at = CASE WHEN $2 = 'AUTHENTICATED' THEN now() ELSE last_seen_at END WHERE id = $1`,
		id, string(state), authError)
	return notFoundIfNone("set account auth state", tag, err)
}

// SetAccountProfile records what the platform tells about the signed-in
// user: its id, name and premium flag.
func (db *DB) SetAccountProfile(ctx context.Context, id, platformUserID int64, displayName string, premium bool) error {
	tag, err := db.q.Exec(ctx, `UPDATE messenger_accounts SET platform_user_id = $2, display_name = $3, is_premium = $4,
		last_seen_at = now(), updated_at = now() WHERE id = $1`, id, platformUserID, displayName, premium)
	return notFoundIfNone("set account profile", tag, err)
}

// SetAccountPremium records whether an account is Premium now, as the
// platform last reported it (the subscription can start or lapse at any
// time; the split limit follows it).
func (db *DB) SetAccountPremium(ctx context.Context, id int64, premium bool) error {
	tag, err := db.q.Exec(ctx, `UPDATE messenger_accounts SET is_premium = $2, updated_at = now() WHERE id = $1`, id, premium)
	return notFoundIfNone("set account premium", tag, err)
}

// SetAccountActive enables or disables an account for ingestion.
func (db *DB) SetAccountActive(ctx context.Context, id int64, active bool) error {
	tag, err := db.q.Exec(ctx, `UPDATE messenger_accounts SET is_active = $2, updated_at = now() WHERE id = $1`, id, active)
	return notFoundIfNone("set account active", tag, err)
}

// DeleteAccount removes an account with its channel maps and topic
// progress; runs and packages keep their history.
func (db *DB) DeleteAccount(ctx context.Context, id int64) error {
	tag, err := db.q.Exec(ctx, `DELETE FROM messenger_accounts WHERE id = $1`, id)
	return notFoundIfNone("delete account", tag, err)
}

// StartAccountLogin moves an account back to PENDING for a new login (the
// worker's account_login job takes it from there) and forgets every login
// secret in flight. Call it in the transaction that inserts the job.
func (db *DB) StartAccountLogin(ctx context.Context, id int64) (*hoard.Account, error) {
	return getOne[hoard.Account](ctx, db.q, "start account login", `UPDATE messenger_accounts SET auth_state = 'PENDING',
		auth_error = '', login_code_hash_enc = NULL, login_code_enc = NULL, login_password_enc = NULL, updated_at = now()
		WHERE id = $1 RETURNING `+accountColumns, id)
}

// SetAccountCodeSent records that the platform sent a login code: the
// account waits for it (AWAITING_CODE) and keeps the sealed code request
// (messenger.LoginCode) that the sign-in needs with the code.
func (db *DB) SetAccountCodeSent(ctx context.Context, id int64, sealedCodeRequest []byte) error {
	tag, err := db.q.Exec(ctx, `UPDATE messenger_accounts SET auth_state = 'AWAITING_CODE', auth_error = '',
		login_code_hash_enc = $2, login_code_enc = NULL, login_password_enc = NULL, updated_at = now() WHERE id = $1`,
		id, sealedCodeRequest)
	return notFoundIfNone("set account code sent", tag, err)
}

// SubmitAccountCode stores a sealed login code for the worker. The account
// must be AWAITING_CODE with no code or password already waiting
// (ECONFLICT otherwise). Call it in the transaction that inserts the
// account_sign_in job.
func (db *DB) SubmitAccountCode(ctx context.Context, id int64, sealedCode []byte) error {
	return db.submitLoginSecret(ctx, id, hoard.AuthAwaitingCode, `login_code_enc`, sealedCode)
}

// SubmitAccountPassword stores a sealed 2FA password for the worker; the
// account must be AWAITING_PASSWORD (see SubmitAccountCode).
func (db *DB) SubmitAccountPassword(ctx context.Context, id int64, sealedPassword []byte) error {
	return db.submitLoginSecret(ctx, id, hoard.AuthAwaitingPassword, `login_password_enc`, sealedPassword)
}

func (db *DB) submitLoginSecret(ctx context.Context, id int64, state hoard.AuthState, column string, sealed []byte) error {
	op := "submit account " + strings.TrimSuffix(strings.TrimPrefix(column, "login_"), "_enc")
	tag, err := db.q.Exec(ctx, `UPDATE messenger_accounts SET `+column+` = $3, updated_at = now()
		WHERE id = $1 AND auth_state = $2 AND login_code_enc IS NULL AND login_password_enc IS NULL`, id, string(state), sealed)
	if err != nil {
		return wrap(op, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	acc, err := db.FindAccountByID(ctx, id)
	if err != nil {
		return err
	}
	if acc.LoginPending {
		return hoard.Errorf(hoard.ECONFLICT, "%s: a code or password is already being checked", op)
	}
	return hoard.Errorf(hoard.ECONFLICT, "%s: the account is %s, not %s", op, acc.AuthState, state)
}

// LoginSecrets are the sealed login secrets of an account in flight; nil
// when absent.
type LoginSecrets struct {
	CodeRequest []byte // a sealed messenger.LoginCode
	Code        []byte
	Password    []byte
}

// FindAccountLoginSecrets returns an account's sealed login secrets.
func (db *DB) FindAccountLoginSecrets(ctx context.Context, id int64) (LoginSecrets, error) {
	var s LoginSecrets
	err := db.q.QueryRow(ctx, `SELECT login_code_hash_enc, login_code_enc, login_password_enc FROM messenger_accounts
		WHERE id = $1`, id).Scan(&s.CodeRequest, &s.Code, &s.Password)
	return s, wrap("find account login secrets", err)
}

// FinishAccountLogin records the outcome of a login step: the new state and
// error message. The submitted code and password are cleared whatever the
// outcome; the code request is kept only while the account still waits for
// a code (a wrong code may be typed again).
func (db *DB) FinishAccountLogin(ctx context.Context, id int64, state hoard.AuthState, authError string) error {
	tag, err := db.q.Exec(ctx, `UPDATE messenger_accounts SET auth_state = $2, auth_error = $3,
		login_code_enc = NULL, login_password_enc = NULL,
		login_code_hash_enc = CASE WHEN $2 = 'AWAITING_CODE' THEN login_code_hash_enc END,
		last_seen_at = CASE WHEN $2 = 'AUTHENTICATED' THEN now() ELSE last_seen_at END, updated_at = now()
		WHERE id = $1`, id, string(state), authError)
	return notFoundIfNone("finish account login", tag, err)
}

// LoadMessengerSession returns the stored (encrypted) client session under
// key, or nil when there is none.
func (db *DB) LoadMessengerSession(ctx context.Context, key string) ([]byte, error) {
	var data []byte
	err := db.q.QueryRow(ctx, `SELECT data FROM messenger_sessions WHERE key = $1`, key).Scan(&data)
	if err != nil {
		if isNoRows(err) {
			return nil, nil
		}
		return nil, wrap("load messenger session", err)
	}
	return data, nil
}

// SaveMessengerSession stores an (encrypted) client session under key.
func (db *DB) SaveMessengerSession(ctx context.Context, key string, data []byte) error {
	_, err := db.q.Exec(ctx, `INSERT INTO messenger_sessions (key, data) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET data = EXCLUDED.data, updated_at = now()`, key, data)
	return wrap("save messenger session", err)
}

// DeleteMessengerSession forgets a stored client session (sign-out).
func (db *DB) DeleteMessengerSession(ctx context.Context, key string) error {
	_, err := db.q.Exec(ctx, `DELETE FROM messenger_sessions WHERE key = $1`, key)
	return wrap("delete messenger session", err)
}

// SessionEnded records that the platform signed an account out, in one
// transaction: the account moves to EXPIRED with reason, its stored session
// (under sessionKey) is forgotten, so the next login starts with a new auth
// key, and one SESSION_ENDED notification tells the administrators (one
// while it is not dismissed).
func (db *DB) SessionEnded(ctx context.Context, accountID int64, sessionKey, reason string) error {
	return db.InTx(ctx, func(tx *DB) error {
		a, err := tx.FindAccountByID(ctx, accountID)
		if err != nil {
			return err
		}
		if err := tx.SetAccountAuthState(ctx, accountID, hoard.AuthExpired, reason); err != nil {
			return err
		}
		if err := tx.DeleteMessengerSession(ctx, sessionKey); err != nil {
			return err
		}
		_, err = tx.CreateNotification(ctx, &hoard.Notification{Type: hoard.NotifySessionEnded, Severity: hoard.SeverityError,
			Title: "Messenger account signed out: " + cmp.Or(a.DisplayName, a.Phone), Message: reason,
			DedupKey: "SESSION_ENDED:" + itoa(accountID)})
		return err
	})
}
