package jobs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/emulator"
	"github.com/hoard/hoard/messenger/messengertest"
	"github.com/hoard/hoard/store"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"
)

// publishWorld is the default emulator world with a test database whose
// account reads @mammothfactory and writes to the destination.
type publishWorld struct {
	env    *messengertest.Env
	acc    messenger.Account
	db     *store.DB
	dest   *hoard.Channel
	peer   messenger.Channel // the destination as the account sees it
	source *hoard.Channel
	mapID  int64
}

func newPublishWorld(t *testing.T) *publishWorld {
	t.Helper()
	env := messengertest.Start(t, "")
	acc := env.Account(t, env.Config("account"))
	ctx := context.Background()
	peer, src := resolveChannel(t, acc, "@hoardarchive"), resolveChannel(t, acc, "@mammothfactory")
	db, dest := destinationDB(t, env.Info.Phone, peer)
	account, err := db.FindAccountByPhone(ctx, env.Info.Phone)
	if err != nil {
		t.Fatal(err)
	}
	source, mapID := sourceOf(t, db, account.ID, src)
	return &publishWorld{env: env, acc: acc, db: db, dest: dest, peer: peer, source: source, mapID: mapID}
}

// sourceOf stores src as an active source channel read by accountID and
// returns it with the id of the account's map.
func sourceOf(t *testing.T, db *store.DB, accountID int64, src messenger.Channel) (*hoard.Channel, int64) {
	t.Helper()
	ctx := context.Background()
	source := &hoard.Channel{PlatformID: src.ID, Title: src.Title, Kind: hoard.ChannelSource, IsActive: true, IsProtected: src.Protected}
	if err := db.UpsertChannel(ctx, source); err != nil {
		t.Fatal(err)
	}
	m, err := db.UpsertChannelMap(ctx, accountID, source.ID, src.AccessHash, hoard.MapReader)
	if err != nil {
		t.Fatal(err)
	}
	return source, m.ID
}

