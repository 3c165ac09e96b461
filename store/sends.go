package store

import (
	"context"

	"github.com/hoard/hoard"
)

const sendColumns = `r.id, r.user_id, r.package_id, r.platform_user_id, coalesce(r.requested_by, 0) AS requested_by, r.status,
	r.error_message, r.created_at, r.updated_at, r.sent_at`

// CreateBotSendRequests queues deliveries of packages to a user's linked
// account: one PENDING request per package that is published (has
// destination messages) and not already pending or sending for that user.
// It returns the new requests; packages skipped for either reason are not
// an error.
func (db *DB) CreateBotSendRequests(ctx context.Context, userID, requestedBy, platformUserID int64, packageIDs []int64) ([]hoard.BotSendRequest, error) {
	return getAll[hoard.BotSendRequest](ctx, db.q, "queue bot sends", `
		WITH r AS (
			INSERT INTO bot_send_requests (user_id, package_id, platform_user_id, requested_by)
			SELECT $1, p.id, $3, $2 FROM packages p
			WHERE p.id = ANY($4) AND cardinality(p.dest_message_ids) > 0
			  AND NOT EXISTS (SELECT 1 FROM bot_send_requests q WHERE q.user_id = $1 AND q.package_id = p.id
			                  AND q.status IN ('PENDING', 'SENDING'))
			ORDER BY p.id
			RETURNING *)
		SELECT `+sendColumns+` FROM r ORDER BY r.id`, userID, nullInt(requestedBy), platformUserID, packageIDs)
}

// FindBotSendRequest returns a send request.
func (db *DB) FindBotSendRequest(ctx context.Context, id int64) (*hoard.BotSendRequest, error) {
	return getOne[hoard.BotSendRequest](ctx, db.q, "find bot send", `SELECT `+sendColumns+` FROM bot_send_requests r WHERE r.id = $1`, id)
}

// ListBotSendRequests returns the newest requests first (getBotSendHistory)
// with the user's email and the package's file name; userID 0 lists all.
func (db *DB) ListBotSendRequests(ctx context.Context, userID int64, limit int) ([]hoard.BotSendRequest, error) {
	if limit <= 0 || limit > 500 {
		limit = 50
	}
	return getAll[hoard.BotSendRequest](ctx, db.q, "list bot sends", `
		SELECT `+sendColumns+`, u.email AS user_email, p.file_name AS package_name
		FROM bot_send_requests r JOIN users u ON u.id = r.user_id JOIN packages p ON p.id = r.package_id
		WHERE $1::bigint = 0 OR r.user_id = $1
		ORDER BY r.id DESC LIMIT $2`, userID, limit)
}

// SetBotSendStatus moves a request to a status with an error message ("" on
// success); SENT stamps sent_at.
func (db *DB) SetBotSendStatus(ctx context.Context, id int64, status hoard.SendStatus, errorMessage string) error {
	tag, err := db.q.Exec(ctx, `UPDATE bot_send_requests SET status = $2, error_message = $3, updated_at = now(),
		sent_at = CASE WHEN $2 = 'SENT' THEN now() ELSE sent_at END WHERE id = $1`, id, string(status), errorMessage)
	return notFoundIfNone("set bot send status", tag, err)
}
