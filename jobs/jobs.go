// Package jobs holds one River worker per job kind (XxxWorker for the
// XxxArgs of the root package, in a file named after the kind) and
// Register, which adds them to a Workers bundle. Register builds the parts
// the workers share from Deps (parts: transfers, catalog writes,
// notifications, …), and each worker holds the ones it uses. How every
// kind fails — retry, record, notify — is one table (outcome.go), and
// every Work ends through its finish.
//
// Byte budgets of the preview chosen from an archive (extract_preview):
// a ZIP entry is read with ranged downloads of at most RangedPreviewBudget
// (48 MiB: the archive's index and the entry, in whole download chunks);
// other archives are downloaded whole only up to Deps.PreviewDownloadBudget
// (DefaultPreviewDownloadBudget, 512 MiB), and larger ones fail the
// extraction with a message that says so.
package jobs

import (
	"fmt"
	"time"

	"github.com/hoard/hoard"
	"github.com/riverqueue/river"
)

// Register adds every worker kind to workers, built from deps: the parts
// the workers share are made once here (newParts) and each worker holds
// the ones it uses. Every kind has its failure policy (outcome.go).
func Register(workers *river.Workers, deps Deps) error {
	if deps.DB == nil {
		return fmt.Errorf("jobs: register: no database")
	}
	deps.defaults()
	p := newParts(deps)
	for _, add := range []func() error{
		func() error { return register(workers, newCleanupWorker(p)) },
		func() error { return register(workers, newGroupChannelWorker(p)) },
		func() error { return register(workers, newLearnGroupRuleWorker(p)) },
		func() error { return register(workers, newAuditWorker(p)) },
		func() error { return register(workers, newIngestCycleWorker(p)) },
		func() error { return register(workers, newScanChannelWorker(p)) },
		func() error { return register(workers, newScanTopicWorker(p)) },
		func() error { return register(workers, newIngestMessageWorker(p)) },
		func() error { return register(workers, newUploadPartWorker(p)) },
		func() error { return register(workers, newVerifyTransferWorker(p)) },
		func() error { return register(workers, newRecoverTransfersWorker(p)) },
		func() error { return register(workers, newRescanChannelWorker(p)) },
		func() error { return register(workers, newRepairPackageWorker(p)) },
		func() error { return register(workers, newRetrySkippedWorker(p)) },
		func() error { return register(workers, newDeleteStalePostsWorker(p)) },
		func() error { return register(workers, newManualUploadWorker(p)) },
		func() error { return register(workers, newRebuildFromDestinationWorker(p)) },
		func() error { return register(workers, newJoinChannelWorker(p)) },
		func() error { return register(workers, newAccountLoginWorker(p)) },
		func() error { return register(workers, newAccountSignInWorker(p)) },
		func() error { return register(workers, newExtractPreviewWorker(p)) },
		func() error { return register(workers, newAddBotAdminWorker(p)) },
	} {
		if err := add(); err != nil {
			return fmt.Errorf("jobs: register: %w", err)
		}
	}
	return nil
}

// register adds w to workers once its kind has a failure policy
// (policies): no kind fails in a way nobody declared.
func register[T river.JobArgs](workers *river.Workers, w river.Worker[T]) error {
	var args T
	if _, ok := policies[args.Kind()]; !ok {
		return fmt.Errorf("kind %s has no failure policy", args.Kind())
	}
	return river.AddWorkerSafely(workers, w)
}

// Periodic returns the periodic jobs of the worker role: clean-up hourly,
// the recovery of publications in flight when the worker starts (and
// hourly), and an ingestion cycle every interval (WORKER_INTERVAL_MINUTES;
// none when interval is 0) at hoard.NextScheduledCycle's times.
func Periodic(interval time.Duration) []*river.PeriodicJob {
	out := []*river.PeriodicJob{
		river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
			func() (river.JobArgs, *river.InsertOpts) { return hoard.CleanupArgs{}, nil },
			&river.PeriodicJobOpts{ID: "cleanup", RunOnStart: true}),
		river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
			func() (river.JobArgs, *river.InsertOpts) { return hoard.RecoverTransfersArgs{}, nil },
			&river.PeriodicJobOpts{ID: "recover_transfers", RunOnStart: true}),
	}
	if interval > 0 {
		out = append(out, river.NewPeriodicJob(cycleSchedule{interval},
			func() (river.JobArgs, *river.InsertOpts) {
				return hoard.IngestCycleArgs{Trigger: hoard.TriggerSchedule}, nil
			},
			&river.PeriodicJobOpts{ID: "ingest_cycle"}))
	}
	return out
}

// cycleSchedule runs the ingestion cycle at hoard.NextScheduledCycle: on
// the interval's multiples of wall-clock time, not an interval after the
// leading process started, so the web's countdown is the cycle's real time.
type cycleSchedule struct{ interval time.Duration }

// Next implements river.PeriodicSchedule.
func (s cycleSchedule) Next(now time.Time) time.Time {
	return hoard.NextScheduledCycle(now, s.interval)
}