// destinationDocs returns the ids of the documents in the destination.
func (w *publishWorld) destinationDocs(t *testing.T) []int64 {
	t.Helper()
	msgs, err := w.acc.History(context.Background(), w.peer, messenger.HistoryQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, m := range msgs {
		if m.Document != nil {
			ids = append(ids, int64(m.ID))
		}
	}
	return ids
}

// work runs one job of args to its end in the test transaction.
func work[T river.JobArgs](t *testing.T, w *publishWorld, worker river.Worker[T], args T) rivertype.JobState {
	t.Helper()
	tw := rivertest.NewWorker(t, riverpgxv5.New(nil), &river.Config{}, worker)
	res, err := tw.Work(context.Background(), t, w.db.Tx(), args, &river.InsertOpts{MaxAttempts: 1})
	if err != nil && res == nil {
		t.Fatalf("work %s: %v", args.Kind(), err)
	}
	if err != nil {
		t.Logf("work %s: %v", args.Kind(), err)
	}
	return res.Job.State
}

// TestFailureAfterPublishingCompletesOnRetryWithTheSamePosts: a set split
// into four uploaded parts posts its first part, then the platform refuses
// the second (a fault injected after the first post) and the publication
// fails for good. A retry takes the failed publication up: the first
// part's post is kept, only the others are posted, and the package points
// to exactly the posts in the destination.
func TestFailureAfterPublishingCompletesOnRetryWithTheSamePosts(t *testing.T) {
	w := newPublishWorld(t)
	ctx := context.Background()
	deps := Deps{DB: w.db, Logger: discardLogger(), Accounts: oneAccount{w.acc}, SpoolDir: t.TempDir(),
		SplitThreshold: 1 << 20, MaxSkipAttempts: 1, RetryBase: time.Second}
	const msg = 5 // Huge Pack.zip.001, the seed's generated file
	args := hoard.IngestMessageArgs{ChannelID: w.source.ID, MessageID: msg, MapID: w.mapID, FileName: "Huge Pack.zip",
		Size: messengertest.GeneratedSize, Parts: []hoard.SourcePart{{MessageID: msg, Name: "Huge Pack.zip.001", Size: messengertest.GeneratedSize}}}
	ingest := newIngestMessageWorker(newParts(deps))
	upload := newUploadPartWorker(newParts(deps))
	verify := newVerifyTransferWorker(newParts(deps))
	uploadAll := func(tr *hoard.Transfer) []rivertype.JobState {
		var states []rivertype.JobState
		for i := range tr.PartsTotal {
			states = append(states, work(t, w, river.Worker[hoard.UploadPartArgs](upload), hoard.UploadPartArgs{TransferID: tr.ID, PartNo: i}))
		}
		return states
	}

	if st := work(t, w, river.Worker[hoard.IngestMessageArgs](ingest), args); st != rivertype.JobStateCompleted {
		t.Fatalf("first ingest: %s", st)
	}
	tr, err := w.db.FindTransferBySource(ctx, w.source.ID, msg)
	if err != nil || tr.PartsTotal != 4 {
		t.Fatalf("transfer: %+v, %v", tr, err)
	}
	w.env.Emu.InjectFault(emulator.Fault{Method: "messages.sendMedia", After: 1, Error: "MEDIA_INVALID"})
	uploadAll(tr)
	first := w.destinationDocs(t)
	failed, err := w.db.FindTransfer(ctx, tr.ID)
	if err != nil {
		t.Fatal(err)
	}
	skipped, err := w.db.FindSkippedBySource(ctx, w.source.ID, msg)
	if err != nil {
		t.Fatal(err)
	}
	type afterFailure struct {
		Posts  int
		Status hoard.TransferStatus
		Skip   hoard.SkipStatus
	}
	if got, want := (afterFailure{len(first), failed.Status, skipped.Status}), (afterFailure{1, hoard.TransferFailed, hoard.SkipGaveUp}); got != want {
		t.Fatalf("after the fault: %+v, want %+v", got, want)
	}

	w.env.Emu.ClearFaults()
	if st := work(t, w, river.Worker[hoard.IngestMessageArgs](ingest), args); st != rivertype.JobStateCompleted {
		t.Fatalf("retry: %s", st)
	}
	resumed, err := w.db.FindTransferBySource(ctx, w.source.ID, msg)
	if err != nil {
		t.Fatal(err)
	}
	uploadAll(resumed)
	if st := work(t, w, river.Worker[hoard.VerifyTransferArgs](verify), hoard.VerifyTransferArgs{TransferID: resumed.ID}); st != rivertype.JobStateCompleted {
		t.Fatalf("verify: %s", st)
	}
	p, err := w.db.FindPackageBySourceMessage(ctx, w.source.ID, msg)
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		SameTransfer   bool
		FirstPostKept  bool
		PackagePosts   []int64
		Destination    []int64
		SkippedRemains bool
	}
	_, serr := w.db.FindSkippedBySource(ctx, w.source.ID, msg)
	got := outcome{SameTransfer: resumed.ID == tr.ID, FirstPostKept: len(p.DestMessageIDs) == 4 && p.DestMessageIDs[0] == first[0],
		PackagePosts: slices.Sorted(slices.Values(p.DestMessageIDs)), Destination: w.destinationDocs(t),
		SkippedRemains: serr == nil}
	want := outcome{SameTransfer: true, FirstPostKept: true, PackagePosts: got.Destination, Destination: got.Destination}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(got.Destination) != 4 {
		t.Errorf("after the retry:\n got  %+v\n want %+v with four posts", got, want)
	}
}

