package jobs

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger/emulator"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"
)

// uploadedFile stores a small ZIP as the web does (UPLOAD_DIR/<upload>/1)
// and records an upload of it, ready for its manual_upload job.
func uploadedFile(t *testing.T, db *store.DB, dir, name string) *hoard.ManualUpload {
	t.Helper()
	ctx := context.Background()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	f, err := zw.Create("model/part.stl")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "solid %s\nendsolid\n", name)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	u, err := db.CreateUser(ctx, "uploader@example.com", "x", hoard.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	up, err := db.CreateManualUpload(ctx, u.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	rel := filepath.Join(fmt.Sprint(up.ID), "1")
	if err := os.MkdirAll(filepath.Join(dir, fmt.Sprint(up.ID)), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rel), b.Bytes(), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddManualUploadFile(ctx, up.ID, name, rel, int64(b.Len())); err != nil {
		t.Fatal(err)
	}
	if err := db.SetManualUploadStatus(ctx, up.ID, hoard.UploadPending, ""); err != nil {
		t.Fatal(err)
	}
	return up
}

// uploadOutcome is what a user sees of an upload: its status and message,
// its file's, whether the file became a package, and the notifications.
type uploadOutcome struct {
	Status     hoard.UploadStatus
	Message    string
	FileStatus hoard.UploadStatus
	FileError  string
	Package    bool
	Notes      []string
}

func readUpload(t *testing.T, db *store.DB, id int64) uploadOutcome {
	t.Helper()
	ctx := context.Background()
	up, err := db.FindManualUpload(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	notes, err := db.ListNotifications(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	out := uploadOutcome{Status: up.Status, Message: up.ErrorMessage, FileStatus: up.Files[0].Status,
		FileError: up.Files[0].ErrorMessage, Package: up.Files[0].PackageID != 0}
	for _, n := range notes {
		out.Notes = append(out.Notes, string(n.Type)+"|"+n.Title)
	}
	return out
}

// TestManualUploadWithNothingToPublishToFails: without a destination
// channel, or without a signed-in account that posts there, the upload ends
// FAILED at once, saying what to set up, with an UPLOAD_FAILED
// notification; it is not left PROCESSING.
func TestManualUploadWithNothingToPublishToFails(t *testing.T) {
	for _, tt := range []struct {
		name        string
		destination bool
		why         string
	}{
		{"no destination", false, "No destination channel is set up: choose or create one on the Messaging page first."},
		{"no writer", true, `No signed-in account posts to the destination channel "Hoard Archive": ` +
			"sign in an account that is a writer there on the Messaging page first."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := storetest.NewTx(t)
			dir := t.TempDir()
			if tt.destination {
				if err := db.UpsertChannel(context.Background(), &hoard.Channel{PlatformID: 77, Title: "Hoard Archive", Kind: hoard.ChannelDestination}); err != nil {
					t.Fatal(err)
				}
			}
			up := uploadedFile(t, db, dir, "Tower.zip")
			w := newManualUploadWorker(newParts(Deps{DB: db, Logger: discardLogger(), UploadDir: dir, Accounts: oneAccount{}}))
			tw := rivertest.NewWorker(t, riverpgxv5.New(nil), &river.Config{}, river.Worker[hoard.ManualUploadArgs](w))
			res, err := tw.Work(context.Background(), t, db.Tx(), hoard.ManualUploadArgs{UploadID: up.ID}, nil)
			if err != nil || res.Job.State != rivertype.JobStateCompleted {
				t.Fatalf("work = %v, %v", err, res)
			}
			got := readUpload(t, db, up.ID)
			want := uploadOutcome{Status: hoard.UploadFailed, Message: "No file could be uploaded: " + tt.why, FileStatus: hoard.UploadFailed,
				FileError: tt.why, Notes: []string{"UPLOAD_FAILED|Upload failed: #" + fmt.Sprint(up.ID)}}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("upload:\n got  %+v\n want %+v", got, want)
			}
		})
	}
}

// TestManualUploadFailureIsRetried: the platform refuses the upload; the
// file and the upload end FAILED with the reason and UPLOAD_FAILED is
// raised, the file stays on the volume. A retry (the upload page's button)
// publishes it: the upload ends COMPLETED with a package.
func TestManualUploadFailureIsRetried(t *testing.T) {
	w := newPublishWorld(t)
	ctx := context.Background()
	dir := t.TempDir()
	up := uploadedFile(t, w.db, dir, "Tower.zip")
	deps := Deps{DB: w.db, Logger: discardLogger(), UploadDir: dir, Accounts: oneAccount{w.acc}, MaxSkipAttempts: 1,
		RetryBase: time.Second, SplitThreshold: 1 << 20}
	// run works the upload's job, then its transfer's jobs.
	run := func() {
		t.Helper()
		if st := work(t, w, river.Worker[hoard.ManualUploadArgs](newManualUploadWorker(newParts(deps))), hoard.ManualUploadArgs{UploadID: up.ID}); st != rivertype.JobStateCompleted {
			t.Fatalf("manual upload job: %s", st)
		}
		tr, err := w.db.FindTransferByUploadFile(ctx, mustUpload(t, w.db, up.ID).Files[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		work(t, w, river.Worker[hoard.UploadPartArgs](newUploadPartWorker(newParts(deps))), hoard.UploadPartArgs{TransferID: tr.ID})
		if tr, err = w.db.FindTransfer(ctx, tr.ID); err == nil && tr.Status == hoard.TransferVerifying {
			work(t, w, river.Worker[hoard.VerifyTransferArgs](newVerifyTransferWorker(newParts(deps))), hoard.VerifyTransferArgs{TransferID: tr.ID})
		}
	}

	w.env.Emu.InjectFault(emulator.Fault{Method: "messages.sendMedia", Error: "MEDIA_INVALID"})
	run()
	failed := readUpload(t, w.db, up.ID)
	title := "UPLOAD_FAILED|Upload failed: #" + fmt.Sprint(up.ID)
	if !strings.Contains(failed.FileError, "MEDIA_INVALID") || !strings.Contains(failed.Message, "MEDIA_INVALID") {
		t.Fatalf("after the platform refused, the messages do not say why: %+v", failed)
	}
	wantFailed := uploadOutcome{Status: hoard.UploadFailed, Message: failed.Message, FileStatus: hoard.UploadFailed, FileError: failed.FileError,
		Notes: []string{title}}
	if diff := cmp.Diff(wantFailed, failed); diff != "" {
		t.Fatalf("after the platform refused (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(dir, mustUpload(t, w.db, up.ID).Files[0].StoredPath)); err != nil {
		t.Fatalf("the file is not kept for a retry: %v", err)
	}

	w.env.Emu.ClearFaults()
	if n, err := w.db.RetryManualUpload(ctx, up.ID); err != nil || n != 1 {
		t.Fatalf("retry = %d, %v", n, err)
	}
	run()
	got := readUpload(t, w.db, up.ID)
	want := uploadOutcome{Status: hoard.UploadCompleted, FileStatus: hoard.UploadCompleted, Package: true, Notes: []string{title}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after the retry:\n got  %+v\n want %+v", got, want)
	}
	if posts := w.destinationDocs(t); len(posts) != 1 {
		t.Errorf("destination holds %d posts, want the one of the package", len(posts))
	}
}

func mustUpload(t *testing.T, db *store.DB, id int64) *hoard.ManualUpload {
	t.Helper()
	up, err := db.FindManualUpload(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return up
}

// TestTakingUpAFailedTransferWaitsForItsPartJob: a retry clicked right
// after a failure can find River still counting the upload_part job that
// failed the publication as unfinished (its end is recorded a moment after
// the job marked the transfer FAILED). The retry's job for the part would
// be skipped as that job's duplicate and the part never posted, the upload
// PROCESSING for ever; continueTransfer says so instead (the manual upload
// job then snoozes), while for a transfer still in flight (recovery) the
// queued job is the one wanted.
func TestTakingUpAFailedTransferWaitsForItsPartJob(t *testing.T) {
	ctx := context.Background()
	// A client that enforces uniqueness, as the workers' does (rivertest's
	// does not).
	client, err := river.NewClient(riverpgxv5.New(nil), &river.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		status hoard.TransferStatus
		want   error
	}{
		{hoard.TransferFailed, errPartJobUnfinished},
		{hoard.TransferPublishing, nil},
	} {
		t.Run(string(c.status), func(t *testing.T) {
			db := storetest.NewTx(t)
			tr := &hoard.Transfer{ID: 7, Status: c.status}
			part := hoard.UploadPartArgs{TransferID: tr.ID}
			if _, err := client.InsertTx(ctx, db.Tx(), part, nil); err != nil {
				t.Fatal(err)
			}
			storetest.SetJobState(t, db, storetest.JobMatch{Kind: "upload_part"}, rivertype.JobStateRunning)
			d := newParts(Deps{DB: db, Logger: discardLogger()}).transfers
			err := d.continueTransfer(ctx, db, client, tr, []hoard.TransferPart{{TransferID: tr.ID, PartNo: 0}}, nil, 1, c.status == hoard.TransferFailed)
			if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
				t.Fatalf("continueTransfer = %v, want %v", err, c.want)
			}
		})
	}
}
