package jobs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/messengertest"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"
)

// oneAccount gives every account id the same messenger client.
type oneAccount struct{ acc messenger.Account }

func (o oneAccount) Account(context.Context, int64) (messenger.Account, error) { return o.acc, nil }

func TestRebuildPagesNeverCutASet(t *testing.T) {
	doc := func(id int, name string) messenger.Message {
		return messenger.Message{ID: id, Document: &messenger.Document{FileName: name, Size: 10}}
	}
	msgs := []messenger.Message{doc(1, "x.zip.001"), doc(2, "a.stl"), {ID: 3, Text: "hi"}, doc(4, "x.zip.002"),
		doc(5, "b.pdf"), doc(6, "c.pdf"), doc(7, "y.part1.rar")}
	pages := rebuildPages(msgs, 2)
	var got []string
	for _, p := range pages {
		var names []string
		for _, s := range p.sets {
			names = append(names, packageName(s))
		}
		got = append(got, fmt.Sprintf("%d@%d%v", p.messages, p.lastID, names))
	}
	want := []string{"4@4[x.zip a.stl]", "2@6[b.pdf c.pdf]", "1@7[y.rar]"}
	if !slices.Equal(got, want) {
		t.Fatalf("pages = %q, want %q", got, want)
	}
}

func TestRebuildFromDestination(t *testing.T) {
	env := messengertest.Start(t, "")
	acc := env.Account(t, env.Config("account"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ref, err := messenger.ParseChannelRef("@hoardarchive")
	if err != nil {
		t.Fatal(err)
	}
	peer, err := acc.ResolveChannel(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	post := func(name, caption string, size int) (int64, int64) {
		t.Helper()
		data := bytes.Repeat([]byte(name[:1]), size)
		id, err := acc.Upload(ctx, messenger.UploadRequest{Channel: peer, FileName: name, Caption: caption,
			Data: io.NewSectionReader(bytes.NewReader(data), 0, int64(size))})
		if err != nil {
			t.Fatalf("post %s: %v", name, err)
		}
		return int64(id), int64(size)
	}
	// The destination: a byte split whose parts are interleaved with a
	// single file, a package already indexed, a file that is no candidate,
	// and a set missing its first part.
	x1, x1Size := post("x.zip.001", "", 4000)
	dragon, dragonSize := post("Mammoth Factory - 2024-02.stl", "Dragon bust", 1500)
	x2, x2Size := post("x.zip.002", "", 1200)
	known, knownSize := post("Known Pack.zip", "", 900)
	post("notes.txt", "", 10)
	lost, _ := post("lost.part2.rar", "", 700)

	db, dest := destinationDB(t, env.Info.Phone, peer)
	indexed := &hoard.Package{FileName: "Known Pack.zip", FileSize: knownSize, ArchiveType: hoard.ArchiveZIP,
		ContentHash: fmt.Sprintf("%064x", 42)}
	if err := db.CreatePackage(ctx, indexed); err != nil {
		t.Fatal(err)
	}
	if err := db.SetPackageDestination(ctx, indexed.ID, dest.ID, []int64{known}); err != nil {
		t.Fatal(err)
	}

	pages := 0
	crash := errors.New("worker lost")
	w := newRebuildFromDestinationWorker(newParts(Deps{DB: db, Logger: discardLogger(), Accounts: oneAccount{acc}}))
	w.pageSize = 2
	w.afterPage = func(page int) error {
		pages++
		if pages == 1 {
			return crash // the first attempt dies after its first page
		}
		return nil
	}
	tw := rivertest.NewWorker(t, riverpgxv5.New(nil), &river.Config{}, river.Worker[hoard.RebuildFromDestinationArgs](w))
	run := func() *hoard.RebuildRun {
		t.Helper()
		r, err := db.StartRebuild(ctx, dest.ID)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	find := func(id int64) *hoard.RebuildRun {
		t.Helper()
		r, err := db.FindRebuild(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	first := run()
	if _, err := tw.Work(ctx, t, db.Tx(), hoard.RebuildFromDestinationArgs{RebuildID: first.ID}, nil); !errors.Is(err, crash) {
		t.Fatalf("first attempt = %v, want the crash", err)
	}
	mid := find(first.ID)
	// Page 1 ends after x.zip.002: the set is never cut.
	type progress struct {
		Status                           hoard.RunStatus
		LastMessageID                    int64
		MessagesScanned, PackagesCreated int
		Failed                           bool
	}
	if diff := cmp.Diff(progress{hoard.RunRunning, x2, 3, 2, true},
		progress{mid.Status, mid.LastMessageID, mid.MessagesScanned, mid.PackagesCreated, mid.ErrorMessage != ""}); diff != "" {
		t.Fatalf("after the crash (-want +got):\n%s", diff)
	}
	res, err := tw.Work(ctx, t, db.Tx(), hoard.RebuildFromDestinationArgs{RebuildID: first.ID}, nil)
	if err != nil || res.Job.State != rivertype.JobStateCompleted {
		t.Fatalf("second attempt: %v %+v", err, res)
	}
	done := find(first.ID)
	want := hoard.RebuildCounters{MessagesScanned: 6, PackagesCreated: 2, PackagesExisting: 1, SetsSkipped: 1}
	type finished struct {
		Status        hoard.RunStatus
		Counters      hoard.RebuildCounters
		LastMessageID int64
		ErrorMessage  string
		Finished      bool
	}
	if diff := cmp.Diff(finished{hoard.RunCompleted, want, lost, "", true},
		finished{done.Status, done.RebuildCounters, done.LastMessageID, done.ErrorMessage, done.FinishedAt != nil}); diff != "" {
		t.Fatalf("rebuild (-want +got):\n%s", diff)
	}

	byFirst := map[int64]hoard.Package{}
	items, _, err := db.ListPackages(ctx, store.PackageFilter{}, nil, 50)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range items {
		byFirst[p.DestMessageID] = p
	}
	if len(items) != 3 {
		t.Fatalf("%d packages, want 3: %+v", len(items), items)
	}
	x := byFirst[x1]
	type rebuilt struct {
		FileName, ContentHash, SourceCaption, Creator string
		FileSize                                      int64
		ArchiveType                                   hoard.ArchiveType
		PartCount                                     int
		DestMessageIDs                                []int64
		DestChannelID, SourceChannelID                int64
	}
	rowOf := func(p hoard.Package) rebuilt {
		return rebuilt{p.FileName, p.ContentHash, p.SourceCaption, p.Creator, p.FileSize, p.ArchiveType, p.PartCount, p.DestMessageIDs,
			p.DestChannelID, p.SourceChannelID}
	}
	if diff := cmp.Diff(rebuilt{FileName: "x.zip", FileSize: x1Size + x2Size, ArchiveType: hoard.ArchiveZIP, PartCount: 2,
		DestMessageIDs: []int64{x1, x2}, DestChannelID: dest.ID}, rowOf(x), cmpopts.IgnoreFields(rebuilt{}, "SourceCaption", "Creator")); diff != "" {
		t.Fatalf("split set (-want +got):\n%s", diff)
	}
	d := byFirst[dragon]
	if diff := cmp.Diff(rebuilt{FileName: "Mammoth Factory - 2024-02.stl", SourceCaption: "Dragon bust", Creator: "Mammoth Factory",
		FileSize: dragonSize, ArchiveType: hoard.ArchiveDocument, PartCount: 1, DestMessageIDs: []int64{dragon}}, rowOf(d),
		cmpopts.IgnoreFields(rebuilt{}, "DestChannelID", "SourceChannelID")); diff != "" {
		t.Fatalf("single file (-want +got):\n%s", diff)
	}
	if k := byFirst[known]; k.ID != indexed.ID || k.ContentHash != indexed.ContentHash {
		t.Fatalf("indexed package changed: %+v", k)
	}

	// A second rebuild finds everything in place.
	w.afterPage = nil
	second := run()
	res, err = tw.Work(ctx, t, db.Tx(), hoard.RebuildFromDestinationArgs{RebuildID: second.ID}, nil)
	if err != nil || res.Job.State != rivertype.JobStateCompleted {
		t.Fatalf("second rebuild: %v %+v", err, res)
	}
	again := find(second.ID)
	want = hoard.RebuildCounters{MessagesScanned: 6, PackagesCreated: 0, PackagesExisting: 3, SetsSkipped: 1}
	if again.Status != hoard.RunCompleted || again.RebuildCounters != want {
		t.Fatalf("second rebuild = %+v, want counters %+v", again, want)
	}
	if n, err := db.CountRows(ctx, "packages"); err != nil || n != 3 {
		t.Fatalf("packages after the second rebuild = %d, %v", n, err)
	}
}

func TestRebuildWithoutReaderFails(t *testing.T) {
	db := storetest.NewTx(t)
	ctx := context.Background()
	dest := &hoard.Channel{PlatformID: 777, Title: "Dest", Kind: hoard.ChannelDestination}
	if err := db.UpsertChannel(ctx, dest); err != nil {
		t.Fatal(err)
	}
	r, err := db.StartRebuild(ctx, dest.ID)
	if err != nil {
		t.Fatal(err)
	}
	w := newRebuildFromDestinationWorker(newParts(Deps{DB: db, Logger: discardLogger()}))
	tw := rivertest.NewWorker(t, riverpgxv5.New(nil), &river.Config{}, river.Worker[hoard.RebuildFromDestinationArgs](w))
	res, err := tw.Work(ctx, t, db.Tx(), hoard.RebuildFromDestinationArgs{RebuildID: r.ID}, nil)
	if err != nil || res.Job.State != rivertype.JobStateCancelled {
		t.Fatalf("work = %v %+v", err, res)
	}
	got, err := db.FindRebuild(ctx, r.ID)
	if err != nil || got.Status != hoard.RunFailed || got.ErrorMessage == "" {
		t.Fatalf("rebuild = %+v, %v", got, err)
	}
	t.Log(got.ErrorMessage)
}
