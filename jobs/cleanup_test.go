package jobs

import (
	"context"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store/storetest"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"
)

func TestMain(m *testing.M) { storetest.Main(m) }

func TestCleanupWorkerRemovesOnlyExpiredRows(t *testing.T) {
	db := storetest.NewTx(t)
	ctx := context.Background()
	tx := db.Tx()
	var userID int64
	if err := tx.QueryRow(ctx, `INSERT INTO users (email, password_hash) VALUES ('a@example.com', 'x') RETURNING id`).Scan(&userID); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO sessions (id, user_id, expires_at) VALUES
		('expired', $1, now() - interval '1 minute'), ('live', $1, now() + interval '1 hour')`, userID); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO system_notifications (type, title, dedup_key, dismissed, dismissed_at) VALUES
		('MISSING_PART', 'old', 'k1', true, now() - interval '40 days'),
		('MISSING_PART', 'recent', 'k2', true, now() - interval '1 day'),
		('MISSING_PART', 'live', 'k3', false, NULL)`); err != nil {
		t.Fatal(err)
	}
	w := newCleanupWorker(newParts(Deps{DB: db, Logger: discardLogger(), KeepDismissedNotifications: 30 * 24 * time.Hour}))
	tw := rivertest.NewWorker(t, riverpgxv5.New(nil), &river.Config{}, river.Worker[hoard.CleanupArgs](w))
	res, err := tw.Work(ctx, t, tx, hoard.CleanupArgs{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Job.State != rivertype.JobStateCompleted {
		t.Fatalf("job state = %s", res.Job.State)
	}
	var sessions, notifications int
	_ = tx.QueryRow(ctx, `SELECT count(*) FROM sessions`).Scan(&sessions)
	_ = tx.QueryRow(ctx, `SELECT count(*) FROM system_notifications`).Scan(&notifications)
	if sessions != 1 || notifications != 2 {
		t.Fatalf("left %d sessions and %d notifications; want 1 and 2", sessions, notifications)
	}
}

func TestRegisterNeedsDatabase(t *testing.T) {
	if err := Register(river.NewWorkers(), Deps{}); err == nil {
		t.Fatal("Register accepted deps without a database")
	}
}
