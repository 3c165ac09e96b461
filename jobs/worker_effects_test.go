package jobs

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gotd/td/bin"
	"github.com/gotd/td/tg"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger/emulator"
	"github.com/hoard/hoard/messenger/messengertest"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// mammothZip is the first post of the default world's @mammothfactory
// (message 2, after the channel's creation): a ZIP (random bytes: no
// listing, no preview inside) posted in an album with a photo (message 3).
func mammothZip(w *publishWorld, photo bool) hoard.IngestMessageArgs {
	a := hoard.IngestMessageArgs{ChannelID: w.source.ID, MessageID: 2, MapID: w.mapID, FileName: "Mammoth Factory - 2024-01.zip",
		Size: messengertest.ZipSize, Parts: []hoard.SourcePart{{MessageID: 2, Name: "Mammoth Factory - 2024-01.zip", Size: messengertest.ZipSize}}}
	if photo {
		a.PhotoMessageID = 3
	}
	return a
}

// publishSet ingests a set and works its transfer's jobs (each once), as a
// worker would; it returns the transfer's id.
func publishSet(t *testing.T, w *publishWorld, deps Deps, args hoard.IngestMessageArgs) int64 {
	t.Helper()
	if st := work(t, w, river.Worker[hoard.IngestMessageArgs](newIngestMessageWorker(newParts(deps))), args); st != rivertype.JobStateCompleted {
		t.Fatalf("ingest: %s", st)
	}
	tr, err := w.db.FindTransferBySource(context.Background(), args.ChannelID, args.MessageID)
	if err != nil {
		t.Fatal(err)
	}
	for i := range tr.PartsTotal {
		work(t, w, river.Worker[hoard.UploadPartArgs](newUploadPartWorker(newParts(deps))), hoard.UploadPartArgs{TransferID: tr.ID, PartNo: i})
	}
	if now, err := w.db.FindTransfer(context.Background(), tr.ID); err == nil && now.Status == hoard.TransferVerifying {
		work(t, w, river.Worker[hoard.VerifyTransferArgs](newVerifyTransferWorker(newParts(deps))), hoard.VerifyTransferArgs{TransferID: tr.ID})
	}
	return tr.ID
}

func photoDownload(req bin.Object) bool {
	r, ok := req.(*tg.UploadGetFileRequest)
	if !ok {
		return false
	}
	_, photo := r.Location.(*tg.InputPhotoFileLocation)
	return photo
}

// TestPreviewMsgIDStaysUnsetWhenThePreviewDownloadFails: a set posted with
// a photo gets it as preview and previewMsgId; when the photo's download
// fails the package is published all the same, without preview and with
// previewMsgId unset (SPEC rule 10).
func TestPreviewMsgIDStaysUnsetWhenThePreviewDownloadFails(t *testing.T) {
	for _, tt := range []struct {
		name  string
		fault bool
		want  [2]any // previewMsgId, hasPreview
	}{
		{"photo downloaded", false, [2]any{int64(3), true}},
		{"photo download fails", true, [2]any{int64(0), false}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newPublishWorld(t)
			if tt.fault {
				w.env.Emu.InjectFault(emulator.Fault{Method: "upload.getFile", Error: "FILE_REFERENCE_EXPIRED", Match: photoDownload})
			}
			deps := Deps{DB: w.db, Logger: discardLogger(), Accounts: oneAccount{w.acc}, SpoolDir: t.TempDir(),
				SplitThreshold: 1 << 30, MaxSkipAttempts: 1, RetryBase: time.Second}
			publishSet(t, w, deps, mammothZip(w, true))
			p, err := w.db.FindPackageBySourceMessage(context.Background(), w.source.ID, 2)
			if err != nil {
				t.Fatal(err)
			}
			if got := [2]any{p.PreviewMsgID, p.HasPreview}; got != tt.want || p.DestChannelID == 0 {
				t.Errorf("previewMsgId, hasPreview = %v (published: %v), want %v", got, p.DestChannelID != 0, tt.want)
			}
		})
	}
}

