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
	user := storetest.User(t, db, storetest.UserOpts{})
	storetest.Session(t, db, storetest.SessionOpts{ID: "expired", UserID: user.ID, ExpiresAt: time.Now().Add(-time.Minute)})
	storetest.Session(t, db, storetest.SessionOpts{ID: "live", UserID: user.ID, ExpiresAt: time.Now().Add(time.Hour)})
	day := 24 * time.Hour
	storetest.Notification(t, db, storetest.NotificationOpts{Type: hoard.NotifyMissingPart, Title: "old", DismissedAt: time.Now().Add(-40 * day)})
	storetest.Notification(t, db, storetest.NotificationOpts{Type: hoard.NotifyMissingPart, Title: "recent", DismissedAt: time.Now().Add(-day)})
	storetest.Notification(t, db, storetest.NotificationOpts{Type: hoard.NotifyMissingPart, Title: "live"})
	w := newCleanupWorker(newParts(Deps{DB: db, Logger: discardLogger(), KeepDismissedNotifications: 30 * 24 * time.Hour}))
	tw := rivertest.NewWorker(t, riverpgxv5.New(nil), &river.Config{}, river.Worker[hoard.CleanupArgs](w))
	res, err := tw.Work(ctx, t, tx, hoard.CleanupArgs{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Job.State != rivertype.JobStateCompleted {
		t.Fatalf("job state = %s", res.Job.State)
	}
	sessions, notifications := storetest.Count(t, db, "sessions"), storetest.Count(t, db, "system_notifications")
	if sessions != 1 || notifications != 2 {
		t.Fatalf("left %d sessions and %d notifications; want 1 and 2", sessions, notifications)
	}
}

func TestRegisterNeedsDatabase(t *testing.T) {
	if err := Register(river.NewWorkers(), Deps{}); err == nil {
		t.Fatal("Register accepted deps without a database")
	}
}
