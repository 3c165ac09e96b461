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

// TestCleanupWorkerPrunesThisHoursTokens: the hourly clean-up takes the
// tokens of its hour's slice that nothing holds out of the search's lists
// (store.PruneTokens): those of a deleted package's paths and name.
func TestCleanupWorkerPrunesThisHoursTokens(t *testing.T) {
	db := storetest.NewTx(t)
	ctx := context.Background()
	p := storetest.Package(t, db, storetest.PackageOpts{FileName: "Goblin Camp.zip"})
	if err := db.ReplacePackageFiles(ctx, p.ID, []hoard.PackageFile{{Path: "goblin/tent.stl"}}); err != nil {
		t.Fatal(err)
	}
	if err := db.DeletePackage(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	listed := func() (n int) {
		if err := db.Tx().QueryRow(ctx, `SELECT (SELECT count(*) FROM path_tokens WHERE token = 'goblin')
			+ (SELECT count(*) FROM name_tokens WHERE token = 'goblin')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := listed(); n != 2 {
		t.Fatalf("goblin listed %d times before the clean-up, want 2 (paths, names)", n)
	}
	var slice int
	if err := db.Tx().QueryRow(ctx, `SELECT abs(hashtext('goblin')::bigint) % $1::int`, tokenSlices).Scan(&slice); err != nil {
		t.Fatal(err)
	}
	sunday := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC) // the week's first hour
	w := newCleanupWorker(newParts(Deps{DB: db, Logger: discardLogger(), Now: func() time.Time { return sunday.Add(time.Duration(slice) * time.Hour) }}))
	tw := rivertest.NewWorker(t, riverpgxv5.New(nil), &river.Config{}, river.Worker[hoard.CleanupArgs](w))
	res, err := tw.Work(ctx, t, db.Tx(), hoard.CleanupArgs{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Job.State != rivertype.JobStateCompleted {
		t.Fatalf("job state = %s", res.Job.State)
	}
	if n := listed(); n != 0 {
		t.Errorf("goblin listed %d times after the clean-up of its slice, want 0", n)
	}
}

func TestRegisterNeedsDatabase(t *testing.T) {
	if err := Register(river.NewWorkers(), Deps{}); err == nil {
		t.Fatal("Register accepted deps without a database")
	}
}
