package jobs

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store/storetest"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"
)

func TestAuditFlagsMissingPartsAndOrphansOnce(t *testing.T) {
	db := storetest.NewTx(t)
	ctx := context.Background()
	dest := &hoard.Channel{PlatformID: 9001, Title: "Dest", Kind: hoard.ChannelDestination}
	if err := db.UpsertChannel(ctx, dest); err != nil {
		t.Fatal(err)
	}
	mk := func(name string, parts int, ids []int64) *hoard.Package {
		p := &hoard.Package{FileName: name, FileSize: 1, ArchiveType: hoard.ArchiveZIP, PartCount: parts,
			ContentHash: fmt.Sprintf("%064x", len(name)*1000+parts)}
		if err := db.CreatePackage(ctx, p); err != nil {
			t.Fatal(err)
		}
		if ids != nil {
			if err := db.SetPackageDestination(ctx, p.ID, dest.ID, ids); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	complete := mk("complete.zip", 3, []int64{1, 2, 3})
	missing := mk("missing.zip", 3, []int64{4, 5})
	legacy := mk("legacy.zip", 3, []int64{6})
	// An index row without its first destination message: its ids were
	// recorded, dest_message_id never was.
	orphan := &hoard.Package{FileName: "orphan.zip", FileSize: 1, ArchiveType: hoard.ArchiveZIP, PartCount: 1,
		ContentHash: fmt.Sprintf("%064x", len("orphan.zip")*1000+1), DestChannelID: dest.ID, DestMessageIDs: []int64{7}}
	if err := db.CreatePackage(ctx, orphan); err != nil {
		t.Fatal(err)
	}

	w := newAuditWorker(newParts(Deps{DB: db, Logger: discardLogger()}))
	tw := rivertest.NewWorker(t, riverpgxv5.New(nil), &river.Config{}, river.Worker[hoard.AuditArgs](w))
	for run := 1; run <= 2; run++ {
		res, err := tw.Work(ctx, t, db.Tx(), hoard.AuditArgs{RunID: int64(run)}, nil)
		if err != nil || res.Job.State != rivertype.JobStateCompleted {
			t.Fatalf("run %d: %v %v", run, err, res)
		}
	}
	items, err := db.ListNotifications(ctx, 0, 50)
	if err != nil {
		t.Fatal(err)
	}
	byPackage := map[int64]hoard.NotificationType{}
	for _, n := range items {
		if _, dup := byPackage[n.PackageID]; dup {
			t.Fatalf("package %d notified twice", n.PackageID)
		}
		byPackage[n.PackageID] = n.Type
	}
	if len(items) != 2 || byPackage[missing.ID] != hoard.NotifyMissingPart || byPackage[orphan.ID] != hoard.NotifyOrphanedIndex {
		t.Fatalf("notifications: %+v", byPackage)
	}
	if _, ok := byPackage[complete.ID]; ok {
		t.Fatal("a complete package was flagged")
	}
	if _, ok := byPackage[legacy.ID]; ok {
		t.Fatal("a single backfilled id was flagged")
	}
	// A dismissed problem is not raised again by every later cycle.
	for _, n := range items {
		if err := db.DismissNotification(ctx, n.ID); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Audit(ctx, db)
	if err != nil {
		t.Fatalf("audit after dismissal: %v", err)
	}
	if diff := cmp.Diff(AuditResult{MissingParts: 1, Orphans: 1, AlreadyNotified: 2}, res,
		cmpopts.IgnoreFields(AuditResult{}, "OrphanedPosts", "DestinationChecked")); diff != "" {
		t.Fatalf("audit after dismissal (-want +got):\n%s", diff)
	}
}
