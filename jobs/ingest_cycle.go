package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// cyclePoll is how often a cycle checks whether its jobs are final.
const cyclePoll = 2 * time.Second

// runJobKinds are the kinds of job that carry a run_id: the run is over when
// none of them is unfinished.
var runJobKinds = []string{hoard.ScanChannelArgs{}.Kind(), hoard.ScanTopicArgs{}.Kind(),
	hoard.IngestMessageArgs{}.Kind(), hoard.UploadPartArgs{}.Kind(), hoard.VerifyTransferArgs{}.Kind()}

// IngestCycleWorker runs IngestCycleArgs: it owns one IngestionRun from
// creation to COMPLETED. Between its fan-out and its completion it snoozes
// (no worker slot held, no attempt spent), so a long cycle costs a query
// every cyclePoll.
type IngestCycleWorker struct {
	worker[hoard.IngestCycleArgs]
	db  *store.DB
	log *slog.Logger
	// interval is WORKER_INTERVAL_MINUTES.
	interval time.Duration
}

func newIngestCycleWorker(p *parts) *IngestCycleWorker {
	return &IngestCycleWorker{worker: worker[hoard.IngestCycleArgs]{fail: p.fail}, db: p.db, log: p.log, interval: p.cfg.WorkerInterval}
}

// Work implements river.Worker. A cycle that fails to start or finish is
// retried soon (its policy): it holds the run.
func (w *IngestCycleWorker) Work(ctx context.Context, job *river.Job[hoard.IngestCycleArgs]) error {
	return w.finish(ctx, job, w.work(ctx, job), nil)
}

func (w *IngestCycleWorker) work(ctx context.Context, job *river.Job[hoard.IngestCycleArgs]) error {
	db := w.db
	trigger := job.Args.Trigger
	if trigger == "" {
		trigger = hoard.TriggerSchedule
	}
	var run *hoard.IngestionRun
	var done bool
	err := db.InTx(ctx, func(tx *store.DB) error {
		var created bool
		var err error
		run, created, err = tx.StartRunForJob(ctx, trigger, job.ID)
		if err != nil || !created {
			return err
		}
		if _, err := tx.FindDestinationChannel(ctx); err != nil {
			done = true
			_, ferr := tx.FinishRun(ctx, run.ID, hoard.RunFailed, "No destination channel is configured: add one under Messenger.")
			return ferr
		}
		maps, err := tx.ListScanMaps(ctx)
		if err != nil {
			return err
		}
		params := make([]river.InsertManyParams, len(maps))
		for i, m := range maps {
			params[i] = river.InsertManyParams{Args: hoard.ScanChannelArgs{RunID: run.ID, MapID: m.ID}}
		}
		if len(params) > 0 {
			if _, err := river.ClientFromContext[pgx.Tx](ctx).InsertManyTx(ctx, tx.Tx(), params); err != nil {
				return fmt.Errorf("fan out scans: %w", err)
			}
		}
		w.log.Info("ingestion cycle started", "run", run.ID, "trigger", trigger, "channels", len(maps))
		return tx.SetRunActivity(ctx, run.ID, hoard.RunActivity{Activity: fmt.Sprintf("Scanning %d channels", len(maps)), Step: "scanning"})
	})
	if err != nil {
		return fmt.Errorf("ingest cycle: start run: %w", err)
	}
	if done || run.Status != hoard.RunRunning {
		return nil
	}
	// Retries due within half an interval (a set's quick first retry) are
	// waited for; later ones belong to later cycles (SPEC rule 12).
	pending, err := db.CountUnfinishedRunJobs(ctx, run.ID, time.Now().Add(w.interval/2), runJobKinds...)
	if err != nil {
		return fmt.Errorf("ingest cycle: %w", err)
	}
	if pending > 0 {
		return river.JobSnooze(cyclePoll)
	}
	return completeTx(ctx, db, job, func(tx *store.DB, _ *river.Client[pgx.Tx]) error {
		if err := tx.SetRunActivity(ctx, run.ID, hoard.RunActivity{Activity: "Integrity audit", Step: "auditing"}); err != nil {
			return err
		}
		res, err := Audit(ctx, tx)
		if err != nil {
			return fmt.Errorf("ingest cycle: audit: %w", err)
		}
		// A scan whose attempts ran out is no notification type of the
		// spec, but must not pass unseen: the run says so.
		failed, err := tx.FailedRunJobErrors(ctx, run.ID, hoard.ScanChannelArgs{}.Kind(), hoard.ScanTopicArgs{}.Kind())
		if err != nil {
			return err
		}
		note := ""
		if len(failed) > 0 {
			note = fmt.Sprintf("%d scan(s) failed after every attempt; the next cycle tries again. Last error: %s",
				len(failed), failed[len(failed)-1])
		}
		finished, err := tx.FinishRun(ctx, run.ID, hoard.RunCompleted, note)
		if err != nil {
			return err
		}
		if finished {
			w.log.Info("ingestion cycle completed", "run", run.ID, "audit", res)
		}
		return nil
	})
}
