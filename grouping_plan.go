package hoard

import "time"

// The types below carry the grouping engine's input and output between the
// store and the grouping job. They mirror the grouping package's Input and
// Plan field by field, so that the store never imports the engine (DESIGN:
// store imports the root only); the job converts.

// GroupingPackage is what the grouping engine knows about one package.
// AlbumID, Caption and Paths are loaded only for packages a pass may still
// place (ungrouped and not KeepUngrouped, and when the engine re-evaluates
// automatic groups the packages of those too); FileName and Creator of grouped
// packages only when the channel has learned rules (the conflict check is
// their only reader) or the caller asked for everything. Grouped packages take part in the time-window and
// reply-chain passes by the other fields.
type GroupingPackage struct {
	ID               int64
	FileName         string
	Creator          string
	PostedAt         time.Time // source post time; zero when unknown
	AlbumID          int64
	SourceMessageID  int64
	ReplyToMessageID int64
	Caption          string
	Paths            []string // the first GroupingPathLimit paths inside the archive
	GroupID          int64    // 0 = ungrouped
	KeepUngrouped    bool     // a user took it out of a group: never placed again
}

// GroupingPathLimit is how many archive paths per package the grouping job
// loads: enough to find the dominant root folder.
const GroupingPathLimit = 50

// GroupingSnapshot is one channel's grouping state: all its packages (by id),
// its groups and its learned rules.
type GroupingSnapshot struct {
	Packages []GroupingPackage
	Groups   []PackageGroup
	Rules    []GroupingRule
}

// GroupingPlan is what the grouping engine decided for one channel; the
// store applies it in one transaction.
type GroupingPlan struct {
	NewGroups []NewGroupSpec
	Joins     []GroupJoin
	Merges    []GroupMerge
	Conflicts []GroupConflict
	// Ungroup are packages of automatic groups that belong to no group now.
	Ungroup []int64
	// Renames give automatic groups a new name and key.
	Renames []GroupRename
	// Dissolve are automatic groups left without members.
	Dissolve []int64
	// Regroup marks the plan of a re-evaluation: its new groups and joins
	// may move packages out of automatic groups. Without it only ungrouped
	// packages move.
	Regroup bool
}

// Empty reports whether the plan changes nothing and reports nothing.
func (p GroupingPlan) Empty() bool {
	return len(p.NewGroups) == 0 && len(p.Joins) == 0 && len(p.Merges) == 0 && len(p.Conflicts) == 0 &&
		len(p.Ungroup) == 0 && len(p.Renames) == 0 && len(p.Dissolve) == 0
}

// GroupRename gives automatic group GroupID the name and grouping key of the
// group it has become.
type GroupRename struct {
	GroupID   int64
	Name, Key string
}

// GroupMerge folds group From, with its packages and rules, into group Into.
type GroupMerge struct {
	From, Into int64
}

// NewGroupSpec is a group to create with its first members, ungrouped
// packages or packages of automatic groups. Key is the
// forming signal's key; a group of the same channel, source and key that
// exists already is joined instead of duplicated.
type NewGroupSpec struct {
	Name       string
	Source     GroupingSource
	Key        string
	PackageIDs []int64
}

// GroupJoin moves ungrouped packages, or packages of automatic groups, into
// an existing group.
type GroupJoin struct {
	GroupID    int64
	PackageIDs []int64
}

// GroupConflict is one GROUPING_CONFLICT: packages of one group match learned
// rules of another. Key identifies the pair across runs and is the
// notification's de-duplication key; GroupA < GroupB.
type GroupConflict struct {
	Key            string
	GroupA, GroupB int64
	PackageIDs     []int64
	Patterns       []string
}
