package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"strings"
	"unicode/utf8"

	"github.com/hoard/hoard"
)

// App tokens: limits and the secret's form.
const (
	// MaxAppTokensPerUser bounds a user's live (unrevoked) tokens.
	MaxAppTokensPerUser = 20
	// MaxAppTokenName is the longest token name in characters (the CHECK
	// of app_tokens.name).
	MaxAppTokenName = 64
	// AppTokenScheme starts every secret, so that a leaked one is easy to
	// recognise (secret scanners, logs).
	AppTokenScheme = "hoard_"
	// appTokenRandomBytes of randomness follow the scheme, in base32.
	appTokenRandomBytes = 32
	// appTokenPrefixLen is how much of the secret is kept in the clear to
	// tell tokens apart: the scheme and 6 characters (30 of 256 bits).
	appTokenPrefixLen = len(AppTokenScheme) + 6
)

// appTokenEncoding writes secrets in lower-case base32 without padding:
// letters and digits only, so that a double click selects the whole secret.
var appTokenEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// appTokenLen is the length of every secret.
var appTokenLen = len(AppTokenScheme) + appTokenEncoding.EncodedLen(appTokenRandomBytes)

const appTokenColumns = `id, user_id, name, prefix, created_at, last_used_at, revoked_at`

// appTokenHash is what is stored of a secret: its SHA-256. The secret has
// 256 random bits, so no salt or slow hash is needed, and looking a token up
// by its hash compares no secret byte by byte.
func appTokenHash(secret string) []byte {
	sum := sha256.Sum256([]byte(secret))
	return sum[:]
}

// CreateAppToken makes a token for a user and returns it with its secret,
// which is not stored anywhere and cannot be read again. The name is
// trimmed and must be 1 to MaxAppTokenName characters (EINVALID); a user
// with MaxAppTokensPerUser live tokens gets ECONFLICT.
func (db *DB) CreateAppToken(ctx context.Context, userID int64, name string) (*hoard.AppToken, string, error) {
	name = strings.TrimSpace(name)
	switch n := utf8.RuneCountInString(name); {
	case n == 0:
		return nil, "", hoard.Errorf(hoard.EINVALID, "A token needs a name.")
	case n > MaxAppTokenName:
		return nil, "", hoard.Errorf(hoard.EINVALID, "A token's name is at most %d characters long.", MaxAppTokenName)
	}
	raw := make([]byte, appTokenRandomBytes)
	if _, err := rand.Read(raw); err != nil {
		return nil, "", err
	}
	secret := AppTokenScheme + appTokenEncoding.EncodeToString(raw)
	var tok *hoard.AppToken
	err := db.InTx(ctx, func(tx *DB) error {
		var n int
		// The user's row lock serialises concurrent creations of one user,
		// so the limit holds.
		if err := tx.q.QueryRow(ctx, `SELECT (SELECT count(*) FROM app_tokens WHERE user_id = u.id AND revoked_at IS NULL)
			FROM users u WHERE u.id = $1 FOR UPDATE`, userID).Scan(&n); err != nil {
			return wrap("create app token", err)
		}
		if n >= MaxAppTokensPerUser {
			return hoard.Errorf(hoard.ECONFLICT, "You have %d app tokens, the most there may be: revoke one first.", n)
		}
		// Revoked tokens authenticate nothing; a user keeps the newest
		// MaxAppTokensPerUser of them, so creating and revoking in a loop
		// cannot grow the table.
		if _, err := tx.q.Exec(ctx, `DELETE FROM app_tokens WHERE user_id = $1 AND revoked_at IS NOT NULL AND id NOT IN (
			SELECT id FROM app_tokens WHERE user_id = $1 AND revoked_at IS NOT NULL ORDER BY revoked_at DESC, id DESC LIMIT $2)`,
			userID, MaxAppTokensPerUser-1); err != nil {
			return wrap("create app token", err)
		}
		var err error
		tok, err = getOne[hoard.AppToken](ctx, tx.q, "create app token", `
			INSERT INTO app_tokens (user_id, name, token_hash, prefix) VALUES ($1, $2, $3, $4) RETURNING `+appTokenColumns,
			userID, name, appTokenHash(secret), secret[:appTokenPrefixLen])
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return tok, secret, nil
}

// ListAppTokens returns a user's live tokens, newest first.
func (db *DB) ListAppTokens(ctx context.Context, userID int64) ([]hoard.AppToken, error) {
	return getAll[hoard.AppToken](ctx, db.q, "list app tokens",
		`SELECT `+appTokenColumns+` FROM app_tokens WHERE user_id = $1 AND revoked_at IS NULL ORDER BY id DESC`, userID)
}

// RevokeAppToken revokes a token of ownerID, or of anyone when ownerID is
// 0 (an administrator's revocation). From the moment it returns, the token
// authenticates nothing: FindAppTokenUser reads the row on every request.
// Revoking a revoked token again changes nothing; ENOTFOUND when there is
// no such token of that owner.
func (db *DB) RevokeAppToken(ctx context.Context, id, ownerID int64) error {
	tag, err := db.q.Exec(ctx, `UPDATE app_tokens SET revoked_at = coalesce(revoked_at, now())
		WHERE id = $1 AND ($2 = 0 OR user_id = $2)`, id, ownerID)
	return notFoundIfNone("revoke app token", tag, err)
}

// FindAppTokenUser returns the live token whose secret this is, and its
// user. It is found by the secret's hash (a unique index), so the lookup
// takes as long for any wrong secret and compares no secret. ENOTFOUND for
// a secret of no token, of a revoked one, or not of the secrets' form
// (answered without a query).
func (db *DB) FindAppTokenUser(ctx context.Context, secret string) (*hoard.AppToken, *hoard.User, error) {
	if len(secret) != appTokenLen || !strings.HasPrefix(secret, AppTokenScheme) {
		return nil, nil, hoard.Errorf(hoard.ENOTFOUND, "find app token: not found")
	}
	var t hoard.AppToken
	var u hoard.User
	// One round trip per request: the token and its user together.
	err := db.q.QueryRow(ctx, `
		SELECT `+prefixed("t.", appTokenColumns)+`, `+prefixed("u.", "id, email, password_hash, role, display_name")+`,
			coalesce(u.invite_code_id, 0), u.created_at, u.updated_at, u.last_login_at
		FROM app_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_hash = $1 AND t.revoked_at IS NULL`,
		appTokenHash(secret)).Scan(&t.ID, &t.UserID, &t.Name, &t.Prefix, &t.CreatedAt, &t.LastUsedAt, &t.RevokedAt,
		&u.ID, &u.Email, &u.PasswordHash, &u.Role, &u.DisplayName, &u.InviteCodeID, &u.CreatedAt, &u.UpdatedAt, &u.LastLoginAt)
	if err != nil {
		return nil, nil, wrap("find app token", err)
	}
	return &t, &u, nil
}

// TouchAppToken records that a token was used, at most once a minute
// (the caller may call it on every request; the row is written only when
// its last use is older).
func (db *DB) TouchAppToken(ctx context.Context, id int64) error {
	_, err := db.q.Exec(ctx, `UPDATE app_tokens SET last_used_at = now()
		WHERE id = $1 AND revoked_at IS NULL AND (last_used_at IS NULL OR last_used_at <= now() - interval '1 minute')`, id)
	return wrap("touch app token", err)
}
