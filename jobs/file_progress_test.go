package jobs

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger/messengertest"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// TestFilePhasesOfASplitUpload ingests the seed's generated file over a
// lowered split threshold (four uploaded parts) through the real jobs and
// records, at every phase the code enters, what the worker panel reads
// back from the database (store.ListFilesInFlight): the phases in the
// order the jobs go through them, each naming the file once, the part in
// flight of the four and the bytes the phase has to move.
func TestFilePhasesOfASplitUpload(t *testing.T) {
	w := newPublishWorld(t)
	ctx := context.Background()
	run, err := w.db.CreateRun(ctx, hoard.TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		File        string
		Phase       hoard.FilePhase
		Part, Parts int
		Total       int64
		Run         bool
	}
	var got []seen
	deps := Deps{DB: w.db, Logger: discardLogger(), Accounts: oneAccount{w.acc}, SpoolDir: t.TempDir(),
		SplitThreshold: 1 << 20, MaxSkipAttempts: 1, RetryBase: time.Second}
	deps.observeFile = func(hoard.FileProgress) {
		files, err := w.db.ListFilesInFlight(ctx)
		if err != nil || len(files) != 1 {
			t.Fatalf("files in flight: %+v, %v; want the one", files, err)
		}
		f := files[0]
		got = append(got, seen{f.File, f.Phase, f.Part, f.Parts, f.TotalBytes, f.RunID == run.ID && !f.PhaseStartedAt.IsZero()})
	}
	const msg = 5 // Huge Pack.zip.001, the seed's generated file
	size := int64(messengertest.GeneratedSize)
	args := hoard.IngestMessageArgs{RunID: run.ID, ChannelID: w.source.ID, MessageID: msg, MapID: w.mapID, FileName: "Huge Pack.zip",
		Size: size, Parts: []hoard.SourcePart{{MessageID: msg, Name: "Huge Pack.zip.001", Size: size}}}
	if st := work(t, w, river.Worker[hoard.IngestMessageArgs](newIngestMessageWorker(newParts(deps))), args); st != rivertype.JobStateCompleted {
		t.Fatalf("ingest: %s", st)
	}
	tr, err := w.db.FindTransferBySource(ctx, w.source.ID, msg)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := w.db.ListTransferParts(ctx, tr.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		if st := work(t, w, river.Worker[hoard.UploadPartArgs](newUploadPartWorker(newParts(deps))), hoard.UploadPartArgs{RunID: run.ID, TransferID: tr.ID, PartNo: p.PartNo}); st != rivertype.JobStateCompleted {
			t.Fatalf("part %d: %s", p.PartNo, st)
		}
	}
	if st := work(t, w, river.Worker[hoard.VerifyTransferArgs](newVerifyTransferWorker(newParts(deps))), hoard.VerifyTransferArgs{RunID: run.ID, TransferID: tr.ID}); st != rivertype.JobStateCompleted {
		t.Fatalf("verify: %s", st)
	}
	const name, mib = "Huge Pack.zip", 1 << 20
	last := size - 3*mib
	want := []seen{
		{name, hoard.PhaseDownloading, 0, 0, size, true},
		{name, hoard.PhaseSplitting, 0, 0, 0, true},
		{name, hoard.PhaseUploading, 1, 4, mib, true},
		{name, hoard.PhaseUploading, 2, 4, mib, true},
		{name, hoard.PhaseUploading, 3, 4, mib, true},
		{name, hoard.PhaseUploading, 4, 4, last, true},
		{name, hoard.PhaseVerifying, 0, 0, size, true},
		{name, hoard.PhaseIndexing, 0, 0, 0, true},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("phases:\n got  %+v\n want %+v", got, want)
	}
	if files, err := w.db.ListFilesInFlight(ctx); err != nil || len(files) != 0 {
		t.Errorf("after the jobs ended, files in flight: %+v, %v", files, err)
	}
}
