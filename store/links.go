package store

import (
	"context"
	"time"

	"github.com/hoard/hoard"
)

const linkColumns = `id, user_id, platform_user_id, access_hash, username, linked_at`

// CreateLinkCode stores a one-time link code (its hash) for a user,
// replacing the user's earlier codes.
func (db *DB) CreateLinkCode(ctx context.Context, userID int64, codeHash string, expiresAt time.Time) error {
	return db.InTx(ctx, func(tx *DB) error {
		if _, err := tx.q.Exec(ctx, `DELETE FROM messenger_link_codes WHERE user_id = $1`, userID); err != nil {
			return wrap("create link code", err)
		}
		_, err := tx.q.Exec(ctx, `INSERT INTO messenger_link_codes (code_hash, user_id, expires_at) VALUES ($1, $2, $3)`,
			codeHash, userID, expiresAt)
		return wrap("create link code", err)
	})
}

// FindMessengerLink returns a user's link; ENOTFOUND when not linked.
func (db *DB) FindMessengerLink(ctx context.Context, userID int64) (*hoard.MessengerLink, error) {
	return getOne[hoard.MessengerLink](ctx, db.q, "find messenger link",
		`SELECT `+linkColumns+` FROM messenger_links WHERE user_id = $1`, userID)
}

// FindMessengerLinkByPlatformUser returns the link of a messenger account.
func (db *DB) FindMessengerLinkByPlatformUser(ctx context.Context, platformUserID int64) (*hoard.MessengerLink, error) {
	return getOne[hoard.MessengerLink](ctx, db.q, "find messenger link",
		`SELECT `+linkColumns+` FROM messenger_links WHERE platform_user_id = $1`, platformUserID)
}

// errLinkCode is what the bot answers for an unknown or expired code.
var errLinkCode = hoard.Errorf(hoard.EINVALID, "This link code is not valid or has expired.")

// ConsumeLinkCode links the messenger account that sent a code to the code's
// user, in one transaction: the code is deleted, an earlier link of either
// side is replaced. An unknown or expired code is EINVALID.
func (db *DB) ConsumeLinkCode(ctx context.Context, codeHash string, platformUserID, accessHash int64, username string) (*hoard.MessengerLink, error) {
	var link *hoard.MessengerLink
	err := db.InTx(ctx, func(tx *DB) error {
		var userID int64
		var live bool
		err := tx.q.QueryRow(ctx, `DELETE FROM messenger_link_codes WHERE code_hash = $1 RETURNING user_id, expires_at > now()`,
			codeHash).Scan(&userID, &live)
		if err != nil {
			if isNoRows(err) {
				return errLinkCode
			}
			return wrap("consume link code", err)
		}
		if !live {
			return errLinkCode // the rollback keeps the expired code for clean-up
		}
		if _, err := tx.q.Exec(ctx, `DELETE FROM messenger_links WHERE platform_user_id = $1 OR user_id = $2`, platformUserID, userID); err != nil {
			return wrap("consume link code", err)
		}
		link, err = getOne[hoard.MessengerLink](ctx, tx.q, "consume link code",
			`INSERT INTO messenger_links (user_id, platform_user_id, access_hash, username) VALUES ($1, $2, $3, $4) RETURNING `+linkColumns,
			userID, platformUserID, accessHash, username)
		return err
	})
	return link, err
}

// DeleteMessengerLink removes a user's link (unlinkMessenger) and any
// pending code; not being linked is fine.
func (db *DB) DeleteMessengerLink(ctx context.Context, userID int64) error {
	if _, err := db.q.Exec(ctx, `DELETE FROM messenger_link_codes WHERE user_id = $1`, userID); err != nil {
		return wrap("unlink messenger", err)
	}
	_, err := db.q.Exec(ctx, `DELETE FROM messenger_links WHERE user_id = $1`, userID)
	return wrap("unlink messenger", err)
}
