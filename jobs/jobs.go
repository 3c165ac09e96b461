// Package jobs holds one River worker per job kind (XxxWorker for the
// XxxArgs of the root package) and Register, which adds them to a Workers
// bundle with their dependencies.
package jobs

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/riverqueue/river"
)

// Deps are what the workers need.
type Deps struct {
	DB     *store.DB
	Logger *slog.Logger
	// KeepDismissedNotifications is how long dismissed notifications are
	// kept before clean-up removes them.
	KeepDismissedNotifications time.Duration
	// GroupTimeWindow is AUTO_GROUP_TIME_WINDOW_MINUTES: packages posted
	// this close to each other form an AUTO_TIME group. 0 means the default
	// of 5 minutes; a negative value turns the time-window pass off.
	GroupTimeWindow time.Duration
}

// Register adds every worker kind to workers.
func Register(workers *river.Workers, deps Deps) error {
	if deps.DB == nil {
		return fmt.Errorf("jobs: register: no database")
	}
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	if deps.KeepDismissedNotifications == 0 {
		deps.KeepDismissedNotifications = 30 * 24 * time.Hour
	}
	if deps.GroupTimeWindow == 0 {
		deps.GroupTimeWindow = 5 * time.Minute
	}
	if err := river.AddWorkerSafely(workers, &CleanupWorker{deps: deps}); err != nil {
		return fmt.Errorf("jobs: register: %w", err)
	}
	if err := river.AddWorkerSafely(workers, &GroupChannelWorker{deps: deps}); err != nil {
		return fmt.Errorf("jobs: register: %w", err)
	}
	if err := river.AddWorkerSafely(workers, &LearnGroupRuleWorker{deps: deps}); err != nil {
		return fmt.Errorf("jobs: register: %w", err)
	}
	if err := river.AddWorkerSafely(workers, &AuditWorker{deps: deps}); err != nil {
		return fmt.Errorf("jobs: register: %w", err)
	}
	return nil
}

// Periodic returns the periodic jobs of the worker role.
func Periodic() []*river.PeriodicJob {
	return []*river.PeriodicJob{
		river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
			func() (river.JobArgs, *river.InsertOpts) { return hoard.CleanupArgs{}, nil },
			&river.PeriodicJobOpts{ID: "cleanup", RunOnStart: true}),
	}
}
