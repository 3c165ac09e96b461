package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// TestListen runs Listen on its own database: a notification on a listened
// channel reaches fn, others do not, a lost connection is reported and
// re-established, and cancelling ctx ends Listen without an error report.
func TestListen(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	type note struct{ channel, payload string }
	notes := make(chan note, 100)
	errs := make(chan error, 10)
	done := make(chan struct{})
	var readies atomic.Int64
	go func() {
		defer close(done)
		db.ListenReady(ctx, []string{"alpha", "Beta-Channel"}, func() { readies.Add(1) },
			func(channel, payload string) { notes <- note{channel, payload} }, func(err error) { errs <- err })
	}()

	// deliver notifies until the notification arrives: Listen may not have
	// run LISTEN yet (or again). Each call uses a new payload, so stragglers
	// of an earlier call are told apart; "gamma" is never listened to.
	deliver := func(channel, payload string) {
		t.Helper()
		deadline := time.After(15 * time.Second)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			must(t, db.Notify(ctx, "gamma", payload))
			must(t, db.Notify(ctx, channel, payload))
			for {
				select {
				case n := <-notes:
					if n.channel == "gamma" {
						t.Fatalf("notification on an unlistened channel: %+v", n)
					}
					if n == (note{channel, payload}) {
						return
					}
					continue
				case err := <-errs:
					t.Fatalf("Listen reported %v", err)
				case <-deadline:
					t.Fatalf("%s %q was not delivered", channel, payload)
				case <-tick.C:
				}
				break
			}
		}
	}
	deliver("alpha", "1")
	deliver("Beta-Channel", `{"package_id":2}`)
	if n := readies.Load(); n != 1 {
		t.Fatalf("ready called %d times before any reconnection, want 1", n)
	}

	// The server drops the listening connection.
	var killed int
	must(t, db.Pool().QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN%'`).Scan(&killed))
	if killed != 1 {
		t.Fatalf("terminated %d listening connections, want 1", killed)
	}
	select {
	case err := <-errs:
		if err == nil {
			t.Fatal("onError(nil)")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a lost connection was not reported")
	}
	deliver("alpha", "3")
	if n := readies.Load(); n != 2 {
		t.Fatalf("ready called %d times after one reconnection, want 2", n)
	}

	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Listen did not return after ctx ended")
	}
	select {
	case err := <-errs:
		t.Fatalf("cancelling reported %v", err)
	default:
	}
}

func TestRequeueJobsOf(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	const me, other = "worker-me", "worker-other"
	oldError := `{"at":"2020-01-01T00:00:00Z","attempt":1,"error":"flood wait","trace":""}`
	tests := []struct {
		name        string
		job         riverJob
		wantRequeue bool
		wantAttempt int
	}{
		{"running, last attempted here", riverJob{State: "running", Attempt: 2, AttemptedBy: []string{other, me},
			Errors: []string{oldError}}, true, 1},
		{"first attempt here", riverJob{State: "running", Attempt: 1, AttemptedBy: []string{me}}, true, 0},
		{"attempt 0 stays 0", riverJob{State: "running", Attempt: 0, AttemptedBy: []string{me}}, true, 0},
		{"running, last attempted by another", riverJob{State: "running", Attempt: 2, AttemptedBy: []string{me, other}}, false, 2},
		{"running elsewhere", riverJob{State: "running", Attempt: 1, AttemptedBy: []string{other}}, false, 1},
		{"running, never attempted", riverJob{State: "running"}, false, 0},
		{"available", riverJob{State: "available", Attempt: 1, AttemptedBy: []string{me}}, false, 1},
		{"retryable", riverJob{State: "retryable", Attempt: 1, AttemptedBy: []string{me}, Errors: []string{oldError}}, false, 1},
		{"completed", riverJob{State: "completed", Attempt: 1, AttemptedBy: []string{me}}, false, 1},
	}
	ids := make([]int64, len(tests))
	for i, tt := range tests {
		tt.job.Kind = fmt.Sprintf("requeue_test_%d", i)
		ids[i] = mustRiverJob(t, db, tt.job)
	}

	n, err := db.RequeueJobsOf(ctx, me)
	must(t, err)
	if n != 3 {
		t.Fatalf("RequeueJobsOf = %d, want 3", n)
	}
	for i, tt := range tests {
		var (
			state         string
			attempt       int
			errorCount    int
			lastError     *string
			lastAttempt   *int
			scheduledSoon bool
		)
		must(t, db.Tx().QueryRow(ctx, `SELECT state::text, attempt, coalesce(array_length(errors, 1), 0),
				errors[array_length(errors, 1)]->>'error', (errors[array_length(errors, 1)]->>'attempt')::int,
				scheduled_at > now() - interval '1 minute'
			FROM river_job WHERE id = $1`, ids[i]).
			Scan(&state, &attempt, &errorCount, &lastError, &lastAttempt, &scheduledSoon))
		if attempt != tt.wantAttempt {
			t.Errorf("%s: attempt = %d, want %d", tt.name, attempt, tt.wantAttempt)
		}
		if !tt.wantRequeue {
			if state != tt.job.State || errorCount != len(tt.job.Errors) || scheduledSoon {
				t.Errorf("%s: touched: state %s, %d errors, rescheduled %v", tt.name, state, errorCount, scheduledSoon)
			}
			continue
		}
		type requeued struct {
			State         string
			ScheduledSoon bool
			Errors        int
			LastHasError  bool
			LastAttempt   *int
		}
		want := requeued{"available", true, len(tt.job.Errors) + 1, true, &tt.job.Attempt}
		got := requeued{state, scheduledSoon, errorCount, lastError != nil && *lastError != "", lastAttempt}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: want available now with an error for attempt %d (-want +got):\n%s", tt.name, tt.job.Attempt, diff)
		}
	}

	// Nothing is left running for me: a second call requeues nothing.
	n, err = db.RequeueJobsOf(ctx, me)
	must(t, err)
	if n != 0 {
		t.Fatalf("second RequeueJobsOf = %d, want 0", n)
	}
	n, err = db.RequeueJobsOf(ctx, "worker-unknown")
	must(t, err)
	if n != 0 {
		t.Fatalf("RequeueJobsOf(unknown) = %d, want 0", n)
	}
}

