package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

func destChannel(c *hoard.Channel) { c.Kind = hoard.ChannelDestination }

func rebuilt(destID int64, name string, size int64, ids ...int64) *hoard.Package {
	return &hoard.Package{FileName: name, FileSize: size, ArchiveType: hoard.ArchiveZIP, DestChannelID: destID, DestMessageIDs: ids}
}

func TestCreateRebuiltPackageIsIdempotent(t *testing.T) {
	db := storetest.NewTx(t)
	ctx := context.Background()
	dest := mustChannel(t, db, destChannel)

	p := rebuilt(dest.ID, "x.zip", 300, 11, 12)
	p.SourceCaption = "January"
	out, err := db.CreateRebuiltPackage(ctx, p, nil)
	if err != nil || out != store.RebuildCreated {
		t.Fatalf("first create = %q, %v", out, err)
	}
	got, err := db.FindPackageByID(ctx, p.ID)
	must(t, err)
	type rebuiltRow struct {
		ContentHash, SourceCaption                    string
		DestMessageID, DestChannelID, SourceChannelID int64
		DestMessageIDs                                []int64
		PartCount                                     int
		FileSize                                      int64
	}
	if diff := cmp.Diff(rebuiltRow{"", "January", 11, dest.ID, 0, []int64{11, 12}, 2, 300}, rebuiltRow{got.ContentHash, got.SourceCaption,
		got.DestMessageID, got.DestChannelID, got.SourceChannelID, got.DestMessageIDs, got.PartCount, got.FileSize}); diff != "" {
		t.Fatalf("rebuilt package (-want +got):\n%s", diff)
	}
	var hashIsNull bool
	must(t, db.Tx().QueryRow(ctx, `SELECT content_hash IS NULL FROM packages WHERE id = $1`, p.ID).Scan(&hashIsNull))
	if !hashIsNull {
		t.Fatal("content_hash was fabricated")
	}

	// The same set again, or any set sharing a message (or a re-post of a
	// part), creates nothing.
	for _, again := range []struct {
		p       *hoard.Package
		reposts []int64
	}{
		{rebuilt(dest.ID, "x.zip", 300, 11, 12), nil},
		{rebuilt(dest.ID, "x.zip", 150, 12), nil},
		{rebuilt(dest.ID, "x.zip", 300, 40, 41), []int64{11}},
	} {
		out, err := db.CreateRebuiltPackage(ctx, again.p, again.reposts)
		if err != nil || out != store.RebuildExisting || again.p.ID != 0 {
			t.Fatalf("create again %v = %q, %v (id %d)", again.p.DestMessageIDs, out, err, again.p.ID)
		}
	}
	// A legacy row holding only dest_message_id counts too.
	legacy := mustPackage(t, db)
	_, err = db.Tx().Exec(ctx, `UPDATE packages SET dest_channel_id = $2, dest_message_id = 20 WHERE id = $1`, legacy.ID, dest.ID)
	must(t, err)
	if out, err := db.CreateRebuiltPackage(ctx, rebuilt(dest.ID, legacy.FileName, legacy.FileSize, 20), nil); err != nil || out != store.RebuildExisting {
		t.Fatalf("legacy holder = %q, %v", out, err)
	}
	// The same message id in another channel is another message.
	other := mustChannel(t, db, destChannel)
	if out, err := db.CreateRebuiltPackage(ctx, rebuilt(other.ID, "x.zip", 300, 11, 12), nil); err != nil || out != store.RebuildCreated {
		t.Fatalf("other channel = %q, %v", out, err)
	}

	// Never a fabricated hash, never a package without messages.
	bad := rebuilt(dest.ID, "y.zip", 1, 50)
	bad.ContentHash = fmt.Sprintf("%064x", 1)
	_, err = db.CreateRebuiltPackage(ctx, bad, nil)
	wantCode(t, err, hoard.EINVALID)
	_, err = db.CreateRebuiltPackage(ctx, rebuilt(dest.ID, "y.zip", 1), nil)
	wantCode(t, err, hoard.EINVALID)
}

