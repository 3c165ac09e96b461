package jobs

import (
	"context"
	"fmt"
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
	river.WorkerDefaults[hoard.GroupChannelArgs]
	deps Deps
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
	res, err := GroupChannel(ctx, w.deps.DB, job.Args.ChannelID, w.deps.GroupTimeWindow)
	if err != nil {
		return jobOutcome(err)
	}
	if res != (store.GroupingResult{}) {
		w.deps.Logger.Info("grouped channel", "channel_id", job.Args.ChannelID, "groups_created", res.GroupsCreated,
			"groups_merged", res.GroupsMerged, "groups_dissolved", res.GroupsDissolved, "groups_renamed", res.GroupsRenamed,
			"packages_moved", res.PackagesMoved, "packages_ungrouped", res.PackagesUngrouped, "conflicts", res.Conflicts)
	}
	return river.RecordOutput(ctx, res)
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

// groupingPackages converts the store's packages to the engine's (the two
// types have the same fields, so a conversion copies them all: a field
// added to one and not the other stops the build here).
func groupingPackages(in []hoard.GroupingPackage) []grouping.Package {
	out := make([]grouping.Package, len(in))
	for i, p := range in {
		out[i] = grouping.Package(p)
	}
	return out
}

// groupingInput converts a channel's snapshot to the engine's input.
func groupingInput(s *hoard.GroupingSnapshot, autoGroup bool, window time.Duration) grouping.Input {
	in := grouping.Input{
		Packages:         groupingPackages(s.Packages),
		Groups:           make([]grouping.Group, len(s.Groups)),
		Rules:            make([]grouping.Rule, len(s.Rules)),
		AutoGroupEnabled: autoGroup,
		TimeWindow:       window,
	}
	for i, g := range s.Groups {
		in.Groups[i] = grouping.Group{ID: g.ID, Name: g.Name, Source: grouping.Source(g.GroupingSource), Key: g.GroupingKey}
	}
	for i, r := range s.Rules {
		in.Rules[i] = grouping.Rule{ID: r.ID, GroupID: r.GroupID, Kind: grouping.RuleKind(r.SignalType),
			Pattern: r.Pattern, Confidence: r.Confidence}
	}
	return in
}

// groupingPlan converts the engine's plan to the store's.
func groupingPlan(p grouping.Plan) hoard.GroupingPlan {
	var out hoard.GroupingPlan
	for _, g := range p.NewGroups {
		out.NewGroups = append(out.NewGroups, hoard.NewGroupSpec{Name: g.Name, Source: hoard.GroupingSource(g.Source),
			Key: g.Key, PackageIDs: g.PackageIDs})
	}
	for _, j := range p.Joins {
		out.Joins = append(out.Joins, hoard.GroupJoin(j))
	}
	for _, m := range p.Merges {
		out.Merges = append(out.Merges, hoard.GroupMerge(m))
	}
	out.Ungroup, out.Dissolve = p.Ungroup, p.Dissolve
	for _, r := range p.Renames {
		out.Renames = append(out.Renames, hoard.GroupRename(r))
	}
	for _, c := range p.Conflicts {
		out.Conflicts = append(out.Conflicts, hoard.GroupConflict{Key: c.Key(), GroupA: c.GroupA, GroupB: c.GroupB,
			PackageIDs: c.PackageIDs, Patterns: c.Patterns})
	}
	return out
}
