package store

import (
	"context"
	"strings"

	"github.com/hoard/hoard"
)

const joinColumns = `id, ref, coalesce(account_id, 0) AS account_id, coalesce(category, '') AS category, status,
	coalesce(channel_id, 0) AS channel_id, title, error_message, coalesce(river_job_id, 0) AS river_job_id,
	coalesce(requested_by, 0) AS requested_by, created_at, updated_at, finished_at`

// CreateChannelJoin records a PENDING request to join the channel ref (a
// normalised reference) with an account. While a request for the same ref
// is pending, that request is returned instead and created is false; a
// pending request whose job is gone or final (cancelled from the queue UI,
// say) is marked FAILED first, so it never blocks a new one. Call it in the
// transaction that inserts the request's job, then SetChannelJoinJob.
func (db *DB) CreateChannelJoin(ctx context.Context, j *hoard.ChannelJoin) (created bool, err error) {
	if _, err := db.q.Exec(ctx, `UPDATE channel_joins c SET status = 'FAILED', finished_at = now(), updated_at = now(),
		error_message = 'The join was interrupted before it finished.'
		WHERE c.ref = $1 AND c.status = 'PENDING' AND c.river_job_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM river_job r
			WHERE r.id = c.river_job_id AND r.state IN ('available', 'pending', 'running', 'retryable', 'scheduled'))`, j.Ref); err != nil {
		return false, wrap("create channel join: fail stale requests", err)
	}
	got, err := getAll[hoard.ChannelJoin](ctx, db.q, "create channel join", `
		INSERT INTO channel_joins (ref, account_id, category, requested_by) VALUES ($1, $2, $3, $4)
		ON CONFLICT (ref) WHERE status = 'PENDING' DO NOTHING
		RETURNING `+joinColumns, j.Ref, nullInt(j.AccountID), nullString(strings.TrimSpace(j.Category)), nullInt(j.RequestedBy))
	if err != nil {
		return false, err
	}
	if len(got) == 1 {
		*j = got[0]
		return true, nil
	}
	pending, err := getOne[hoard.ChannelJoin](ctx, db.q, "create channel join: find the pending one",
		`SELECT `+joinColumns+` FROM channel_joins WHERE ref = $1 AND status = 'PENDING'`, j.Ref)
	if err != nil {
		return false, err
	}
	*j = *pending
	return false, nil
}

// SetChannelJoinJob records the River job that works a join request.
func (db *DB) SetChannelJoinJob(ctx context.Context, id, jobID int64) error {
	tag, err := db.q.Exec(ctx, `UPDATE channel_joins SET river_job_id = $2, updated_at = now() WHERE id = $1`, id, jobID)
	return notFoundIfNone("set channel join job", tag, err)
}

// FindChannelJoin returns a join request.
func (db *DB) FindChannelJoin(ctx context.Context, id int64) (*hoard.ChannelJoin, error) {
	return getOne[hoard.ChannelJoin](ctx, db.q, "find channel join", `SELECT `+joinColumns+` FROM channel_joins WHERE id = $1`, id)
}

// ListChannelJoins returns the latest join requests, newest first (at most
// limit, default 20).
func (db *DB) ListChannelJoins(ctx context.Context, limit int) ([]hoard.ChannelJoin, error) {
	if limit <= 0 {
		limit = 20
	}
	return getAll[hoard.ChannelJoin](ctx, db.q, "list channel joins",
		`SELECT `+joinColumns+` FROM channel_joins ORDER BY created_at DESC, id DESC LIMIT $1`, limit)
}

// FinishChannelJoin records the outcome of a PENDING join request: its
// final status, the channel row (0 when none was joined), the channel's
// title as the platform tells it and an error message for NOT_FOUND and
// FAILED. It reports false when the request was already final, which makes
// the outcome exactly-once.
func (db *DB) FinishChannelJoin(ctx context.Context, id int64, status hoard.JoinStatus, channelID int64, title, errorMessage string) (bool, error) {
	if !status.Valid() || !status.Final() {
		return false, hoard.Errorf(hoard.EINVALID, "finish channel join: %q is not a final status", status)
	}
	tag, err := db.q.Exec(ctx, `UPDATE channel_joins SET status = $2, channel_id = $3, title = $4, error_message = $5,
		finished_at = now(), updated_at = now() WHERE id = $1 AND status = 'PENDING'`,
		id, string(status), nullInt(channelID), title, errorMessage)
	if err != nil {
		return false, wrap("finish channel join", err)
	}
	return tag.RowsAffected() == 1, nil
}

// SetChannelJoinError records the error of a failed attempt on a pending
// request that will be retried, for the admin page.
func (db *DB) SetChannelJoinError(ctx context.Context, id int64, message string) error {
	_, err := db.q.Exec(ctx, `UPDATE channel_joins SET error_message = $2, updated_at = now() WHERE id = $1 AND status = 'PENDING'`,
		id, message)
	return wrap("set channel join error", err)
}
