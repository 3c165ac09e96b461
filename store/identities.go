package store

import (
	"context"
	"errors"
	"time"

	"github.com/hoard/hoard"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

const identityColumns = `id, user_id, provider, issuer, subject, email, created_at, last_used_at`

// Refusals of identity changes, as users see them.
var (
	errIdentityTaken    = hoard.Errorf(hoard.ECONFLICT, "That account is already linked to another hoard user.")
	errProviderLinked   = hoard.Errorf(hoard.ECONFLICT, "You have already linked an account of this provider: unlink it first.")
	errLastWayToSignIn  = hoard.Errorf(hoard.ECONFLICT, "This is your only way to sign in: set a password or link another account first.")
	errInviteMakesAdmin = hoard.Errorf(hoard.EINVALID, "This invite code registers an administrator: register with a password instead.")
	errNoIdentity       = hoard.Errorf(hoard.ENOTFOUND, "No account of this provider is linked.")
)

// SignInFlow is a sign-in through an identity provider, or a link of a
// provider account from Settings, that the provider has not sent back yet.
// ID is the SHA-256 (hex) of the state sent to the provider: the table never
// holds a usable state.
type SignInFlow struct {
	ID       string
	Provider string
	// Verifier is the PKCE code verifier; Nonce is what the ID token must
	// carry.
	Verifier string
	Nonce    string
	// NextPath is the local path to go to after signing in.
	NextPath string
	// InviteCode is the invite a new account would register with ("" =
	// none).
	InviteCode string
	// LinkUserID is the user a link is for (0: a sign-in).
	LinkUserID int64
	// PasswordConfirmed is true when the user typed their password to
	// start the link.
	PasswordConfirmed bool
	CreatedAt         time.Time
	ExpiresAt         time.Time
}

// CreateSignInFlow stores a flow that expires at f.ExpiresAt.
func (db *DB) CreateSignInFlow(ctx context.Context, f *SignInFlow) error {
	err := db.q.QueryRow(ctx, `
		INSERT INTO sign_in_flows (id, provider, verifier, nonce, next_path, invite_code, link_user_id, password_confirmed, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING created_at`,
		f.ID, f.Provider, f.Verifier, f.Nonce, f.NextPath, f.InviteCode, nullInt(f.LinkUserID), f.PasswordConfirmed, f.ExpiresAt).
		Scan(&f.CreatedAt)
	return wrap("create sign-in flow", err)
}

// TakeSignInFlow returns the flow with that id and deletes it, in one
// statement: a flow is taken once, however many requests bring its state at
// once. An unknown, already taken or expired flow is ENOTFOUND.
func (db *DB) TakeSignInFlow(ctx context.Context, id string) (*SignInFlow, error) {
	return getOne[SignInFlow](ctx, db.q, "take sign-in flow", `
		DELETE FROM sign_in_flows WHERE id = $1 AND expires_at > now()
		RETURNING id, provider, verifier, nonce, next_path, invite_code, coalesce(link_user_id, 0) AS link_user_id,
			password_confirmed, created_at, expires_at`, id)
}

// FindUserByIdentity returns the user a provider account is linked to, and
// the link.
func (db *DB) FindUserByIdentity(ctx context.Context, issuer, subject string) (*hoard.User, *hoard.Identity, error) {
	id, err := getOne[hoard.Identity](ctx, db.q, "find user by identity",
		`SELECT `+identityColumns+` FROM user_identities WHERE issuer = $1 AND subject = $2`, issuer, subject)
	if err != nil {
		return nil, nil, err
	}
	user, err := db.FindUserByID(ctx, id.UserID)
	if err != nil {
		return nil, nil, err
	}
	return user, id, nil
}

// RecordIdentityUse stamps a sign-in through a linked account and keeps the
// e-mail the provider gave this time.
func (db *DB) RecordIdentityUse(ctx context.Context, id int64, email string) error {
	tag, err := db.q.Exec(ctx, `UPDATE user_identities SET last_used_at = now(), email = $2 WHERE id = $1`, id, email)
	return notFoundIfNone("record identity use", tag, err)
}

// ListIdentities returns the provider accounts linked to a user, in the
// order they were linked.
func (db *DB) ListIdentities(ctx context.Context, userID int64) ([]hoard.Identity, error) {
	return getAll[hoard.Identity](ctx, db.q, "list identities",
		`SELECT `+identityColumns+` FROM user_identities WHERE user_id = $1 ORDER BY id`, userID)
}

// IdentityInviteRefusal is InviteRefusal for a sign-up through an identity
// provider, which also refuses an invite that registers an administrator:
// a provider never makes one by itself.
func IdentityInviteRefusal(inv *hoard.InviteCode, now time.Time) error {
	if err := InviteRefusal(inv, now); err != nil {
		return err
	}
	if inv.Role != hoard.RoleUser {
		return errInviteMakesAdmin
	}
	return nil
}

// IdentityUser is a user who signs up through an identity provider.
type IdentityUser struct {
	Email string
	Role  hoard.Role
	// InviteCode is the invite the account registers with; "" when the
	// caller allows the sign-up without one (an allowed e-mail domain).
	InviteCode string
	Identity   hoard.Identity // Provider, Issuer, Subject and Email are stored
}

// RegisterWithIdentity creates a user without a password, linked to a
// provider account, in one transaction that counts the use of the invite
// code (locking its row, like RegisterWithInvite). The user gets nu.Role,
// never the invite's: an invite that registers an administrator is refused
// (IdentityInviteRefusal). An email already registered, or a provider account already
// linked, is ECONFLICT.
func (db *DB) RegisterWithIdentity(ctx context.Context, nu IdentityUser) (*hoard.User, error) {
	var user *hoard.User
	err := db.InTx(ctx, func(tx *DB) error {
		var inviteID int64
		if nu.InviteCode != "" {
			inv, err := tx.useInvite(ctx, nu.InviteCode, IdentityInviteRefusal)
			if err != nil {
				return err
			}
			inviteID = inv.ID
		}
		var err error
		if user, err = tx.insertRegisteredUser(ctx, nu.Email, "", nu.Role, inviteID); err != nil {
			return err
		}
		_, err = tx.LinkIdentity(ctx, user.ID, nu.Identity)
		return err
	})
	if err != nil {
		return nil, err
	}
	return user, nil
}

// LinkIdentity links a provider account to a user; linking the user's own
// account again returns the link. A provider account linked to someone else
// is ECONFLICT (errIdentityTaken), and so is a second account of the same
// provider for one user. It leaves a surrounding transaction usable.
func (db *DB) LinkIdentity(ctx context.Context, userID int64, id hoard.Identity) (*hoard.Identity, error) {
	got, err := getOne[hoard.Identity](ctx, db.q, "link identity", `
		INSERT INTO user_identities (user_id, provider, issuer, subject, email, last_used_at) VALUES ($1, $2, $3, $4, $5, now())
		ON CONFLICT (issuer, subject) DO NOTHING
		RETURNING `+identityColumns, userID, id.Provider, id.Issuer, id.Subject, id.Email)
	switch {
	case violates(err, "user_identities_user_id_provider_key"):
		return nil, errProviderLinked
	case hoard.ErrorCode(err) != hoard.ENOTFOUND:
		return got, err
	}
	// The account is linked already: to this user, or to someone else.
	got, err = getOne[hoard.Identity](ctx, db.q, "link identity",
		`SELECT `+identityColumns+` FROM user_identities WHERE issuer = $1 AND subject = $2`, id.Issuer, id.Subject)
	if err == nil && got.UserID != userID {
		return nil, errIdentityTaken
	}
	return got, err
}

// violates reports whether err is a violation of the named constraint.
func violates(err error, constraint string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.ConstraintName == constraint
}

// UnlinkIdentity removes a user's account of a provider, unless it is the
// user's last way to sign in (no password, no other linked account):
// ECONFLICT then. The user's row is locked first and the accounts left are
// counted after the lock, in a statement of their own (a statement's
// snapshot predates the lock it waited for), so two unlinks at once cannot
// both remove "the other" account. No such account is ENOTFOUND.
func (db *DB) UnlinkIdentity(ctx context.Context, userID int64, provider string) error {
	return db.InTx(ctx, func(tx *DB) error {
		var hasPassword bool
		err := tx.q.QueryRow(ctx, `SELECT password_hash <> '' FROM users WHERE id = $1 FOR UPDATE`, userID).Scan(&hasPassword)
		if err != nil {
			return wrap("unlink identity", err)
		}
		tag, err := tx.q.Exec(ctx, `DELETE FROM user_identities WHERE user_id = $1 AND provider = $2`, userID, provider)
		if err != nil {
			return wrap("unlink identity", err)
		}
		if tag.RowsAffected() == 0 {
			return errNoIdentity
		}
		var left int
		if err := tx.q.QueryRow(ctx, `SELECT count(*) FROM user_identities WHERE user_id = $1`, userID).Scan(&left); err != nil {
			return wrap("unlink identity", err)
		}
		if !hasPassword && left == 0 {
			return errLastWayToSignIn
		}
		return nil
	})
}

// SetUserPasswordIfNone gives a user who has no password one (a user who
// signed up through a provider); a user who has one already is ECONFLICT,
// so a stolen session cannot replace a password without knowing it.
func (db *DB) SetUserPasswordIfNone(ctx context.Context, id int64, passwordHash string) error {
	tag, err := db.q.Exec(ctx, `UPDATE users SET password_hash = $2, updated_at = now() WHERE id = $1 AND password_hash = ''`,
		id, passwordHash)
	if err == nil && tag.RowsAffected() == 0 {
		return hoard.Errorf(hoard.ECONFLICT, "You have a password already: change it with the current one.")
	}
	return wrap("set first password", err)
}

// SetRoleFromProvider gives a user the role an identity provider's claims
// map to and returns the role the user has afterwards. It never takes the
// role of the last administrator: demoting them would leave nobody to
// administer hoard, so they stay ADMIN. The administrators' rows are locked
// first, so two demotions at once cannot both count on the other.
func (db *DB) SetRoleFromProvider(ctx context.Context, id int64, role hoard.Role) (hoard.Role, error) {
	var got hoard.Role
	err := db.InTx(ctx, func(tx *DB) error {
		rows, err := tx.q.Query(ctx, `SELECT id FROM users WHERE role = 'ADMIN' ORDER BY id FOR UPDATE`)
		if err != nil {
			return wrap("set role from provider", err)
		}
		admins, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return wrap("set role from provider", err)
		}
		if role != hoard.RoleAdmin && len(admins) == 1 && admins[0] == id {
			got = hoard.RoleAdmin
			return nil
		}
		got = role
		return tx.SetUserRole(ctx, id, role)
	})
	return got, err
}
