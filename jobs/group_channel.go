package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/grouping"
	"github.com/hoard/hoard/store"
	"github.com/riverqueue/river"
)

// GroupChannelWorker groups the packages of one channel: it loads the
// channel's packages, groups and learned rules, lets the grouping engine
// plan, and applies the plan. Runs of one channel are serialised by a
// database lock, so each sees what the previous one committed; a run over an
// unchanged channel changes nothing.
type GroupChannelWorker struct {
	worker[hoard.GroupChannelArgs]
	db  *store.DB
	log *slog.Logger
	// window is Deps.GroupTimeWindow.
	window time.Duration
}

func newGroupChannelWorker(p *parts) *GroupChannelWorker {
	return &GroupChannelWorker{worker: worker[hoard.GroupChannelArgs]{fail: p.fail}, db: p.db, log: p.log, window: p.cfg.GroupTimeWindow}
}

// Timeout implements river.Worker: the first grouping of a large channel
// moves every package (non-HOT updates of indexed rows, about a second per
// few thousand packages), far beyond River's default minute.
func (w *GroupChannelWorker) Timeout(*river.Job[hoard.GroupChannelArgs]) time.Duration {
	return 15 * time.Minute
}

// Work implements river.Worker. A channel that no longer exists cancels the
// job; any other error retries it.
func (w *GroupChannelWorker) Work(ctx context.Context, job *river.Job[hoard.GroupChannelArgs]) error {
	res, err := GroupChannel(ctx, w.db, job.Args.ChannelID, w.window)
	if err != nil {
		return w.finish(ctx, job, err, nil)
	}
	if res != (store.GroupingResult{}) {
		w.log.Info("grouped channel", "channel_id", job.Args.ChannelID, "groups_created", res.GroupsCreated,
			"groups_merged", res.GroupsMerged, "groups_dissolved", res.GroupsDissolved, "groups_renamed", res.GroupsRenamed,
			"packages_moved", res.PackagesMoved, "packages_ungrouped", res.PackagesUngrouped, "conflicts", res.Conflicts)
	}
	return w.finish(ctx, job, river.RecordOutput(ctx, res), nil)
}

// GroupChannel runs the grouping passes over one channel and applies the
// plan, all in one transaction that holds the channel's grouping lock. It
// re-evaluates the automatic groups (grouping.Input.Reevaluate), so that the
// channel's groups depend only on its catalog, not on the order in which
// packages were indexed or runs happened; MANUAL groups stay as they are.
// window is the time-window pass's window (≤ 0: off). ENOTFOUND when the
// channel does not exist.
func GroupChannel(ctx context.Context, db *store.DB, channelID int64, window time.Duration) (store.GroupingResult, error) {
	var res store.GroupingResult
	err := db.InTx(ctx, func(tx *store.DB) error {
		if err := tx.LockChannelGrouping(ctx, channelID); err != nil {
			return err
		}
		ch, err := tx.FindChannelByID(ctx, channelID)
		if err != nil {
			return err
		}
		snap, err := tx.LoadGroupingSnapshot(ctx, channelID, store.SnapshotOptions{AutoGroup: ch.AutoGroupEnabled,
			TimeWindow: window, Reevaluate: true})
		if err != nil {
			return err
		}
		in := groupingInput(snap, ch.AutoGroupEnabled, window)
		in.Reevaluate = true
		plan := groupingPlan(grouping.Compute(in))
		plan.Regroup = in.Reevaluate
		if plan.Empty() {
			return nil
		}
		res, err = tx.ApplyGroupingPlan(ctx, channelID, plan)
		return err
	})
	if err != nil {
		return store.GroupingResult{}, fmt.Errorf("group channel %d: %w", channelID, err)
	}
	return res, nil
}