func TestCreateRebuiltPackageLeavesPublicationsInFlight(t *testing.T) {
	db := storetest.NewTx(t)
	ctx := context.Background()
	dest := mustChannel(t, db, destChannel)
	src := mustChannel(t, db)
	acc := mustAccount(t, db)
	tr := &hoard.Transfer{SourceChannelID: src.ID, SourceMessageID: 7, AccountID: acc.ID, DestChannelID: dest.ID,
		SpoolPaths: []string{"/spool/a", "/spool/b"}, ContentHash: fmt.Sprintf("%064x", 7),
		Draft: hoard.Package{FileName: "big.zip", FileSize: 10, ArchiveType: hoard.ArchiveZIP}}
	must(t, db.CreateTransfer(ctx, tr, []hoard.TransferPart{{Name: "big.zip.001", Length: 5}, {Name: "big.zip.002", Offset: 5, Length: 5}}))
	// Part 0 is posted as message 30; part 1 is being posted (the newest
	// message was 30 when it began).
	_, err := db.RecordTransferPart(ctx, tr.ID, 0, 30)
	must(t, err)
	must(t, db.MarkTransferPartPosting(ctx, tr.ID, 1, 30))

	for _, ids := range [][]int64{{30}, {29, 31}} {
		out, err := db.CreateRebuiltPackage(ctx, rebuilt(dest.ID, "big.zip", 10, ids...), nil)
		if err != nil || out != store.RebuildInFlight {
			t.Fatalf("set %v = %q, %v", ids, out, err)
		}
	}
	if out, err := db.CreateRebuiltPackage(ctx, rebuilt(dest.ID, "old.zip", 10, 28, 29), nil); err != nil || out != store.RebuildCreated {
		t.Fatalf("older set = %q, %v", out, err)
	}
}

func TestRebuildRunProgress(t *testing.T) {
	db := storetest.NewTx(t)
	ctx := context.Background()
	dest := mustChannel(t, db, destChannel)
	_, err := db.FindLatestRebuild(ctx)
	wantCode(t, err, hoard.ENOTFOUND)

	run, err := db.StartRebuild(ctx, dest.ID)
	must(t, err)
	// Its job is not in River: a second start treats it as interrupted.
	must(t, db.SetRebuildJob(ctx, run.ID, 987654))
	run2, err := db.StartRebuild(ctx, dest.ID)
	must(t, err)
	first, err := db.FindRebuild(ctx, run.ID)
	must(t, err)
	if first.Status != hoard.RunFailed || first.FinishedAt == nil || first.ErrorMessage == "" {
		t.Fatalf("stale rebuild = %+v", first)
	}
	// A running rebuild with a live job blocks another.
	_, err = db.Tx().Exec(ctx, `INSERT INTO river_job (id, args, kind, max_attempts, queue, state, attempt, attempted_at)
		VALUES ($1, '{}', $2, 5, 'ingest', 'running', 1, now())`,
		int64(987655), hoard.RebuildFromDestinationArgs{}.Kind())
	if err != nil {
		t.Fatalf("fake a running River job: %v", err)
	}
	must(t, db.SetRebuildJob(ctx, run2.ID, 987655))
	err = savepoint(db, func(tx *store.DB) error { _, err := tx.StartRebuild(ctx, dest.ID); return err })
	wantCode(t, err, hoard.ECONFLICT)

	must(t, db.AdvanceRebuild(ctx, run2.ID, hoard.RebuildCounters{MessagesScanned: 100, PackagesCreated: 3, PackagesExisting: 1, SetsSkipped: 1}, 140))
	must(t, db.AdvanceRebuild(ctx, run2.ID, hoard.RebuildCounters{MessagesScanned: 5, PackagesCreated: 1}, 120))
	ok, err := db.FinishRebuild(ctx, run2.ID, hoard.RunCompleted, "")
	if err != nil || !ok {
		t.Fatalf("finish = %v, %v", ok, err)
	}
	if ok, _ := db.FinishRebuild(ctx, run2.ID, hoard.RunFailed, "late"); ok {
		t.Fatal("finished twice")
	}
	wantCode(t, db.AdvanceRebuild(ctx, run2.ID, hoard.RebuildCounters{MessagesScanned: 1}, 200), hoard.ENOTFOUND)
	latest, err := db.FindLatestRebuild(ctx)
	must(t, err)
	want := hoard.RebuildCounters{MessagesScanned: 105, PackagesCreated: 4, PackagesExisting: 1, SetsSkipped: 1}
	type rebuild struct {
		ID, LastMessageID, DestChannelID, RiverJobID int64
		Counters                                     hoard.RebuildCounters
		Status                                       hoard.RunStatus
	}
	if diff := cmp.Diff(rebuild{run2.ID, 140, dest.ID, 987655, want, hoard.RunCompleted},
		rebuild{latest.ID, latest.LastMessageID, latest.DestChannelID, latest.RiverJobID, latest.RebuildCounters, latest.Status}); diff != "" {
		t.Fatalf("latest (-want +got):\n%s", diff)
	}
}
