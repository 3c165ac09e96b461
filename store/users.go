package store

import (
	"context"
	"strings"
	"time"

	"github.com/hoard/hoard"
	"github.com/jackc/pgx/v5"
)

const userColumns = `id, email, password_hash, role, display_name, coalesce(invite_code_id, 0) AS invite_code_id,
	created_at, updated_at, last_login_at`

const inviteColumns = `id, code, role, max_uses, use_count, expires_at, note, coalesce(created_by, 0) AS created_by, created_at`

// normalizeEmail trims an address; uniqueness is case-insensitive.
func normalizeEmail(email string) string { return strings.TrimSpace(email) }

// CreateUser stores a user. An email already registered (in any letter
// case) is ECONFLICT.
func (db *DB) CreateUser(ctx context.Context, email, passwordHash string, role hoard.Role) (*hoard.User, error) {
	return getOne[hoard.User](ctx, db.q, "create user",
		`INSERT INTO users (email, password_hash, role) VALUES ($1, $2, $3) RETURNING `+userColumns,
		normalizeEmail(email), passwordHash, string(role))
}

// FindUserByID returns a user.
func (db *DB) FindUserByID(ctx context.Context, id int64) (*hoard.User, error) {
	return getOne[hoard.User](ctx, db.q, "find user", `SELECT `+userColumns+` FROM users WHERE id = $1`, id)
}

// FindUserByEmail returns the user with that email, in any letter case.
func (db *DB) FindUserByEmail(ctx context.Context, email string) (*hoard.User, error) {
	return getOne[hoard.User](ctx, db.q, "find user by email",
		`SELECT `+userColumns+` FROM users WHERE lower(email) = lower($1)`, normalizeEmail(email))
}

// ListUsers returns every user, oldest first.
func (db *DB) ListUsers(ctx context.Context) ([]hoard.User, error) {
	return getAll[hoard.User](ctx, db.q, "list users", `SELECT `+userColumns+` FROM users ORDER BY id`)
}

// CountUsers counts users (0 means the first administrator is still to be
// created).
func (db *DB) CountUsers(ctx context.Context) (int64, error) {
	var n int64
	err := db.q.QueryRow(ctx, `SELECT count(*) FROM users`).Scan(&n)
	return n, wrap("count users", err)
}

// SetUserPassword replaces a user's password hash.
func (db *DB) SetUserPassword(ctx context.Context, id int64, passwordHash string) error {
	tag, err := db.q.Exec(ctx, `UPDATE users SET password_hash = $2, updated_at = now() WHERE id = $1`, id, passwordHash)
	return notFoundIfNone("set user password", tag, err)
}

// SetUserRole changes a user's role.
func (db *DB) SetUserRole(ctx context.Context, id int64, role hoard.Role) error {
	tag, err := db.q.Exec(ctx, `UPDATE users SET role = $2, updated_at = now() WHERE id = $1`, id, string(role))
	return notFoundIfNone("set user role", tag, err)
}

// RecordLogin stamps a user's last sign-in.
func (db *DB) RecordLogin(ctx context.Context, id int64) error {
	tag, err := db.q.Exec(ctx, `UPDATE users SET last_login_at = now() WHERE id = $1`, id)
	return notFoundIfNone("record login", tag, err)
}

// DeleteUser removes a user with their sessions, links and crowdfund
// records.
func (db *DB) DeleteUser(ctx context.Context, id int64) error {
	tag, err := db.q.Exec(ctx, `DELETE FROM users WHERE id = $1`, id)
	return notFoundIfNone("delete user", tag, err)
}

// Registration refusals, as users see them.
var (
	errInviteInvalid = hoard.Errorf(hoard.EINVALID, "This invite code is not valid.")
	errInviteExpired = hoard.Errorf(hoard.EINVALID, "This invite code has expired.")
	errInviteUsedUp  = hoard.Errorf(hoard.EINVALID, "This invite code has been used up.")
	errEmailTaken    = hoard.Errorf(hoard.ECONFLICT, "An account with this email already exists.")
)

// InviteRefusal says why an invite code cannot register anyone now (a user
// facing EINVALID error), or nil when it can; a nil code is not valid.
func InviteRefusal(inv *hoard.InviteCode, now time.Time) error {
	switch {
	case inv == nil:
		return errInviteInvalid
	case inv.ExpiresAt != nil && !now.Before(*inv.ExpiresAt):
		return errInviteExpired
	case inv.UseCount >= inv.MaxUses:
		return errInviteUsedUp
	}
	return nil
}

