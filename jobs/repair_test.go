package jobs

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger/messengertest"
	"github.com/hoard/hoard/store"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"
)

// TestRepairOfAHashMismatchRepublishesIntoTheSamePackage: a source set whose
// posted parts read back with another hash than downloaded is indexed and
// flagged HASH_MISMATCH with its package (SPEC rule 8), so Repair is
// offered. The repair (repairPackageAction's job) clears the destination,
// rewinds the watermark and queues a cycle; the set is published again into
// the same row, keeping its group and tags; then the stale posts are deleted
// from the destination, leaving exactly the new ones.
func TestRepairOfAHashMismatchRepublishesIntoTheSamePackage(t *testing.T) {
	w := newPublishWorld(t)
	ctx := context.Background()
	deps := Deps{DB: w.db, Logger: discardLogger(), Accounts: oneAccount{w.acc}, SpoolDir: t.TempDir(),
		SplitThreshold: 1 << 20, MaxSkipAttempts: 1, RetryBase: time.Second}
	const msg = 5 // Huge Pack.zip.001: four uploaded parts
	args := hoard.IngestMessageArgs{ChannelID: w.source.ID, MessageID: msg, MapID: w.mapID, FileName: "Huge Pack.zip",
		Size: messengertest.GeneratedSize, Parts: []hoard.SourcePart{{MessageID: msg, Name: "Huge Pack.zip.001", Size: messengertest.GeneratedSize}}}
	// publish ingests the set, posts its parts and verifies them; corrupt
	// changes a byte of the spool before verify reads it back.
	publish := func(corrupt bool) {
		t.Helper()
		if st := work(t, w, river.Worker[hoard.IngestMessageArgs](newIngestMessageWorker(newParts(deps))), args); st != rivertype.JobStateCompleted {
			t.Fatalf("ingest: %s", st)
		}
		tr, err := w.db.FindTransferBySource(ctx, w.source.ID, msg)
		if err != nil {
			t.Fatal(err)
		}
		for i := range tr.PartsTotal {
			if st := work(t, w, river.Worker[hoard.UploadPartArgs](newUploadPartWorker(newParts(deps))), hoard.UploadPartArgs{TransferID: tr.ID, PartNo: i}); st != rivertype.JobStateCompleted {
				t.Fatalf("upload part %d: %s", i, st)
			}
		}
		if corrupt {
			f, err := os.OpenFile(tr.SpoolPaths[0], os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt([]byte("rot"), 1000); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
		if st := work(t, w, river.Worker[hoard.VerifyTransferArgs](newVerifyTransferWorker(newParts(deps))), hoard.VerifyTransferArgs{TransferID: tr.ID}); st != rivertype.JobStateCompleted {
			t.Fatalf("verify: %s", st)
		}
	}

	publish(true)
	p, err := w.db.FindPackageBySourceMessage(ctx, w.source.ID, msg)
	if err != nil {
		t.Fatal(err)
	}
	notes, err := w.db.ListNotifications(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	type flagged struct {
		Type      hoard.NotificationType
		PackageID int64
		Posts     []int64
	}
	first := slices.Sorted(slices.Values(p.DestMessageIDs))
	if len(notes) != 1 || len(first) != 4 {
		t.Fatalf("after the mismatch: notifications %+v, posts %v", notes, first)
	}
	if got, want := (flagged{notes[0].Type, notes[0].PackageID, w.destinationDocs(t)}), (flagged{hoard.NotifyHashMismatch, p.ID, first}); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after the mismatch: %+v, want %+v", got, want)
	}

	// The user's work on the package, which the repair must keep.
	g := &hoard.PackageGroup{Name: "Huge things", GroupingSource: hoard.GroupManual, SourceChannelID: w.source.ID}
	if err := w.db.CreateGroup(ctx, g); err != nil {
		t.Fatal(err)
	}
	if err := w.db.SetPackageGroup(ctx, []int64{p.ID}, g.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.db.EditPackageTags(ctx, []int64{p.ID}, store.TagEdit{Add: []string{"keep-me"}}); err != nil {
		t.Fatal(err)
	}
	if err := w.db.AdvanceWatermark(ctx, w.mapID, 9); err != nil {
		t.Fatal(err)
	}

	tw := rivertest.NewWorker(t, riverpgxv5.New(nil), &river.Config{}, river.Worker[hoard.RepairPackageArgs](newRepairPackageWorker(newParts(deps))))
	res, err := tw.Work(ctx, t, w.db.Tx(), hoard.RepairPackageArgs{PackageID: p.ID}, nil)
	if err != nil || res.Job.State != rivertype.JobStateCompleted {
		t.Fatalf("repair: %v, %v", err, res)
	}
	cleared, err := w.db.FindPackageByID(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	m, err := w.db.FindChannelMap(ctx, w.mapID)
	if err != nil {
		t.Fatal(err)
	}
	stale, err := w.db.ListStalePosts(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	type repaired struct {
		Dest      int64
		Watermark int64
		Stale     int
	}
	if got, want := (repaired{cleared.DestChannelID, m.LastProcessedMessageID, len(stale)}), (repaired{0, msg - 1, 4}); got != want {
		t.Errorf("after the repair job: %+v, want %+v", got, want)
	}
	rivertest.RequireInsertedTx[*riverpgxv5.Driver](ctx, t, w.db.Tx(), &hoard.IngestCycleArgs{}, nil)

	publish(false)
	again, err := w.db.FindPackageBySourceMessage(ctx, w.source.ID, msg)
	if err != nil {
		t.Fatal(err)
	}
	rivertest.RequireInsertedTx[*riverpgxv5.Driver](ctx, t, w.db.Tx(), &hoard.DeleteStalePostsArgs{PackageID: p.ID}, nil)
	if st := work(t, w, river.Worker[hoard.DeleteStalePostsArgs](newDeleteStalePostsWorker(newParts(deps))), hoard.DeleteStalePostsArgs{PackageID: p.ID}); st != rivertype.JobStateCompleted {
		t.Fatalf("delete stale posts: %s", st)
	}
	left, err := w.db.ListStalePosts(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		SameRow     bool
		Group       int64
		Tags        []string
		NewPosts    bool
		Destination []int64
		StaleLeft   int
	}
	posts := slices.Sorted(slices.Values(again.DestMessageIDs))
	got := outcome{again.ID == p.ID, again.PackageGroupID, again.Tags, len(posts) == 4 && posts[0] > first[3], w.destinationDocs(t), len(left)}
	want := outcome{true, g.ID, []string{"keep-me"}, true, posts, 0}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after the repair:\n got  %+v\n want %+v", got, want)
	}
}
