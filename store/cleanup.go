package store

import (
	"context"
	"time"
)

// CleanupCounts reports what DeleteExpired removed.
type CleanupCounts struct {
	Sessions      int64
	LinkCodes     int64
	Throttles     int64
	Notifications int64
}

// DeleteExpired removes expired web sessions and messenger link codes,
// sign-in throttles idle for a day, and notifications dismissed longer than
// keepDismissed ago.
func (db *DB) DeleteExpired(ctx context.Context, keepDismissed time.Duration) (CleanupCounts, error) {
	var c CleanupCounts
	steps := []struct {
		n   *int64
		sql string
		arg []any
	}{
		{&c.Sessions, `DELETE FROM sessions WHERE expires_at < now()`, nil},
		{&c.LinkCodes, `DELETE FROM messenger_link_codes WHERE expires_at < now()`, nil},
		{&c.Throttles, `DELETE FROM auth_throttle WHERE window_started < now() - interval '1 day'
			AND (locked_until IS NULL OR locked_until < now())`, nil},
		{&c.Notifications, `DELETE FROM system_notifications WHERE dismissed AND dismissed_at < now() - $1::interval`,
			[]any{keepDismissed}},
	}
	for _, s := range steps {
		tag, err := db.q.Exec(ctx, s.sql, s.arg...)
		if err != nil {
			return c, wrap("delete expired rows", err)
		}
		*s.n = tag.RowsAffected()
	}
	return c, nil
}