// RegisterWithInvite creates a user with the role of a valid invite code and
// counts the use, in one transaction that locks the code's row, so that
// concurrent registrations never exceed the code's maximum uses.
func (db *DB) RegisterWithInvite(ctx context.Context, code, email, passwordHash string) (*hoard.User, error) {
	var user *hoard.User
	err := db.InTx(ctx, func(tx *DB) error {
		inv, err := tx.useInvite(ctx, code, InviteRefusal)
		if err != nil {
			return err
		}
		user, err = tx.insertRegisteredUser(ctx, email, passwordHash, inv.Role, inv.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return user, nil
}

// useInvite locks a valid invite code's row and counts one use of it; the
// caller's transaction must create the user. A code that refusal refuses
// (InviteRefusal, IdentityInviteRefusal) is its error.
func (db *DB) useInvite(ctx context.Context, code string, refusal func(*hoard.InviteCode, time.Time) error) (*hoard.InviteCode, error) {
	inv, err := getOne[hoard.InviteCode](ctx, db.q, "use invite",
		`SELECT `+inviteColumns+` FROM invite_codes WHERE code = $1 FOR UPDATE`, strings.TrimSpace(code))
	if err != nil {
		if hoard.ErrorCode(err) == hoard.ENOTFOUND {
			return nil, errInviteInvalid
		}
		return nil, err
	}
	if err := refusal(inv, time.Now()); err != nil {
		return nil, err
	}
	_, err = db.q.Exec(ctx, `UPDATE invite_codes SET use_count = use_count + 1 WHERE id = $1`, inv.ID)
	return inv, wrap("use invite", err)
}

// insertRegisteredUser stores a user who registered (with an invite when
// inviteID is not 0); an email already registered is errEmailTaken.
func (db *DB) insertRegisteredUser(ctx context.Context, email, passwordHash string, role hoard.Role, inviteID int64) (*hoard.User, error) {
	user, err := getOne[hoard.User](ctx, db.q, "register",
		`INSERT INTO users (email, password_hash, role, invite_code_id) VALUES ($1, $2, $3, $4) RETURNING `+userColumns,
		normalizeEmail(email), passwordHash, string(role), nullInt(inviteID))
	if hoard.ErrorCode(err) == hoard.ECONFLICT {
		return nil, errEmailTaken
	}
	return user, err
}

// CreateInvite stores an invite code; inv is filled with the stored row.
func (db *DB) CreateInvite(ctx context.Context, inv *hoard.InviteCode) error {
	if inv.Role == "" {
		inv.Role = hoard.RoleUser
	}
	if inv.MaxUses == 0 {
		inv.MaxUses = 1
	}
	got, err := getOne[hoard.InviteCode](ctx, db.q, "create invite", `
		INSERT INTO invite_codes (code, role, max_uses, expires_at, note, created_by) VALUES ($1, $2, $3, $4, $5, $6)
		RETURNING `+inviteColumns, inv.Code, string(inv.Role), inv.MaxUses, inv.ExpiresAt, inv.Note, nullInt(inv.CreatedBy))
	if err != nil {
		return err
	}
	*inv = *got
	return nil
}

// FindInviteByCode returns an invite code.
func (db *DB) FindInviteByCode(ctx context.Context, code string) (*hoard.InviteCode, error) {
	return getOne[hoard.InviteCode](ctx, db.q, "find invite",
		`SELECT `+inviteColumns+` FROM invite_codes WHERE code = $1`, strings.TrimSpace(code))
}

// ListInvites returns every invite code, newest first, with the emails of
// the users who registered with it.
func (db *DB) ListInvites(ctx context.Context) ([]hoard.InviteCode, error) {
	return getAll[hoard.InviteCode](ctx, db.q, "list invites", `
		SELECT `+prefixed("i.", "id, code, role, max_uses, use_count, expires_at, note, created_at")+`,
			coalesce(i.created_by, 0) AS created_by,
			coalesce((SELECT array_agg(u.email ORDER BY u.id) FROM users u WHERE u.invite_code_id = i.id), '{}') AS used_by
		FROM invite_codes i ORDER BY i.created_at DESC, i.id DESC`)
}

// DeleteInvite removes an invite code; users who registered with it stay.
func (db *DB) DeleteInvite(ctx context.Context, id int64) error {
	tag, err := db.q.Exec(ctx, `DELETE FROM invite_codes WHERE id = $1`, id)
	return notFoundIfNone("delete invite", tag, err)
}

// CreateSession stores a session.
func (db *DB) CreateSession(ctx context.Context, s *hoard.Session) error {
	err := db.q.QueryRow(ctx, `INSERT INTO sessions (id, user_id, expires_at, user_agent, remote_addr) VALUES ($1, $2, $3, $4, $5)
		RETURNING created_at, last_seen_at`, s.ID, s.UserID, s.ExpiresAt, s.UserAgent, s.RemoteAddr).Scan(&s.CreatedAt, &s.LastSeenAt)
	return wrap("create session", err)
}

// FindSessionUser returns a live (unexpired) session and its user.
func (db *DB) FindSessionUser(ctx context.Context, id string) (*hoard.Session, *hoard.User, error) {
	type row struct {
		hoard.User
		SessionID         string
		SessionCreatedAt  time.Time
		SessionLastSeenAt time.Time
		SessionExpiresAt  time.Time
		SessionUserAgent  string
		SessionRemoteAddr string
		SessionUserLinked bool
	}
	// One round trip per request: the session, its user and whether the
	// user has a messenger link together.
	r, err := getOne[row](ctx, db.q, "find session", `
		SELECT `+prefixed("u.", "id, email, password_hash, role, display_name")+`, coalesce(u.invite_code_id, 0) AS invite_code_id,
			u.created_at, u.updated_at, u.last_login_at, s.id AS session_id, s.created_at AS session_created_at,
			s.last_seen_at AS session_last_seen_at, s.expires_at AS session_expires_at, s.user_agent AS session_user_agent,
			s.remote_addr AS session_remote_addr,
			EXISTS (SELECT 1 FROM messenger_links l WHERE l.user_id = u.id) AS session_user_linked
		FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.id = $1 AND s.expires_at > now()`, id)
	if err != nil {
		return nil, nil, err
	}
	s := &hoard.Session{ID: r.SessionID, UserID: r.User.ID, CreatedAt: r.SessionCreatedAt, LastSeenAt: r.SessionLastSeenAt,
		ExpiresAt: r.SessionExpiresAt, UserAgent: r.SessionUserAgent, RemoteAddr: r.SessionRemoteAddr, UserLinked: r.SessionUserLinked}
	u := r.User
	return s, &u, nil
}

// TouchSession records activity on a session and moves its expiry.
func (db *DB) TouchSession(ctx context.Context, id string, expiresAt time.Time) error {
	_, err := db.q.Exec(ctx, `UPDATE sessions SET last_seen_at = now(), expires_at = greatest(expires_at, $2) WHERE id = $1`, id, expiresAt)
	return wrap("touch session", err)
}

// DeleteSession ends one session (sign-out); an unknown id is fine.
func (db *DB) DeleteSession(ctx context.Context, id string) error {
	_, err := db.q.Exec(ctx, `DELETE FROM sessions WHERE id = $1`, id)
	return wrap("delete session", err)
}

// DeleteUserSessions ends every session of a user except keepID ("" = all),
// as a password change does.
func (db *DB) DeleteUserSessions(ctx context.Context, userID int64, keepID string) error {
	_, err := db.q.Exec(ctx, `DELETE FROM sessions WHERE user_id = $1 AND id <> $2`, userID, keepID)
	return wrap("delete user sessions", err)
}

// ThrottleKey is one sign-in throttle counter and the attempts it allows per
// window: "ip:<address>", or "account:<email> from <address>".
type ThrottleKey struct {
	Key string
	Max int
}

// Throttle is the answer to a sign-in attempt's reservation.
type Throttle struct {
	// Allowed is true when the attempt may check its password.
	Allowed bool
	// RetryAt is, for a refused attempt, when its keys let attempts through
	// again.
	RetryAt time.Time
}

// ReserveLoginAttempt counts a sign-in attempt against every key, before its
// password is checked, in one statement: each key's count grows by one (a
// new count starts once window has passed since the count began, or a lock
// has ended), and a key whose count goes past its Max is locked for lockFor.
// The attempt is allowed when no key was locked and none went past its Max.
// The rows are updated under their row locks, so concurrent attempts are
// counted one after another: at most Max attempts per key and window ever
// reach a password check, however many arrive at once. A refused attempt
// counts against the keys that were not locked, so hammering a locked key
// uses up the others' allowance too. Settle an allowed attempt that
// succeeded with RefundLoginAttempt.
func (db *DB) ReserveLoginAttempt(ctx context.Context, keys []ThrottleKey, window, lockFor time.Duration) (Throttle, error) {
	names, maxes := make([]string, len(keys)), make([]int32, len(keys))
	for i, k := range keys {
		names[i], maxes[i] = k.Key, int32(k.Max)
	}
	// A count starts again when its window has passed or its lock has
	// ended; a locked key is left alone (DO UPDATE … WHERE), so it neither
	// counts nor answers a row in "up".
	rows, err := db.q.Query(ctx, `
		WITH k (key, max_attempts) AS (SELECT * FROM unnest($1::text[], $2::int[])),
		up AS (
			INSERT INTO auth_throttle AS t (key, failures, window_started)
			SELECT key, 1, now() FROM k ORDER BY key
			ON CONFLICT (key) DO UPDATE SET
				failures = CASE WHEN t.window_started <= now() - $3::interval OR t.locked_until <= now()
					THEN 1 ELSE t.failures + 1 END,
				window_started = CASE WHEN t.window_started <= now() - $3::interval OR t.locked_until <= now()
					THEN now() ELSE t.window_started END,
				locked_until = CASE WHEN (CASE WHEN t.window_started <= now() - $3::interval OR t.locked_until <= now()
					THEN 1 ELSE t.failures + 1 END) > (SELECT max_attempts FROM k WHERE k.key = t.key)
					THEN now() + $4::interval END
			WHERE t.locked_until IS NULL OR t.locked_until <= now()
			RETURNING t.key, t.locked_until
		)
		SELECT up.key IS NOT NULL AND up.locked_until IS NULL AS allowed,
			coalesce(up.locked_until, cur.locked_until, now() + $4::interval) AS retry_at
		FROM k LEFT JOIN up ON up.key = k.key LEFT JOIN auth_throttle cur ON cur.key = k.key`,
		names, maxes, window, lockFor)
	if err != nil {
		return Throttle{}, wrap("reserve sign-in attempt", err)
	}
	type keyState struct {
		Allowed bool
		RetryAt time.Time
	}
	states, err := pgx.CollectRows(rows, pgx.RowToStructByName[keyState])
	if err != nil {
		return Throttle{}, wrap("reserve sign-in attempt", err)
	}
	t := Throttle{Allowed: true}
	for _, st := range states {
		if !st.Allowed {
			t.Allowed = false
			if st.RetryAt.After(t.RetryAt) {
				t.RetryAt = st.RetryAt
			}
		}
	}
	return t, nil
}

// RefundLoginAttempt gives an allowed attempt back to every unlocked key: a
// sign-in that succeeded is no failure (many people may sign in from one
// address).
func (db *DB) RefundLoginAttempt(ctx context.Context, keys []ThrottleKey) error {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.Key
	}
	_, err := db.q.Exec(ctx, `UPDATE auth_throttle SET failures = greatest(failures - 1, 0)
		WHERE key = ANY($1) AND (locked_until IS NULL OR locked_until <= now())`, names)
	return wrap("refund sign-in attempt", err)
}

// ClearThrottle forgets a key's failures after a successful sign-in.
func (db *DB) ClearThrottle(ctx context.Context, key string) error {
	_, err := db.q.Exec(ctx, `DELETE FROM auth_throttle WHERE key = $1`, key)
	return wrap("clear sign-in throttle", err)
}

// FindThrottleLock reports whether any of keys is locked now, without
// counting an attempt: Allowed is false, with RetryAt, while one is. A check
// that needs no reservation (an app token, which is looked up before it can
// fail) asks this first, so that a locked address learns nothing from its
// attempts, not even which would have succeeded.
func (db *DB) FindThrottleLock(ctx context.Context, keys []ThrottleKey) (Throttle, error) {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.Key
	}
	var until *time.Time
	err := db.q.QueryRow(ctx, `SELECT max(locked_until) FROM auth_throttle WHERE key = ANY($1) AND locked_until > now()`,
		names).Scan(&until)
	if err != nil {
		return Throttle{}, wrap("find sign-in throttle lock", err)
	}
	if until == nil {
		return Throttle{Allowed: true}, nil
	}
	return Throttle{RetryAt: *until}, nil
}
