package jobs

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gotd/td/bin"
	"github.com/gotd/td/tg"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/emulator"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// partLog records the parts an upload sent (saveBigFilePart), each
// (file id, part) once: a request the client repeated because its answer
// was late is the same part.
type partLog struct {
	mu    sync.Mutex
	seen  map[[2]int64]bool
	parts []int
}

func (l *partLog) match(req bin.Object) bool {
	if r, ok := req.(*tg.UploadSaveBigFilePartRequest); ok {
		l.mu.Lock()
		if k := [2]int64{r.FileID, int64(r.FilePart)}; !l.seen[k] {
			if l.seen == nil {
				l.seen = map[[2]int64]bool{}
			}
			l.seen[k] = true
			l.parts = append(l.parts, r.FilePart)
		}
		l.mu.Unlock()
	}
	return false // records, never fires
}

// take returns the parts sent since the last take (and starts counting
// anew).
func (l *partLog) take() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.parts
	l.parts, l.seen = nil, nil
	return out
}

// TestUploadResumesFromItsStoredPoint: an upload stopped by a long
// FLOOD_WAIT (the job snoozes) keeps its resume point on the part's row;
// the next run of the job — a new worker with a new client, as after a
// restart — continues from it without sending the parts before it again.
// A point the platform no longer holds (its parts expired) ends in
// FILE_PART_X_MISSING and the whole file once more; a point older than
// UploadPointLife is not tried.
func TestUploadResumesFromItsStoredPoint(t *testing.T) {
	t.Parallel()
	const total = bigFile / (512 << 10) // 24 parts
	type run struct {
		State      rivertype.JobState
		Resent     int  // parts sent again that the stored point held
		Sent       int  // parts sent (saveBigFilePart, each file id and part once)
		SendMedia  int  // messages.sendMedia calls
		Identical  bool // the posted document's bytes are the file's
		PointAfter int64
	}
	for _, tc := range []struct {
		name   string
		expire bool          // the emulator's parts expire before the second run
		life   time.Duration // Deps.UploadPointLife of the second run
		lost   int           // sendMedia answers FILE_PART_0_MISSING this many times
		want   func(done int) run
	}{
		{name: "parts lost again after the upload from part 0", life: time.Hour, lost: 2, want: func(done int) run {
			return run{rivertype.JobStateDiscarded, done, total - done + total, 2, false, 0} // the attempt fails; no third upload
		}},
		{name: "resumed", life: time.Hour, want: func(done int) run {
			return run{rivertype.JobStateCompleted, 0, total - done, 1, true, 0}
		}},
		{name: "parts expired on the platform", expire: true, life: time.Hour, want: func(done int) run {
			return run{rivertype.JobStateCompleted, done, total - done + total, 2, true, 0}
		}},
		{name: "point too old to try", life: time.Nanosecond, want: func(done int) run {
			return run{rivertype.JobStateCompleted, done, total, 1, true, 0}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newVaultWorld(t, false, []string{"Big.zip"})
			w.env.Emu.SetPartCaps(0, 0) // the platform's caps: 12 MiB is one part
			ctx := context.Background()
			deps := vaultDeps(t, w)
			deps.SplitThreshold = 16 << 20 // one part
			if st := work(t, w, river.Worker[hoard.IngestMessageArgs](newIngestMessageWorker(newParts(deps))), w.setArgs("Big.zip", 2, "Big.zip")); st != rivertype.JobStateCompleted {
				t.Fatalf("ingest: %s", st)
			}
			log := &partLog{}
			w.env.Emu.InjectFault(emulator.Fault{Method: "upload.saveBigFilePart", Match: log.match})
			w.env.Emu.InjectFault(emulator.Fault{Method: "upload.saveBigFilePart", Error: "FLOOD_WAIT_600", Times: 1,
				Match: func(req bin.Object) bool { return req.(*tg.UploadSaveBigFilePartRequest).FilePart == 16 }})
			args := hoard.UploadPartArgs{TransferID: tr(t, w).ID, PartNo: 0}
			if st := work(t, w, river.Worker[hoard.UploadPartArgs](newUploadPartWorker(newParts(deps))), args); st != rivertype.JobStateScheduled {
				t.Fatalf("the flooded upload's job is %s, want snoozed", st)
			}
			first := log.take()
			part, err := w.db.FindTransferPart(ctx, args.TransferID, 0)
			if err != nil {
				t.Fatal(err)
			}
			done := part.UploadPartsDone // what the platform stores: not the flooded part 16, maybe not some in flight
			if part.UploadFileID == 0 || done < 16-uploadPointParts || done > 16 {
				t.Fatalf("stored point %+v after parts %v", part.UploadPoint, first)
			}

			// The next run: a new worker and client, as after a restart.
			if tc.expire {
				w.env.Emu.ExpireUploadedParts()
			}
			restarted := vaultDeps(t, w)
			restarted.Accounts = oneAccount{w.env.Account(t, w.env.Config("restarted"))}
			restarted.SplitThreshold, restarted.UploadPointLife = 16<<20, tc.life
			if tc.lost > 0 {
				w.env.Emu.InjectFault(emulator.Fault{Method: "messages.sendMedia", Error: "FILE_PART_0_MISSING", Times: tc.lost})
			}
			media := w.env.Emu.Calls("messages.sendMedia")
			st := work(t, w, river.Worker[hoard.UploadPartArgs](newUploadPartWorker(newParts(restarted))), args)
			second := log.take()
			got := run{State: st, Sent: len(second), SendMedia: w.env.Emu.Calls("messages.sendMedia") - media}
			for _, p := range second {
				if p < done {
					got.Resent++
				}
			}
			posted, err := w.db.FindTransferPart(ctx, args.TransferID, 0)
			if err != nil {
				t.Fatal(err)
			}
			got.PointAfter = posted.UploadFileID
			got.Identical = st == rivertype.JobStateCompleted && postedBytesEqual(t, w, int(posted.DestMessageID), 0)
			if want := tc.want(done); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("stopped at %d stored parts; the second run:\n got  %+v\n want %+v", done, got, want)
			}
		})
	}
}

