package jobs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger/messengertest"
	"github.com/hoard/hoard/store"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// copyUpload records a second upload of the file of up (same bytes), by
// the same user, holding its bytes of the user's quota as the web would.
func copyUpload(t *testing.T, db *store.DB, dir string, up *hoard.ManualUpload) *hoard.ManualUpload {
	t.Helper()
	ctx := context.Background()
	b, err := os.ReadFile(filepath.Join(dir, up.Files[0].StoredPath))
	if err != nil {
		t.Fatal(err)
	}
	cp, err := db.CreateManualUpload(ctx, up.UserID, "")
	if err != nil {
		t.Fatal(err)
	}
	rel := filepath.Join(fmt.Sprint(cp.ID), "1")
	if err := os.MkdirAll(filepath.Join(dir, fmt.Sprint(cp.ID)), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rel), b, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddManualUploadFile(ctx, cp.ID, up.Files[0].FileName, rel, int64(len(b))); err != nil {
		t.Fatal(err)
	}
	if err := db.SetManualUploadStatus(ctx, cp.ID, hoard.UploadPending, ""); err != nil {
		t.Fatal(err)
	}
	holdFiles(t, db, cp.ID)
	return mustUpload(t, db, cp.ID)
}

// holdFiles makes an upload hold its files' bytes of its user's quota.
func holdFiles(t *testing.T, db *store.DB, id int64) {
	t.Helper()
	var size int64
	for _, f := range mustUpload(t, db, id).Files {
		size += f.FileSize
	}
	if ok, _, err := db.ReserveUploadBytes(context.Background(), id, size, 1<<40); err != nil || !ok {
		t.Fatalf("reserve = %v, %v", ok, err)
	}
}

