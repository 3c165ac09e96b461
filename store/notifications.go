package store

import (
	"context"
	"encoding/json"

	"github.com/hoard/hoard"
)

const notificationColumns = `id, type, severity, title, message, context, dedup_key, coalesce(package_id, 0) AS package_id,
	coalesce(channel_id, 0) AS channel_id, is_read, read_at, dismissed, dismissed_at, created_at`

// CreateNotification stores a notification unless one with the same dedup
// key is still live (not dismissed); it reports whether a row was created.
// n.DedupKey defaults to "<type>:package:<id>" or "<type>:channel:<id>".
func (db *DB) CreateNotification(ctx context.Context, n *hoard.Notification) (bool, error) {
	if !n.Type.Valid() {
		return false, hoard.Errorf(hoard.EINVALID, "create notification: unknown type %q", n.Type)
	}
	if n.Severity == "" {
		n.Severity = hoard.SeverityInfo
	}
	if n.DedupKey == "" {
		n.DedupKey = defaultDedupKey(n)
	}
	ctxJSON := n.Context
	if len(ctxJSON) == 0 {
		ctxJSON = json.RawMessage(`{}`)
	}
	rows, err := db.q.Query(ctx, `
		INSERT INTO system_notifications (type, severity, title, message, context, dedup_key, package_id, channel_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (dedup_key) WHERE NOT dismissed DO NOTHING
		RETURNING `+notificationColumns,
		string(n.Type), string(n.Severity), n.Title, n.Message, []byte(ctxJSON), n.DedupKey, nullInt(n.PackageID), nullInt(n.ChannelID))
	if err != nil {
		return false, wrap("create notification", err)
	}
	got, err := collectOptional[hoard.Notification](rows)
	if err != nil {
		return false, wrap("create notification", err)
	}
	if got == nil {
		return false, nil
	}
	*n = *got
	return true, nil
}

func defaultDedupKey(n *hoard.Notification) string {
	switch {
	case n.PackageID != 0:
		return string(n.Type) + ":package:" + itoa(n.PackageID)
	case n.ChannelID != 0:
		return string(n.Type) + ":channel:" + itoa(n.ChannelID)
	default:
		return string(n.Type) + ":" + n.Title
	}
}

// PackageHasProblem reports whether a live (not dismissed) warning or
// error notification is about package id: its page offers a repair first.
func (db *DB) PackageHasProblem(ctx context.Context, id int64) (bool, error) {
	var yes bool
	err := db.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM system_notifications
		WHERE package_id = $1 AND NOT dismissed AND severity IN ('WARNING', 'ERROR'))`, id).Scan(&yes)
	return yes, wrap("package problem", err)
}

// FindNotification returns a notification (dismissed ones too).
func (db *DB) FindNotification(ctx context.Context, id int64) (*hoard.Notification, error) {
	return getOne[hoard.Notification](ctx, db.q, "find notification",
		`SELECT `+notificationColumns+` FROM system_notifications WHERE id = $1`, id)
}

// ListNotifications returns live (not dismissed) notifications, newest first,
// with ids below beforeID (0 = from the start).
func (db *DB) ListNotifications(ctx context.Context, beforeID int64, limit int) ([]hoard.Notification, error) {
	if limit <= 0 || limit > 200 {
		limit = 30
	}
	return getAll[hoard.Notification](ctx, db.q, "list notifications",
		`SELECT `+notificationColumns+` FROM system_notifications WHERE NOT dismissed AND ($1::bigint = 0 OR id < $1)
		 ORDER BY id DESC LIMIT $2`, beforeID, limit)
}

// CountUnreadNotifications counts live unread notifications (the bell's
// badge).
func (db *DB) CountUnreadNotifications(ctx context.Context) (int64, error) {
	var n int64
	err := db.q.QueryRow(ctx, `SELECT count(*) FROM system_notifications WHERE NOT dismissed AND NOT is_read`).Scan(&n)
	return n, wrap("count unread notifications", err)
}

// MarkNotificationRead marks one notification read.
func (db *DB) MarkNotificationRead(ctx context.Context, id int64) error {
	tag, err := db.q.Exec(ctx, `UPDATE system_notifications SET is_read = true, read_at = coalesce(read_at, now()) WHERE id = $1`, id)
	return notFoundIfNone("mark notification read", tag, err)
}

// MarkAllNotificationsRead marks every live notification read.
func (db *DB) MarkAllNotificationsRead(ctx context.Context) (int64, error) {
	tag, err := db.q.Exec(ctx, `UPDATE system_notifications SET is_read = true, read_at = now() WHERE NOT dismissed AND NOT is_read`)
	if err != nil {
		return 0, wrap("mark all notifications read", err)
	}
	return tag.RowsAffected(), nil
}

// DismissNotification removes one notification from the bell. The row stays
// (dismissed) until clean-up; the same problem may notify again later.
func (db *DB) DismissNotification(ctx context.Context, id int64) error {
	tag, err := db.q.Exec(ctx, `UPDATE system_notifications SET dismissed = true, dismissed_at = now() WHERE id = $1 AND NOT dismissed`, id)
	return notFoundIfNone("dismiss notification", tag, err)
}

// DismissAllNotifications clears the bell.
func (db *DB) DismissAllNotifications(ctx context.Context) (int64, error) {
	tag, err := db.q.Exec(ctx, `UPDATE system_notifications SET dismissed = true, dismissed_at = now() WHERE NOT dismissed`)
	if err != nil {
		return 0, wrap("dismiss all notifications", err)
	}
	return tag.RowsAffected(), nil
}

// ResolvePackageNotifications marks a package's live notifications read, as
// a repair does.
func (db *DB) ResolvePackageNotifications(ctx context.Context, packageID int64) error {
	_, err := db.q.Exec(ctx, `UPDATE system_notifications SET is_read = true, read_at = coalesce(read_at, now())
		WHERE package_id = $1 AND NOT dismissed`, packageID)
	return wrap("resolve package notifications", err)
}

// CreateNotificationOnce is CreateNotification for problems that are
// reported once: it also stays silent while a dismissed notification with
// the same dedup key is kept (clean-up removes those after its retention,
// after which the problem may be reported again).
func (db *DB) CreateNotificationOnce(ctx context.Context, n *hoard.Notification) (bool, error) {
	if n.DedupKey == "" {
		n.DedupKey = defaultDedupKey(n)
	}
	var seen bool
	if err := db.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM system_notifications WHERE dedup_key = $1)`, n.DedupKey).Scan(&seen); err != nil {
		return false, wrap("create notification", err)
	}
	if seen {
		return false, nil
	}
	return db.CreateNotification(ctx, n)
}