// postedBytesEqual downloads destination post id and compares it with the
// vault's generated file seed.
func postedBytesEqual(t *testing.T, w *publishWorld, id int, seed int64) bool {
	t.Helper()
	ctx := context.Background()
	msgs, err := w.acc.Messages(ctx, w.peer, []int{id})
	if err != nil || len(msgs) != 1 || msgs[0].Document == nil {
		t.Fatalf("post %d: %v, %v", id, msgs, err)
	}
	got := make([]byte, msgs[0].Document.Size)
	if err := w.acc.Download(ctx, messenger.DownloadRequest{Channel: w.peer, MessageID: id, Document: *msgs[0].Document},
		writerAt(got)); err != nil {
		t.Fatal(err)
	}
	want := make([]byte, bigFile)
	emulator.GenerateBytes(seed, 0, want)
	return bytes.Equal(got, want)
}

// writerAt writes into a byte slice.
type writerAt []byte

func (b writerAt) WriteAt(p []byte, off int64) (int, error) { return copy(b[off:], p), nil }

// TestUploadPointKeptWhileUploading: an upload in progress records how far
// the platform stores it before anything fails, so a worker killed in the
// middle (no error path runs) loses at most a few parts.
func TestUploadPointKeptWhileUploading(t *testing.T) {
	t.Parallel()
	w := newVaultWorld(t, false, []string{"Big.zip"})
	w.env.Emu.SetPartCaps(0, 0)
	ctx := context.Background()
	deps := vaultDeps(t, w)
	deps.SplitThreshold = 16 << 20
	if st := work(t, w, river.Worker[hoard.IngestMessageArgs](newIngestMessageWorker(newParts(deps))), w.setArgs("Big.zip", 2, "Big.zip")); st != rivertype.JobStateCompleted {
		t.Fatalf("ingest: %s", st)
	}
	// Part 16 hangs for a while: the parts before it are stored. While it
	// hangs the job does nothing else, so the test may read the row
	// through the test transaction the job writes in.
	hung := make(chan struct{}, 1)
	w.env.Emu.InjectFault(emulator.Fault{Method: "upload.saveBigFilePart", Stall: 3 * time.Second, Times: 1,
		Match: func(req bin.Object) bool {
			if req.(*tg.UploadSaveBigFilePartRequest).FilePart != 16 {
				return false
			}
			select {
			case hung <- struct{}{}:
			default:
			}
			return true
		}})
	args := hoard.UploadPartArgs{TransferID: tr(t, w).ID, PartNo: 0}
	done := make(chan rivertype.JobState, 1)
	go func() {
		done <- work(t, w, river.Worker[hoard.UploadPartArgs](newUploadPartWorker(newParts(deps))), args)
	}()
	<-hung
	time.Sleep(time.Second)
	p, err := w.db.FindTransferPart(ctx, args.TransferID, 0)
	if err != nil {
		t.Fatal(err)
	}
	point := p.UploadPoint
	if st := <-done; st != rivertype.JobStateCompleted {
		t.Fatalf("upload: %s", st)
	}
	if point.UploadFileID == 0 || point.UploadPartsDone < 16-uploadPointParts || point.UploadPartsDone > 16 {
		t.Fatalf("while part 16 hung the row held %+v, want at least %d parts", point, 16-uploadPointParts)
	}
}