// TestUploadFilesRetention: a published file stays on the volume for the
// retention and is removed by the first clean-up after it; a file that
// duplicated the catalog is removed at once; a failed file stays whatever
// its age. Each removal gives the bytes back to the owner's quota.
func TestUploadFilesRetention(t *testing.T) {
	w := newPublishWorld(t)
	ctx := context.Background()
	dir := t.TempDir()
	clock := time.Now()
	deps := Deps{DB: w.db, Logger: discardLogger(), UploadDir: dir, Accounts: oneAccount{w.acc}, MaxSkipAttempts: 1,
		RetryBase: time.Second, SplitThreshold: 1 << 20, UploadRetention: 7 * 24 * time.Hour, Now: func() time.Time { return clock }}
	published := uploadedFile(t, w.db, dir, "Tower.zip")
	holdFiles(t, w.db, published.ID)
	published = mustUpload(t, w.db, published.ID)
	failed := copyUpload(t, w.db, dir, mustUpload(t, w.db, published.ID))
	if err := w.db.SetManualUploadFileStatus(ctx, failed.Files[0].ID, hoard.UploadFailed, "MEDIA_INVALID", "", 0); err != nil {
		t.Fatal(err)
	}
	if err := w.db.SetManualUploadStatus(ctx, failed.ID, hoard.UploadFailed, "MEDIA_INVALID"); err != nil {
		t.Fatal(err)
	}
	size := published.Files[0].FileSize
	if st := work(t, w, river.Worker[hoard.ManualUploadArgs](newManualUploadWorker(newParts(deps))), hoard.ManualUploadArgs{UploadID: published.ID}); st != rivertype.JobStateCompleted {
		t.Fatalf("manual upload job: %s", st)
	}
	tr, err := w.db.FindTransferByUploadFile(ctx, published.Files[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	work(t, w, river.Worker[hoard.UploadPartArgs](newUploadPartWorker(newParts(deps))), hoard.UploadPartArgs{TransferID: tr.ID})
	work(t, w, river.Worker[hoard.VerifyTransferArgs](newVerifyTransferWorker(newParts(deps))), hoard.VerifyTransferArgs{TransferID: tr.ID})
	duplicate := copyUpload(t, w.db, dir, mustUpload(t, w.db, published.ID))
	if st := work(t, w, river.Worker[hoard.ManualUploadArgs](newManualUploadWorker(newParts(deps))), hoard.ManualUploadArgs{UploadID: duplicate.ID}); st != rivertype.JobStateCompleted {
		t.Fatalf("duplicate's manual upload job: %s", st)
	}

	type file struct {
		Status  hoard.UploadStatus
		OnDisk  bool
		Removed bool
	}
	type state struct {
		Published, Duplicate, Failed file
		Held                         int64
	}
	read := func() state {
		t.Helper()
		var s state
		for i, id := range []int64{published.ID, duplicate.ID, failed.ID} {
			f := mustUpload(t, w.db, id).Files[0]
			_, err := os.Stat(filepath.Join(dir, f.StoredPath))
			*[]*file{&s.Published, &s.Duplicate, &s.Failed}[i] = file{f.Status, err == nil, f.RemovedAt != nil}
		}
		var err error
		if s.Held, err = w.db.UploadBytesHeld(ctx, published.UserID); err != nil {
			t.Fatal(err)
		}
		return s
	}
	cleanup := func() {
		t.Helper()
		if st := work(t, w, river.Worker[hoard.CleanupArgs](newCleanupWorker(newParts(deps))), hoard.CleanupArgs{}); st != rivertype.JobStateCompleted {
			t.Fatalf("cleanup job: %s", st)
		}
	}
	for _, step := range []struct {
		name  string
		after time.Duration
		want  state
	}{
		{"right after", 0, state{file{hoard.UploadCompleted, true, false}, file{hoard.UploadCompleted, false, true},
			file{hoard.UploadFailed, true, false}, 2 * size}},
		{"within the retention", 6 * 24 * time.Hour, state{file{hoard.UploadCompleted, true, false}, file{hoard.UploadCompleted, false, true},
			file{hoard.UploadFailed, true, false}, 2 * size}},
		{"retention passed", 8 * 24 * time.Hour, state{file{hoard.UploadCompleted, false, true}, file{hoard.UploadCompleted, false, true},
			file{hoard.UploadFailed, true, false}, size}},
		{"a year on", 365 * 24 * time.Hour, state{file{hoard.UploadCompleted, false, true}, file{hoard.UploadCompleted, false, true},
			file{hoard.UploadFailed, true, false}, size}},
	} {
		t.Run(step.name, func(t *testing.T) {
			clock = time.Now().Add(step.after)
			cleanup()
			if got := read(); got != step.want {
				t.Errorf("got  %+v\nwant %+v", got, step.want)
			}
		})
	}
}

// TestDownloadWaitsForDiskSpace: a download that would leave the spool's
// volume with less than SpoolMinFree free is not started: the job snoozes
// (no attempt spent, no skipped record) and the administrators get one
// DISK_LOW notification however often it waits; once there is room the set
// is downloaded and handed to its upload.
func TestDownloadWaitsForDiskSpace(t *testing.T) {
	w := newPublishWorld(t)
	ctx := context.Background()
	free := int64(messengertest.ZipSize + 1<<30 - 1) // a byte short
	spool := t.TempDir()
	deps := Deps{DB: w.db, Logger: discardLogger(), Accounts: oneAccount{w.acc}, SpoolDir: spool, SplitThreshold: 1 << 30,
		MaxSkipAttempts: 1, RetryBase: time.Second, SpoolMinFree: 1 << 30, SpoolWait: 30 * time.Second,
		FreeSpace: func(string) (int64, error) { return free, nil }}
	args := mammothZip(w, false)
	type state struct {
		Job      rivertype.JobState
		Notes    []string
		Spool    int
		Transfer bool
		Skipped  bool
	}
	read := func(st rivertype.JobState) state {
		t.Helper()
		notes, err := w.db.ListNotifications(ctx, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		s := state{Job: st}
		for _, n := range notes {
			s.Notes = append(s.Notes, string(n.Type)+"|"+n.Title)
		}
		des, _ := os.ReadDir(spool)
		s.Spool = len(des)
		_, terr := w.db.FindTransferBySource(ctx, args.ChannelID, args.MessageID)
		_, serr := w.db.FindSkippedBySource(ctx, args.ChannelID, args.MessageID)
		s.Transfer, s.Skipped = terr == nil, serr == nil
		return s
	}
	note := []string{"DISK_LOW|Downloads wait for disk space"}
	for _, step := range []struct {
		name string
		free int64
		want state
	}{
		{"a byte short", messengertest.ZipSize + 1<<30 - 1, state{rivertype.JobStateScheduled, note, 0, false, false}},
		{"still short", 0, state{rivertype.JobStateScheduled, note, 0, false, false}},
		{"room made", messengertest.ZipSize + 1<<30, state{rivertype.JobStateCompleted, note, 1, true, false}},
	} {
		t.Run(step.name, func(t *testing.T) {
			free = step.free
			st := work(t, w, river.Worker[hoard.IngestMessageArgs](newIngestMessageWorker(newParts(deps))), args)
			if got := read(st); fmt.Sprint(got) != fmt.Sprint(step.want) {
				t.Errorf("got  %+v\nwant %+v", got, step.want)
			}
		})
	}
}
