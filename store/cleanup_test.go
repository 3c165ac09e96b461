package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

func TestDeleteExpired(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	keys := func(sql string) []string {
		t.Helper()
		rows, err := db.Tx().Query(ctx, sql)
		must(t, err)
		defer rows.Close()
		var out []string
		for rows.Next() {
			var k string
			must(t, rows.Scan(&k))
			out = append(out, k)
		}
		must(t, rows.Err())
		slices.Sort(out)
		return out
	}

	var userID int64
	must(t, db.Tx().QueryRow(ctx, `INSERT INTO users (email, password_hash) VALUES ($1, 'x') RETURNING id`,
		fmt.Sprintf("cleanup%d@example.com", seq.Add(1))).Scan(&userID))

	// Web sessions: two expired, one live, one expiring exactly now (kept:
	// only what is past its expiry goes).
	execTx(t, db, `INSERT INTO sessions (id, user_id, expires_at) VALUES
		('s-expired-1', $1, now() - interval '1 second'), ('s-expired-2', $1, now() - interval '30 days'),
		('s-live', $1, now() + interval '1 hour'), ('s-now', $1, now())`, userID)
	// Link codes: one expired, one live.
	execTx(t, db, `INSERT INTO messenger_link_codes (code_hash, user_id, expires_at) VALUES
		('c-expired', $1, now() - interval '1 minute'), ('c-live', $1, now() + interval '10 minutes')`, userID)
	// Throttles: idle for more than a day and not locked (or lock over) go;
	// recent windows and running locks stay.
	execTx(t, db, `INSERT INTO auth_throttle (key, failures, window_started, locked_until) VALUES
		('t-old-unlocked', 3, now() - interval '2 days', NULL),
		('t-old-lock-over', 9, now() - interval '2 days', now() - interval '1 hour'),
		('t-old-still-locked', 9, now() - interval '2 days', now() + interval '1 hour'),
		('t-recent', 1, now() - interval '1 hour', NULL),
		('t-recent-lock-over', 9, now() - interval '2 hours', now() - interval '1 hour')`)
	// Notifications: dismissed long ago goes; dismissed recently, live, and
	// read-but-live stay.
	old := mustNotification(t, db)
	recent := mustNotification(t, db)
	live := mustNotification(t, db)
	read := mustNotification(t, db)
	must(t, db.DismissNotification(ctx, old.ID))
	must(t, db.DismissNotification(ctx, recent.ID))
	must(t, db.MarkNotificationRead(ctx, read.ID))
	execTx(t, db, `UPDATE system_notifications SET dismissed_at = now() - interval '8 days' WHERE id = $1`, old.ID)
	execTx(t, db, `UPDATE system_notifications SET dismissed_at = now() - interval '6 days' WHERE id = $1`, recent.ID)

	// Sign-ins through a provider: one expired, one live.
	execTx(t, db, `INSERT INTO sign_in_flows (id, provider, verifier, nonce, expires_at) VALUES
		('f-expired', 'oidc', repeat('v', 43), repeat('n', 16), now() - interval '1 second'),
		('f-live', 'oidc', repeat('v', 43), repeat('n', 16), now() + interval '10 minutes')`)

	counts, err := db.DeleteExpired(ctx, 7*24*time.Hour)
	must(t, err)
	if want := (store.CleanupCounts{Sessions: 2, LinkCodes: 1, Throttles: 2, Notifications: 1, SignInFlows: 1}); counts != want {
		t.Fatalf("DeleteExpired = %+v, want %+v", counts, want)
	}
	if got := keys(`SELECT id FROM sessions`); !slices.Equal(got, []string{"s-live", "s-now"}) {
		t.Errorf("sessions left = %v", got)
	}
	if got := keys(`SELECT code_hash FROM messenger_link_codes`); !slices.Equal(got, []string{"c-live"}) {
		t.Errorf("link codes left = %v", got)
	}
	if got := keys(`SELECT id FROM sign_in_flows`); !slices.Equal(got, []string{"f-live"}) {
		t.Errorf("sign-in flows left = %v", got)
	}
	if got := keys(`SELECT key FROM auth_throttle`); !slices.Equal(got, []string{"t-old-still-locked", "t-recent", "t-recent-lock-over"}) {
		t.Errorf("throttles left = %v", got)
	}
	want := []string{fmt.Sprint(live.ID), fmt.Sprint(read.ID), fmt.Sprint(recent.ID)}
	slices.Sort(want)
	if got := keys(`SELECT id::text FROM system_notifications`); !slices.Equal(got, want) {
		t.Errorf("notifications left = %v, want %v", got, want)
	}

	// Nothing left to remove; a shorter keep removes the recent dismissal.
	counts, err = db.DeleteExpired(ctx, 7*24*time.Hour)
	must(t, err)
	if counts != (store.CleanupCounts{}) {
		t.Fatalf("second DeleteExpired = %+v", counts)
	}
	counts, err = db.DeleteExpired(ctx, 24*time.Hour)
	must(t, err)
	if counts != (store.CleanupCounts{Notifications: 1}) {
		t.Fatalf("DeleteExpired(1 day) = %+v", counts)
	}
}
