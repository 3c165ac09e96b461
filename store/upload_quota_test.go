package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store/storetest"
)

// TestUploadReservationsRaceNotPastTheLimit: ten requests of one user
// reserve 30 bytes each at once against a limit of 100: exactly three get
// them, and the user's count is the sum of the uploads'.
func TestUploadReservationsRaceNotPastTheLimit(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	ctx := context.Background()
	u := linkUser(t, db, "racer@example.com")
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := 0
	for range 10 {
		up, err := db.CreateManualUpload(ctx, u.ID, "")
		must(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, _, err := db.ReserveUploadBytes(ctx, up.ID, 30, 100)
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				granted++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	held, err := db.UploadBytesHeld(ctx, u.ID)
	must(t, err)
	var sum int64
	must(t, db.Pool().QueryRow(ctx, `SELECT sum(held_bytes) FROM manual_uploads WHERE user_id = $1`, u.ID).Scan(&sum))
	type result struct{ Granted, Held, Sum int64 }
	if got, want := (result{int64(granted), held, sum}), (result{3, 90, 90}); got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

// TestUploadBytesFollowTheFiles: what an upload holds moves with its
// reservation, its settlement, its files' removal and its deletion, and the
// user's count with it; an upload being processed cannot be deleted.
func TestUploadBytesFollowTheFiles(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	u := linkUser(t, db, "holder@example.com")
	up, err := db.CreateManualUpload(ctx, u.ID, "")
	must(t, err)
	type state struct {
		OK         bool
		Left       int64
		UserHeld   int64
		UploadHeld int64
	}
	read := func(ok bool, left int64) state {
		t.Helper()
		held, err := db.UploadBytesHeld(ctx, u.ID)
		must(t, err)
		got, err := db.FindManualUpload(ctx, up.ID)
		must(t, err)
		return state{ok, left, held, got.HeldBytes}
	}
	var a *hoard.ManualUploadFile
	for _, step := range []struct {
		name string
		do   func() (bool, int64)
		want state
	}{
		{"reserve", func() (bool, int64) {
			ok, left, err := db.ReserveUploadBytes(ctx, up.ID, 70, 100)
			must(t, err)
			return ok, left
		},
			state{true, 0, 70, 70}},
		{"refused", func() (bool, int64) {
			ok, left, err := db.ReserveUploadBytes(ctx, up.ID, 31, 100)
			must(t, err)
			return ok, left
		},
			state{false, 30, 70, 70}},
		{"settled to the files", func() (bool, int64) {
			a, err = db.AddManualUploadFile(ctx, up.ID, "a.zip", "1/1", 40)
			must(t, err)
			_, err = db.AddManualUploadFile(ctx, up.ID, "b.zip", "1/2", 20)
			must(t, err)
			must(t, db.SettleUploadBytes(ctx, up.ID, 60))
			return true, 0
		}, state{true, 0, 60, 60}},
		{"a file removed", func() (bool, int64) { ok, err := db.MarkUploadFileRemoved(ctx, a.ID); must(t, err); return ok, 0 },
			state{true, 0, 20, 20}},
		{"removed twice", func() (bool, int64) { ok, err := db.MarkUploadFileRemoved(ctx, a.ID); must(t, err); return ok, 0 },
			state{false, 0, 20, 20}},
		{"being processed", func() (bool, int64) {
			must(t, db.SetManualUploadStatus(ctx, up.ID, hoard.UploadProcessing, ""))
			err := db.DeleteManualUpload(ctx, up.ID)
			return hoard.ErrorCode(err) == hoard.ECONFLICT, 0
		}, state{true, 0, 20, 20}},
	} {
		t.Run(step.name, func(t *testing.T) {
			ok, left := step.do()
			if got := read(ok, left); got != step.want {
				t.Fatalf("got %+v, want %+v", got, step.want)
			}
		})
	}
	must(t, db.SetManualUploadStatus(ctx, up.ID, hoard.UploadCompleted, ""))
	must(t, db.DeleteManualUpload(ctx, up.ID))
	held, err := db.UploadBytesHeld(ctx, u.ID)
	must(t, err)
	if _, ferr := db.FindManualUpload(ctx, up.ID); hoard.ErrorCode(ferr) != hoard.ENOTFOUND || held != 0 {
		t.Fatalf("after delete: find %v, held %d", ferr, held)
	}
}

// TestListExpiredUploadFiles: only published files older than the cut-off
// whose bytes are still kept.
func TestListExpiredUploadFiles(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	u := linkUser(t, db, "keeper@example.com")
	up, err := db.CreateManualUpload(ctx, u.ID, "")
	must(t, err)
	hash := "0000000000000000000000000000000000000000000000000000000000000abc"
	mk := func(name string, status hoard.UploadStatus, age time.Duration, removed bool) int64 {
		f, err := db.AddManualUploadFile(ctx, up.ID, name, "x/"+name, 1)
		must(t, err)
		must(t, db.SetManualUploadFileStatus(ctx, f.ID, status, "", hash, 0))
		_, err = db.Tx().Exec(ctx, `UPDATE manual_upload_files SET updated_at = now() - $2::interval,
			removed_at = CASE WHEN $3 THEN now() END WHERE id = $1`, f.ID, age, removed)
		must(t, err)
		return f.ID
	}
	old := mk("old", hoard.UploadCompleted, 8*24*time.Hour, false)
	mk("young", hoard.UploadCompleted, time.Hour, false)
	mk("failed", hoard.UploadFailed, 8*24*time.Hour, false)
	mk("gone", hoard.UploadCompleted, 8*24*time.Hour, true)
	files, err := db.ListExpiredUploadFiles(ctx, time.Now().Add(-7*24*time.Hour), 0)
	must(t, err)
	var ids []int64
	for _, f := range files {
		ids = append(ids, f.ID)
	}
	if len(ids) != 1 || ids[0] != old {
		t.Fatalf("expired = %v, want [%d]", ids, old)
	}
}