// TestDestinationUploadFailureNotifies: a set the destination refuses on
// its last attempt is SKIPPED as UPLOAD_FAILED and raises one UPLOAD_FAILED
// notification naming it (SPEC rule 14).
func TestDestinationUploadFailureNotifies(t *testing.T) {
	w := newPublishWorld(t)
	ctx := context.Background()
	w.env.Emu.InjectFault(emulator.Fault{Method: "messages.sendMedia", Error: "MEDIA_INVALID"})
	deps := Deps{DB: w.db, Logger: discardLogger(), Accounts: oneAccount{w.acc}, SpoolDir: t.TempDir(),
		SplitThreshold: 1 << 30, MaxSkipAttempts: 1, RetryBase: time.Second}
	publishSet(t, w, deps, mammothZip(w, false))
	s, err := w.db.FindSkippedBySource(ctx, w.source.ID, 2)
	if err != nil {
		t.Fatal(err)
	}
	notes, err := w.db.ListNotifications(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range notes {
		got = append(got, fmt.Sprintf("%s|%s|%d|%v", n.Type, n.Title, n.ChannelID, strings.Contains(n.Message, "MEDIA_INVALID")))
	}
	want := []string{fmt.Sprintf("UPLOAD_FAILED|Upload failed: Mammoth Factory - 2024-01.zip|%d|true", w.source.ID)}
	if fmt.Sprint(got) != fmt.Sprint(want) || s.Reason != hoard.SkipUploadFailed || s.Status != hoard.SkipGaveUp {
		t.Errorf("notifications %q (want %q), skipped %s %s", got, want, s.Reason, s.Status)
	}
}

// TestRecoveryOnStart: recovery (SPEC rule 15, run when a worker starts)
// checks a publication in flight against the destination: a posted part
// that is still there is kept and the transfer goes on to verify; a part
// whose post vanished is forgotten and posted again.
func TestRecoveryOnStart(t *testing.T) {
	w := newPublishWorld(t)
	ctx := context.Background()
	deps := Deps{DB: w.db, Logger: discardLogger(), Accounts: oneAccount{w.acc}, SpoolDir: t.TempDir(),
		SplitThreshold: 1 << 30, MaxSkipAttempts: 3, RetryBase: time.Second}
	args := mammothZip(w, false)
	if st := work(t, w, river.Worker[hoard.IngestMessageArgs](newIngestMessageWorker(newParts(deps))), args); st != rivertype.JobStateCompleted {
		t.Fatalf("ingest: %s", st)
	}
	tr, err := w.db.FindTransferBySource(ctx, w.source.ID, 2)
	if err != nil {
		t.Fatal(err)
	}
	work(t, w, river.Worker[hoard.UploadPartArgs](newUploadPartWorker(newParts(deps))), hoard.UploadPartArgs{TransferID: tr.ID})
	posted, err := w.db.FindTransferPart(ctx, tr.ID, 0)
	if err != nil || posted.DestMessageID == 0 {
		t.Fatalf("posted part: %+v, %v", posted, err)
	}
	type state struct {
		Status     hoard.TransferStatus
		Post       int64
		UploadJobs int
		VerifyJobs int
	}
	recoverNow := func() state {
		t.Helper()
		if st := work(t, w, river.Worker[hoard.RecoverTransfersArgs](newRecoverTransfersWorker(newParts(deps))), hoard.RecoverTransfersArgs{}); st != rivertype.JobStateCompleted {
			t.Fatalf("recover: %s", st)
		}
		now, err := w.db.FindTransfer(ctx, tr.ID)
		if err != nil {
			t.Fatal(err)
		}
		part, err := w.db.FindTransferPart(ctx, tr.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		up, err := w.db.CountUnfinishedJobs(ctx, hoard.UploadPartArgs{}.Kind())
		if err != nil {
			t.Fatal(err)
		}
		ver, err := w.db.CountUnfinishedJobs(ctx, hoard.VerifyTransferArgs{}.Kind())
		if err != nil {
			t.Fatal(err)
		}
		return state{now.Status, part.DestMessageID, up, ver}
	}
	// The upload queued verify already: recovery's own verify job is
	// unique with it or a second one; either way verify runs.
	if got := recoverNow(); got.Status != hoard.TransferVerifying || got.Post != posted.DestMessageID || got.VerifyJobs == 0 {
		t.Errorf("post present: %+v, want VERIFYING with post %d and a verify job", got, posted.DestMessageID)
	}
	if err := w.acc.DeleteMessages(ctx, w.peer, []int{int(posted.DestMessageID)}); err != nil {
		t.Fatal(err)
	}
	before, err := w.db.CountUnfinishedJobs(ctx, hoard.UploadPartArgs{}.Kind())
	if err != nil {
		t.Fatal(err)
	}
	got := recoverNow()
	if got.Status != hoard.TransferPublishing || got.Post != 0 || got.UploadJobs != before+1 {
		t.Errorf("post vanished: %+v, want PUBLISHING, the part forgotten and %d upload_part jobs", got, before+1)
	}
}

// TestRescanAndRetryWorkers: rescan_channel sets the channel's watermark
// back to its start and queues a cycle; retry_skipped gives a skipped
// message a fresh attempt budget, moves the watermark back before it and
// queues a cycle. While a cycle runs (its scans may have passed the
// message) they wait for it to end, changing nothing yet.
func TestRescanAndRetryWorkers(t *testing.T) {
	w := newPublishWorld(t)
	ctx := context.Background()
	deps := Deps{DB: w.db, Logger: discardLogger()}
	s := &hoard.SkippedPackage{SourceChannelID: w.source.ID, SourceMessageID: 5, AccountChannelMapID: w.mapID, FileName: "Huge Pack.zip",
		FileSize: 10, PartCount: 1, Reason: hoard.SkipDownloadFailed, Status: hoard.SkipGaveUp, AttemptCount: 5, MaxAttempts: 5, LastError: "stalled"}
	if err := w.db.UpsertSkippedPackage(ctx, s); err != nil {
		t.Fatal(err)
	}
	type state struct {
		Watermark int64
		Skip      hoard.SkipStatus
		Attempts  int
		Cycles    int // cycles queued by the job (rivertest's client does not apply unique options)
	}
	cycles := func() int {
		t.Helper()
		n, err := w.db.CountUnfinishedJobs(ctx, hoard.IngestCycleArgs{}.Kind())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	read := func(before int) state {
		t.Helper()
		m, err := w.db.FindChannelMap(ctx, w.mapID)
		if err != nil {
			t.Fatal(err)
		}
		got, err := w.db.FindSkippedPackage(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		return state{m.LastProcessedMessageID, got.Status, got.AttemptCount, cycles() - before}
	}
	running, err := w.db.CreateRun(ctx, hoard.TriggerSchedule)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		run  func() rivertype.JobState
		want state
	}{
		{"retry skipped while a cycle runs", func() rivertype.JobState {
			defer func() {
				if _, err := w.db.FinishRun(ctx, running.ID, hoard.RunCompleted, ""); err != nil {
					t.Fatal(err)
				}
			}()
			if st := work(t, w, river.Worker[hoard.RetrySkippedArgs](newRetrySkippedWorker(newParts(deps))), hoard.RetrySkippedArgs{SkippedID: s.ID}); st != rivertype.JobStateScheduled {
				return st
			}
			return rivertype.JobStateCompleted // snoozed, as wanted
		}, state{9, hoard.SkipGaveUp, 5, 0}},
		{"retry skipped", func() rivertype.JobState {
			return work(t, w, river.Worker[hoard.RetrySkippedArgs](newRetrySkippedWorker(newParts(deps))), hoard.RetrySkippedArgs{SkippedID: s.ID})
		}, state{4, hoard.SkipRetrying, 0, 1}},
		{"rescan", func() rivertype.JobState {
			return work(t, w, river.Worker[hoard.RescanChannelArgs](newRescanChannelWorker(newParts(deps))), hoard.RescanChannelArgs{ChannelID: w.source.ID})
		}, state{0, hoard.SkipRetrying, 0, 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := w.db.AdvanceWatermark(ctx, w.mapID, 9); err != nil {
				t.Fatal(err)
			}
			before := cycles()
			if st := tt.run(); st != rivertype.JobStateCompleted {
				t.Fatalf("job: %s", st)
			}
			if got := read(before); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestScanCountersAddUp: what a scan finds (sets and their re-posts) is
// accounted for by what it does with each: queued (counted as new,
// duplicate or skipped when its job ends), duplicate, skipped, or held back
// while it settles.
func TestScanCountersAddUp(t *testing.T) {
	type counts struct {
		Found, Queued, Duplicates, Skipped, HeldBack int
	}
	for _, tt := range []struct {
		name   string
		settle time.Duration
		want   counts
	}{
		// The ZIP and its re-post, and Huge Pack.zip.001.
		{"settled", -1, counts{Found: 3, Queued: 2, Duplicates: 1}},
		{"still settling", 100 * 365 * 24 * time.Hour, counts{Found: 3, HeldBack: 3}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newPublishWorld(t)
			ctx := context.Background()
			run, err := w.db.CreateRun(ctx, hoard.TriggerManual)
			if err != nil {
				t.Fatal(err)
			}
			deps := Deps{DB: w.db, Logger: discardLogger(), Accounts: oneAccount{w.acc}, SettleTime: tt.settle, MaxSkipAttempts: 3,
				WorkerInterval: time.Hour, Now: time.Now}
			if st := work(t, w, river.Worker[hoard.ScanChannelArgs](newScanChannelWorker(newParts(deps))), hoard.ScanChannelArgs{RunID: run.ID, MapID: w.mapID}); st != rivertype.JobStateCompleted {
				t.Fatalf("scan: %s", st)
			}
			r, err := w.db.FindRun(ctx, run.ID)
			if err != nil {
				t.Fatal(err)
			}
			queued, err := w.db.CountUnfinishedJobs(ctx, hoard.IngestMessageArgs{}.Kind())
			if err != nil {
				t.Fatal(err)
			}
			got := counts{r.ArchivesFound, queued, r.Duplicates, r.Skipped, r.HeldBack}
			if got != tt.want || got.Found != got.Queued+got.Duplicates+got.Skipped+got.HeldBack {
				t.Errorf("got %+v, want %+v (found = queued + duplicates + skipped + held back)", got, tt.want)
			}
		})
	}
}
