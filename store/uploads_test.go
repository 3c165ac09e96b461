package store_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store/storetest"
)

func TestManualUploads(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	u := linkUser(t, db, "uploader@example.com")
	other := linkUser(t, db, "other@example.com")
	up, err := db.CreateManualUpload(ctx, u.ID, "")
	must(t, err)
	if up.Status != hoard.UploadUploading || up.UserID != u.ID || up.FinishedAt != nil {
		t.Fatalf("new upload = %+v", up)
	}
	a, err := db.AddManualUploadFile(ctx, up.ID, "a.zip", "1/1", 10)
	must(t, err)
	b, err := db.AddManualUploadFile(ctx, up.ID, "b.pdf", "1/2", 20)
	must(t, err)
	if a.Status != hoard.UploadPending || b.FileSize != 20 {
		t.Fatalf("files = %+v %+v", a, b)
	}
	must(t, db.SetManualUploadGroupName(ctx, up.ID, "Set"))
	must(t, db.SetManualUploadStatus(ctx, up.ID, hoard.UploadProcessing, ""))
	p := mustPackage(t, db)
	hash := "0000000000000000000000000000000000000000000000000000000000000abc"
	must(t, db.SetManualUploadFileStatus(ctx, a.ID, hoard.UploadCompleted, "", hash, p.ID))
	must(t, db.SetManualUploadFileStatus(ctx, b.ID, hoard.UploadFailed, "upload failed: flood wait", "", 0))
	must(t, db.SetManualUploadStatus(ctx, up.ID, hoard.UploadPartial, "1 of 2 files failed"))
	got, err := db.FindManualUpload(ctx, up.ID)
	must(t, err)
	type upload struct {
		GroupName    string
		Status       hoard.UploadStatus
		Finished     bool
		Files        int
		FirstHash    string
		FirstPackage int64
		SecondFailed bool
	}
	have := upload{GroupName: got.GroupName, Status: got.Status, Finished: got.FinishedAt != nil, Files: len(got.Files)}
	if len(got.Files) == 2 {
		have.FirstHash, have.FirstPackage, have.SecondFailed = got.Files[0].ContentHash, got.Files[0].PackageID, got.Files[1].ErrorMessage != ""
	}
	if diff := cmp.Diff(upload{"Set", hoard.UploadPartial, true, 2, hash, p.ID, true}, have); diff != "" {
		t.Fatalf("upload (-want +got):\n%s", diff)
	}
	if got.Status.Phase() != "complete" || hoard.UploadPending.Phase() != "processing" || hoard.UploadUploading.Phase() != "upload" {
		t.Fatal("phases")
	}
	_, err = db.CreateManualUpload(ctx, other.ID, "x")
	must(t, err)
	mine, err := db.ListManualUploads(ctx, u.ID, 10)
	must(t, err)
	all, err := db.ListManualUploads(ctx, 0, 10)
	must(t, err)
	if len(mine) != 1 || len(all) != 2 || all[0].UserID != other.ID {
		t.Fatalf("lists: mine %d, all %d", len(mine), len(all))
	}
	if _, err := db.FindManualUpload(ctx, -1); hoard.ErrorCode(err) != hoard.ENOTFOUND {
		t.Fatalf("unknown upload: %v", err)
	}
	wantCode(t, db.SetManualUploadGroupName(ctx, -1, "x"), hoard.ENOTFOUND)
	wantCode(t, db.SetManualUploadFileStatus(ctx, -1, hoard.UploadFailed, "", "", 0), hoard.ENOTFOUND)
	wantCode(t, db.SetManualUploadStatus(ctx, -1, hoard.UploadFailed, ""), hoard.ENOTFOUND)
	wantCode(t, db.SetManualUploadStatus(ctx, up.ID, "LOST", ""), hoard.EINVALID) // last: aborts the transaction
}
