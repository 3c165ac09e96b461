package jobs

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store/storetest"
	"github.com/riverqueue/river/rivertype"
)

// TestAnAttemptInterruptedByShutdownIsNotAFailure: a set's job whose
// context was cancelled (the process stopping) records no failed attempt;
// one whose context ran out (a job timeout) does, though its context is
// spent.
func TestAnAttemptInterruptedByShutdownIsNotAFailure(t *testing.T) {
	db := storetest.NewTx(t)
	ch := &hoard.Channel{PlatformID: 4242, Title: "Source", Kind: hoard.ChannelSource}
	if err := db.UpsertChannel(context.Background(), ch); err != nil {
		t.Fatal(err)
	}
	p := newParts(Deps{DB: db, Logger: discardLogger()})
	for _, tt := range []struct {
		name     string
		ctx      func() context.Context
		recorded int
	}{
		{"shutdown", func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, 0},
		{"job timeout", func() context.Context {
			ctx, cancel := context.WithTimeout(context.Background(), 0)
			defer cancel()
			<-ctx.Done()
			return ctx
		}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := hoard.SkippedPackage{SourceChannelID: ch.ID, SourceMessageID: int64(100 + tt.recorded), FileName: "a.zip",
				Reason: hoard.SkipDownloadFailed}
			row := &rivertype.JobRow{Kind: hoard.IngestMessageArgs{}.Kind(), Attempt: 1, MaxAttempts: 5}
			_ = p.fail.finish(tt.ctx(), row, errors.New("download failed: context canceled"), p.catalog.skipped(rec, 0))
			got, err := db.ListSkippedPackages(context.Background(), "", 0, 100)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, s := range got {
				if s.SourceMessageID == rec.SourceMessageID {
					n++
				}
			}
			if n != tt.recorded {
				t.Fatalf("%d skipped records, want %d", n, tt.recorded)
			}
		})
	}
}

// TestTheScheduledCycleRunsWhenThePanelSays: River's schedule of the
// ingestion cycle is hoard.NextScheduledCycle, which the web's countdown
// shows, from whatever time the leading process starts.
func TestTheScheduledCycleRunsWhenThePanelSays(t *testing.T) {
	jobs := Periodic(time.Hour)
	if len(jobs) != 3 {
		t.Fatalf("%d periodic jobs, want clean-up, recovery and the cycle", len(jobs))
	}
	s := cycleSchedule{time.Hour}
	for _, start := range []time.Time{time.Date(2026, 11, 29, 11, 35, 25, 0, time.UTC), time.Date(2026, 11, 29, 11, 59, 59, 0, time.UTC)} {
		if got, want := s.Next(start), hoard.NextScheduledCycle(start, time.Hour); !got.Equal(want) || !want.Equal(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)) {
			t.Errorf("started %s: next cycle %s, want %s", start, got, want)
		}
	}
}
