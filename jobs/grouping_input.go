package jobs

import (
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/grouping"
)

// The conversions between the store's grouping snapshot and the grouping
// engine, shared by group_channel and learn_group_rule.

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
