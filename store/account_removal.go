package store

import (
	"context"
	"strconv"

	"github.com/hoard/hoard"
)

// RemoveSignedOutAccount deletes an account that is not signed in (a login
// that failed, expired or was abandoned) with its channel maps, its
// transfers and its stored client session; packages, runs and skipped
// records keep their history. A signed-in account is ECONFLICT: it may read
// channels or post to the destination. ENOTFOUND for an unknown account.
func (db *DB) RemoveSignedOutAccount(ctx context.Context, id int64) error {
	const op = "remove account"
	return db.InTx(ctx, func(tx *DB) error {
		var state hoard.AuthState
		if err := tx.q.QueryRow(ctx, `SELECT auth_state FROM messenger_accounts WHERE id = $1 FOR UPDATE`, id).Scan(&state); err != nil {
			if isNoRows(err) {
				return hoard.Errorf(hoard.ENOTFOUND, "%s: account %d not found", op, id)
			}
			return wrap(op, err)
		}
		if state == hoard.AuthAuthenticated {
			return hoard.Errorf(hoard.ECONFLICT, "A signed-in account cannot be removed: it reads channels or posts to the destination.")
		}
		if _, err := tx.q.Exec(ctx, `DELETE FROM messenger_accounts WHERE id = $1`, id); err != nil {
			return wrap(op, err)
		}
		return tx.DeleteMessengerSession(ctx, "account:"+strconv.FormatInt(id, 10))
	})
}
