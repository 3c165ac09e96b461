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
	// LoginSecrets counts accounts whose login secrets were forgotten: a
	// login left half-done for a day (codes expire long before).
	LoginSecrets int64
	// BotState counts the chat bot's rows nobody needs any more: answered
	// updates older than two days (the platform re-delivers an update for
	// far less), expired search pages and idle rate-limit keys.
	BotState int64
	// SignInFlows counts sign-ins through an identity provider that never
	// came back before they expired.
	SignInFlows int64
}

// DeleteExpired removes expired web sessions and messenger link codes,
// sign-in throttles idle for a day, and notifications dismissed longer than
// keepDismissed ago, login secrets (code request, code, password) of
// logins untouched for a day (such an account becomes EXPIRED), the bot's
// stale rows (CleanupCounts.BotState), and expired sign-ins through
// identity providers.
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
		{&c.LoginSecrets, `UPDATE messenger_accounts SET login_code_hash_enc = NULL, login_code_enc = NULL,
			login_password_enc = NULL, updated_at = now(),
			auth_state = CASE WHEN auth_state IN ('AWAITING_CODE', 'AWAITING_PASSWORD') THEN 'EXPIRED' ELSE auth_state END,
			auth_error = CASE WHEN auth_state IN ('AWAITING_CODE', 'AWAITING_PASSWORD')
				THEN 'The login was not finished within a day; log in again.' ELSE auth_error END
			WHERE (login_code_hash_enc IS NOT NULL OR login_code_enc IS NOT NULL OR login_password_enc IS NOT NULL)
			AND updated_at < now() - interval '1 day'`, nil},
		{&c.BotState, `DELETE FROM bot_handled_updates WHERE handled_at < now() - interval '2 days'`, nil},
		{&c.BotState, `DELETE FROM bot_search_pages WHERE expires_at < now()`, nil},
		{&c.BotState, `DELETE FROM rate_limits WHERE tat < now() - interval '1 hour'`, nil},
		{&c.SignInFlows, `DELETE FROM sign_in_flows WHERE expires_at < now()`, nil},
	}
	for _, s := range steps {
		tag, err := db.q.Exec(ctx, s.sql, s.arg...)
		if err != nil {
			return c, wrap("delete expired rows", err)
		}
		*s.n += tag.RowsAffected()
	}
	return c, nil
}