// TestAuditReportsOrphanedDestinationPosts: the audit reads the destination
// since its high-water mark and reports the documents nothing points to,
// once; a post that may belong to a part in flight is left for later.
func TestAuditReportsOrphanedDestinationPosts(t *testing.T) {
	w := newPublishWorld(t)
	ctx := context.Background()
	post := func(name string) int64 {
		t.Helper()
		data := bytes.Repeat([]byte(name[:1]), 1000)
		id, err := w.acc.Upload(ctx, messenger.UploadRequest{Channel: w.peer, FileName: name,
			Data: io.NewSectionReader(bytes.NewReader(data), 0, int64(len(data)))})
		if err != nil {
			t.Fatal(err)
		}
		return int64(id)
	}
	indexed := func(name string, ids ...int64) {
		t.Helper()
		p := &hoard.Package{FileName: name, FileSize: 1000, ArchiveType: hoard.ArchiveZIP, PartCount: len(ids),
			ContentHash: fmt.Sprintf("%064x", ids[0])}
		if err := w.db.CreatePackage(ctx, p); err != nil {
			t.Fatal(err)
		}
		if err := w.db.SetPackageDestination(ctx, p.ID, w.dest.ID, ids); err != nil {
			t.Fatal(err)
		}
	}
	account, err := w.db.FindAccountByPhone(ctx, w.env.Info.Phone)
	if err != nil {
		t.Fatal(err)
	}
	transfer := func(msg int64, status hoard.TransferStatus, parts int) *hoard.Transfer {
		t.Helper()
		tr := &hoard.Transfer{SourceChannelID: w.source.ID, SourceMessageID: msg, AccountID: account.ID,
			DestChannelID: w.dest.ID, SpoolPaths: []string{"/nonexistent"}, ContentHash: fmt.Sprintf("%064x", 1000+msg),
			Draft: hoard.Package{FileName: fmt.Sprintf("t%d.zip", msg)}}
		tps := make([]hoard.TransferPart, parts)
		for i := range tps {
			tps[i] = hoard.TransferPart{Name: fmt.Sprintf("t%d.zip.%03d", msg, i+1), Length: 10, Offset: int64(10 * i)}
		}
		if err := w.db.CreateTransfer(ctx, tr, tps); err != nil {
			t.Fatal(err)
		}
		if status != hoard.TransferPublishing {
			if err := w.db.SetTransferStatus(ctx, tr.ID, status, "failed"); err != nil {
				t.Fatal(err)
			}
		}
		return tr
	}
	// Multi-part package whose second part was posted first.
	b2, a, b1 := post("b.zip.002"), post("a.zip"), post("b.zip.001")
	indexed("a.zip", a)
	indexed("b.zip", b1, b2)
	post("orphan.zip")
	held := transfer(10, hoard.TransferFailed, 1) // a retry takes its post up
	heldPost := post("t10.zip.001")
	if _, err := w.db.RecordTransferPart(ctx, held.ID, 0, heldPost); err != nil {
		t.Fatal(err)
	}
	inFlight := transfer(11, hoard.TransferPublishing, 1)
	if err := w.db.MarkTransferPartPosting(ctx, inFlight.ID, 0, heldPost); err != nil {
		t.Fatal(err)
	}
	flightPost := post("t11.zip.001") // posted, not recorded yet

	auditor := newAuditWorker(newParts(Deps{DB: w.db, Logger: discardLogger(), Accounts: oneAccount{w.acc}}))
	audit := func() AuditResult {
		t.Helper()
		var res AuditResult
		if err := auditor.auditDestination(ctx, &res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	notified := func() []string {
		t.Helper()
		items, err := w.db.ListNotifications(ctx, 0, 50)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range items {
			out = append(out, string(n.Type)+"|"+strings.TrimPrefix(n.Title, "Orphaned destination post: "))
		}
		slices.Sort(out)
		return out
	}
	type step struct {
		Orphans int
		Checked int64
		Notes   []string
	}
	first := audit()
	got := step{first.OrphanedPosts, first.DestinationChecked, notified()}
	if want := (step{1, heldPost, []string{"ORPHANED_POST|orphan.zip"}}); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("first audit: %+v, want %+v", got, want)
	}

	// The part in flight is recorded; a later post is orphaned; the first
	// orphan is not reported again.
	if _, err := w.db.RecordTransferPart(ctx, inFlight.ID, 0, flightPost); err != nil {
		t.Fatal(err)
	}
	late := post("late.zip")
	second := audit()
	got = step{second.OrphanedPosts, second.DestinationChecked, notified()}
	if want := (step{1, late, []string{"ORPHANED_POST|late.zip", "ORPHANED_POST|orphan.zip"}}); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("second audit: %+v, want %+v", got, want)
	}
}

// TestAPartJobOfAGoneTransferEndsQuietly: an upload_part job whose transfer
// is gone (indexed, a duplicate, or replaced by its set's retry while the
// job waited for another attempt) has nothing to do and completes, as for a
// transfer no longer publishing; it is not cancelled.
func TestAPartJobOfAGoneTransferEndsQuietly(t *testing.T) {
	w := newPublishWorld(t)
	deps := Deps{DB: w.db, Logger: discardLogger(), Accounts: oneAccount{w.acc}, SpoolDir: t.TempDir()}
	upload := river.Worker[hoard.UploadPartArgs](newUploadPartWorker(newParts(deps)))
	if st := work(t, w, upload, hoard.UploadPartArgs{TransferID: 987654, PartNo: 1}); st != rivertype.JobStateCompleted {
		t.Fatalf("the part job of a transfer that is gone ended %s, want completed", st)
	}
}