// TestCatalogChangedNotifies checks migration 011: every statement that
// changes packages, groups or file listings announces catalog_changed,
// once per transaction, on commit only.
func TestCatalogChangedNotifies(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	ctx := context.Background()
	count := listenOn(t, db, "catalog_changed")
	p := &hoard.Package{FileName: "Dragon.zip", FileSize: 10, ArchiveType: hoard.ArchiveZIP, ContentHash: strings.Repeat("c", 64)}
	must(t, db.CreatePackage(ctx, p))
	if n := count(); n < 1 {
		t.Fatal("creating a package announced nothing")
	}
	must(t, db.InTx(ctx, func(tx *store.DB) error {
		for _, tags := range [][]string{{"A"}, {"B"}, {"C"}} {
			if _, err := tx.Tx().Exec(ctx, `UPDATE packages SET tags = $1 WHERE id = $2`, tags, p.ID); err != nil {
				return err
			}
		}
		return nil
	}))
	if n := count(); n != 1 {
		t.Fatalf("three updates in one transaction announced %d times, want once", n)
	}
	_ = db.InTx(ctx, func(tx *store.DB) error {
		_, _ = tx.Tx().Exec(ctx, `UPDATE packages SET tags = '{X}' WHERE id = $1`, p.ID)
		return errors.New("roll back")
	})
	if n := count(); n != 0 {
		t.Fatalf("a rolled-back update announced %d times", n)
	}
	must(t, db.ReplacePackageFiles(ctx, p.ID, []hoard.PackageFile{{Path: "a/b.stl", Size: 1}}))
	if n := count(); n < 1 {
		t.Fatal("replacing a file listing announced nothing")
	}
}

// TestAuthChangedNotifies checks migration 040: every change to what a
// signed-in request may do announces auth_changed (the web's session cache
// drops what it holds); a session's expiry moving later does not.
func TestAuthChangedNotifies(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	ctx := context.Background()
	count := listenOn(t, db, "auth_changed")
	heard := func() bool { return count() > 0 } // one statement may announce on several tables
	u, err := db.CreateUser(ctx, "auth-changed@example.com", "hash", hoard.RoleAdmin)
	must(t, err)
	session := func(id string) {
		must(t, db.CreateSession(ctx, &hoard.Session{ID: id, UserID: u.ID, ExpiresAt: time.Now().Add(time.Hour)}))
	}
	session("s1")
	session("s2")
	session("s3")
	heard() // whatever creating them announced
	for _, tc := range []struct {
		name   string
		change func() error
		want   bool
	}{
		{"a new session", func() error {
			return db.CreateSession(ctx, &hoard.Session{ID: "s4", UserID: u.ID, ExpiresAt: time.Now().Add(time.Hour)})
		}, false},
		{"a session's expiry moved later", func() error { return db.TouchSession(ctx, "s1", time.Now().Add(2*time.Hour)) }, false},
		{"a session cut short", func() error {
			_, err := db.Pool().Exec(ctx, `UPDATE sessions SET expires_at = now() WHERE id = 's1'`)
			return err
		}, true},
		{"a sign-out", func() error { return db.DeleteSession(ctx, "s2") }, true},
		{"signed out elsewhere", func() error { return db.DeleteUserSessions(ctx, u.ID, "s3") }, true},
		{"a role changed", func() error { return db.SetUserRole(ctx, u.ID, hoard.RoleUser) }, true},
		{"a password changed", func() error { return db.SetUserPassword(ctx, u.ID, "other") }, true},
		{"a messenger account linked", func() error {
			if err := db.CreateLinkCode(ctx, u.ID, "h", time.Now().Add(time.Hour)); err != nil {
				return err
			}
			_, err := db.ConsumeLinkCode(ctx, "h", 77, 1, "u")
			return err
		}, true},
		{"a messenger account unlinked", func() error { return db.DeleteMessengerLink(ctx, u.ID) }, true},
		{"an account deleted", func() error { return db.DeleteUser(ctx, u.ID) }, true},
	} {
		must(t, tc.change())
		if got := heard(); got != tc.want {
			t.Errorf("%s: announced %v, want %v", tc.name, got, tc.want)
		}
	}
}

// listenOn listens on channel on a connection of its own until the test
// ends, and returns a function that counts the notifications that arrive
// until none has for 300 ms.
func listenOn(t *testing.T, db *store.DB, channel string) func() int {
	ctx := context.Background()
	conn, err := db.Pool().Acquire(ctx)
	must(t, err)
	t.Cleanup(conn.Release)
	_, err = conn.Exec(ctx, "LISTEN "+channel)
	must(t, err)
	t.Cleanup(func() { _, _ = conn.Exec(context.Background(), "UNLISTEN *") })
	return func() int {
		n := 0
		for {
			wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			_, err := conn.Conn().WaitForNotification(wctx)
			cancel()
			if err != nil {
				return n
			}
			n++
		}
	}
}
