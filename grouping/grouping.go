package grouping

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Source names the signal that formed a group. The values equal the root
// package's GroupingSource values, so the store converts with a plain type
// conversion.
type Source string

// Grouping sources, one per signal.
const (
	SourceAlbum   Source = "ALBUM"
	SourceManual  Source = "MANUAL"
	SourceTime    Source = "AUTO_TIME"
	SourcePattern Source = "AUTO_PATTERN"
	SourceCreator Source = "AUTO_CREATOR"
	SourceReply   Source = "AUTO_REPLY"
	SourceZip     Source = "AUTO_ZIP"
	SourceCaption Source = "AUTO_CAPTION"
)

// RuleKind is what a learned rule compares.
type RuleKind string

// Rule kinds.
const (
	// RulePrefix matches a package whose normalised file name starts with
	// the normalised pattern.
	RulePrefix RuleKind = "PREFIX"
	// RuleCreator matches a package whose normalised creator equals the
	// normalised pattern.
	RuleCreator RuleKind = "CREATOR"
)

// Minimum member counts for a new group (SPEC limits). A single package may
// still join an existing group with the same key.
const (
	MinAlbum   = 2
	MinTime    = 2
	MinPattern = 2
	MinCreator = 3
	MinReply   = 2
	MinZip     = 2
	MinCaption = 2
)

// Package is one package of the channel, grouped or not.
type Package struct {
	ID       int64
	FileName string
	Creator  string
	// PostedAt is when the source message was posted, never when hoard
	// indexed it; the zero time keeps the package out of the time window.
	PostedAt         time.Time
	AlbumID          int64 // 0 = not part of an album
	SourceMessageID  int64
	ReplyToMessageID int64 // 0 = not a reply
	Caption          string
	// Paths are paths inside the archive; the first few are enough.
	Paths   []string
	GroupID int64 // 0 = ungrouped
	// KeepUngrouped marks a package a user took out of its group: no pass
	// places it again, or every run would undo the user's decision.
	KeepUngrouped bool
}

// Group is an existing group of the channel. Key is the value the forming
// signal computed (album id, pattern, reply root, ...); manual groups have
// none.
type Group struct {
	ID     int64
	Name   string
	Source Source
	Key    string
}

// Rule is a learned rule: packages it matches belong to GroupID.
type Rule struct {
	ID         int64
	GroupID    int64
	Kind       RuleKind
	Pattern    string
	Confidence float64
}

// Input is everything Compute needs about one channel.
type Input struct {
	// Packages are all packages of the channel; IDs must be unique (later
	// duplicates of an ID are ignored).
	Packages []Package
	// Groups are the channel's existing groups. A package whose GroupID is
	// not among them still counts as grouped.
	Groups []Group
	// Rules are the channel's learned rules; rules of unknown groups are
	// ignored.
	Rules []Rule
	// AutoGroupEnabled is the channel flag; when false only albums are
	// grouped.
	AutoGroupEnabled bool
	// TimeWindow is AUTO_GROUP_TIME_WINDOW_MINUTES; ≤ 0 disables the time
	// window pass.
	TimeWindow time.Duration
	// Reevaluate places the packages of automatic groups (every source but
	// MANUAL) again, as if they were ungrouped, so that the groups depend
	// only on the catalog and not on the order in which packages arrived:
	// the plan may then move them (Joins, NewGroups), take them out
	// (Ungroup), rename and re-key groups (Renames) and dissolve automatic
	// groups it no longer continues (Dissolve). The caller must load the
	// fields of those packages as of ungrouped ones. MANUAL groups, groups
	// unknown to Groups, and packages marked KeepUngrouped stay as they are.
	Reevaluate bool
}

// NewGroup is a group to create with its first members.
type NewGroup struct {
	Name       string
	Source     Source
	Key        string
	PackageIDs []int64 // ascending
}

// Join moves ungrouped packages (with Input.Reevaluate also packages of
// automatic groups) into an existing group.
type Join struct {
	GroupID    int64
	PackageIDs []int64 // ascending
}

// Conflict is one GROUPING_CONFLICT: packages of existing groups match learned
// rules of another group. There is one per unordered pair of groups.
type Conflict struct {
	GroupA, GroupB int64    // GroupA < GroupB
	PackageIDs     []int64  // ascending
	Patterns       []string // the matched rules' patterns, sorted, distinct
}

// Key identifies the conflict across runs ("GROUPING_CONFLICT:A:B"), so the
// caller can skip a notification that already exists for the same pair.
func (c Conflict) Key() string {
	return "GROUPING_CONFLICT:" + strconv.FormatInt(c.GroupA, 10) + ":" + strconv.FormatInt(c.GroupB, 10)
}

// Merge folds existing group From (with all its packages) into Into. Only
// the time window merges: a package posted between two AUTO_TIME groups
// bridges them into one chain, as if the packages had arrived together.
type Merge struct {
	From, Into int64
}

// Rename gives an automatic group the name and key of the group it now is
// (Input.Reevaluate).
type Rename struct {
	GroupID   int64
	Name, Key string
}

// Plan is what Compute decided. NewGroups are in pass order, then key order;
// Joins are by group id; Merges by From; Conflicts by (GroupA, GroupB);
// Ungroup, Renames and Dissolve (only with Input.Reevaluate) by id. Joins
// are applied before merges.
type Plan struct {
	NewGroups []NewGroup
	Joins     []Join
	Merges    []Merge
	Conflicts []Conflict
	// Ungroup are packages of automatic groups that belong to no group now.
	Ungroup []int64
	Renames []Rename
	// Dissolve are automatic groups left without members.
	Dissolve []int64
}

// Empty reports whether the plan changes nothing and reports nothing.
func (p Plan) Empty() bool {
	return len(p.NewGroups) == 0 && len(p.Joins) == 0 && len(p.Merges) == 0 && len(p.Conflicts) == 0 &&
		len(p.Ungroup) == 0 && len(p.Renames) == 0 && len(p.Dissolve) == 0
}

// pass is one grouping signal. always marks passes that run even when the
// channel's AutoGroupEnabled flag is false.
type pass struct {
	name   string
	always bool
	run    func(*state)
}

// passes is THE order of the grouping passes; see the package doc for why.
var passes = []pass{
	{name: "album", always: true, run: albumPass},
	{name: "rules", run: rulesPass},
	{name: "reply", run: replyPass},
	{name: "caption", run: captionPass},
	{name: "zip", run: zipPass},
	{name: "time", run: timePass},
	{name: "pattern", run: patternPass},
	{name: "design", run: designPass},
	{name: "creator", run: creatorPass},
}

// Compute returns the grouping plan of one channel. It never moves a package
// that already has a group and never modifies in. It is deterministic: the order of the input
// slices does not matter.
func Compute(in Input) Plan {
	s := newState(in)
	for _, p := range passes {
		if p.always || in.AutoGroupEnabled {
			p.run(s)
		}
	}
	plan := Plan{}
	if s.cur != nil {
		plan.Renames, plan.Ungroup, plan.Dissolve = s.reconcile()
	}
	plan.NewGroups, plan.Joins, plan.Merges, plan.Conflicts = s.newGroups, s.joinList(), s.mergeList(), s.conflicts()
	return plan
}

// held marks a package no pass may place (Package.KeepUngrouped).
const held = math.MinInt64

type groupKey struct {
	src Source
	key string
}

// state is the work in progress of one Compute call.
type state struct {
	pkgs   []Package // sorted by ID, distinct IDs
	groups map[int64]Group
	// byKey finds the existing group (lowest id) of a source and key.
	byKey map[groupKey]int64
	// keyed marks the sources with a group in byKey.
	keyed map[Source]bool
	// assigned is each package's group: > 0 an existing group, < 0 the new
	// group -(index+1) or held, 0 still ungrouped.
	assigned  []int64
	joins     map[int64][]int64
	merges    map[int64]int64 // from → into
	newGroups []NewGroup
	// newMembers are the package indexes of each new group.
	newMembers [][]int
	// cur is, with Input.Reevaluate, each package's automatic group being
	// re-evaluated (0 = none); nil otherwise.
	cur    []int64
	window time.Duration
	rules  *ruleSet

	norm []string // normalised base file names, filled lazily
	// creatorIDs number each package's normalised creator (0 = none, -1 =
	// not looked up yet; see creatorID) and creatorNames name the numbers.
	creatorIDs                  []int32
	creatorNames                []string
	creatorByRaw, creatorByNorm map[string]int32
	// keys holds keyPassIf's keys and next chains the keys of a bucket;
	// scratch, reused by every pass.
	next []int32
	keys []keyAt
	// replies resolves reply chains, set by replyPass when there are any.
	replies *replyRoots
}

func newState(in Input) *state {
	// The store usually hands packages over in ID order: then no copy.
	pkgs := in.Packages
	if !slices.IsSortedFunc(pkgs, func(a, b Package) int {
		if a.ID > b.ID {
			return 1
		}
		return -1 // equal IDs count as unsorted, so duplicates are removed
	}) {
		pkgs = slices.Clone(pkgs)
		slices.SortFunc(pkgs, comparePackages)
		pkgs = slices.CompactFunc(pkgs, func(a, b Package) bool { return a.ID == b.ID })
	}

	s := &state{
		pkgs:     pkgs,
		groups:   make(map[int64]Group, len(in.Groups)),
		byKey:    make(map[groupKey]int64, len(in.Groups)),
		keyed:    map[Source]bool{},
		assigned: make([]int64, len(pkgs)),
		joins:    map[int64][]int64{},
		merges:   map[int64]int64{},
		window:   in.TimeWindow,
	}
	groups := slices.Clone(in.Groups)
	slices.SortFunc(groups, func(a, b Group) int {
		if c := cmp.Compare(a.ID, b.ID); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(a.Key, b.Key), cmp.Compare(a.Name, b.Name))
	})
	for _, g := range groups {
		if _, ok := s.groups[g.ID]; ok {
			continue
		}
		s.groups[g.ID] = g
		// Re-evaluated groups attract nothing: the passes regroup their
		// packages from scratch and reconcile continues them.
		if g.Key == "" || g.Source == SourceManual || in.Reevaluate {
			continue
		}
		k := groupKey{g.Source, g.Key}
		if old, ok := s.byKey[k]; !ok || g.ID < old {
			s.byKey[k] = g.ID
		}
		s.keyed[g.Source] = true
	}
	if in.Reevaluate {
		s.cur = make([]int64, len(pkgs))
	}
	for i := range pkgs {
		s.assigned[i] = pkgs[i].GroupID
		if s.assigned[i] == 0 && pkgs[i].KeepUngrouped {
			s.assigned[i] = held
		}
		if g, ok := s.groups[pkgs[i].GroupID]; ok && in.Reevaluate && g.Source != SourceManual {
			s.cur[i], s.assigned[i] = g.ID, 0
		}
	}
	s.rules = newRuleSet(in.Rules, s.groups)
	return s
}

// comparePackages orders by ID and breaks ties on content, so duplicates
// collapse to the same survivor whatever the input order.
func comparePackages(a, b Package) int {
	// Early returns, not cmp.Or: cmp.Or evaluates every comparison.
	if c := cmp.Compare(a.ID, b.ID); c != 0 {
		return c
	}
	if c := cmp.Compare(a.SourceMessageID, b.SourceMessageID); c != 0 {
		return c
	}
	if c := cmp.Compare(a.FileName, b.FileName); c != 0 {
		return c
	}
	if c := cmp.Compare(a.GroupID, b.GroupID); c != 0 {
		return c
	}
	return a.PostedAt.Compare(b.PostedAt)
}

func (s *state) join(gid int64, members []int) {
	for _, i := range members {
		s.assigned[i] = gid
		if s.cur == nil || s.cur[i] != gid {
			s.joins[gid] = append(s.joins[gid], s.pkgs[i].ID)
		}
	}
}

func (s *state) create(src Source, key, name string, members []int) {
	ids := make([]int64, len(members))
	ref := -int64(len(s.newGroups) + 1)
	for n, i := range members {
		s.assigned[i] = ref
		ids[n] = s.pkgs[i].ID
	}
	slices.Sort(ids)
	s.newGroups = append(s.newGroups, NewGroup{Name: name, Source: src, Key: key, PackageIDs: ids})
	s.newMembers = append(s.newMembers, slices.Clone(members))
}

func (s *state) joinList() []Join {
	out := make([]Join, 0, len(s.joins))
	for gid, ids := range s.joins {
		slices.Sort(ids)
		out = append(out, Join{GroupID: gid, PackageIDs: ids})
	}
	slices.SortFunc(out, func(a, b Join) int { return cmp.Compare(a.GroupID, b.GroupID) })
	return out
}

// mergedInto is the group gid ends in after the merges planned so far.
func (s *state) mergedInto(gid int64) int64 {
	for {
		into, ok := s.merges[gid]
		if !ok {
			return gid
		}
		gid = into
	}
}

func (s *state) mergeList() []Merge {
	out := make([]Merge, 0, len(s.merges))
	for from := range s.merges {
		out = append(out, Merge{From: from, Into: s.mergedInto(from)})
	}
	slices.SortFunc(out, func(a, b Merge) int { return cmp.Compare(a.From, b.From) })
	return out
}

// keyPass is the shape most signals share: every ungrouped package gets a
// key ("" = none); a key of an existing group of src takes all its packages,
// otherwise at least min packages sharing a key form a new group named by
// name (members in ID order).
func (s *state) keyPass(src Source, min int, key func(i int) string, name func(key string, members []int) string) {
	s.keyPassIf(src, min, func(i int) scopedKey { return scopedKey{key: key(i)} }, name, nil)
}

// scopedPass is keyPass with keys scoped (by creator): the group's key is
// scoped(key, scope).
func (s *state) scopedPass(src Source, min int, key func(i int) scopedKey, name func(key string, members []int) string) {
	s.keyPassIf(src, min, key, name, nil)
}

// scopedKey is a signal's key within a scope (an interned creator, see
// state.creatorIDs); map keys of this type spare joining the two for every
// package, and an int scope hashes cheaper than a string.
type scopedKey struct {
	key   string
	scope int32
}

// keyAt is the key of package i in keyPassIf.
type keyAt struct {
	k scopedKey
	i int32
}

// bucket is the packages of one key of keyPassIf: first and last are
// positions in state.keys, chained through state.next, as most keys hold
// one package and a chain costs no slice.
type bucket struct {
	k           scopedKey
	first, last int32
	n           int
}

// keyPassIf is scopedPass where a new group also needs form(members) when
// form is not nil.
func (s *state) keyPassIf(src Source, min int, key func(i int) scopedKey, name func(key string, members []int) string, form func(members []int) bool) {
	// Keys first, so that the map and the buckets are sized once: growing
	// them cost more than the keys' slice.
	keys := s.keys[:0]
	for i := range s.pkgs {
		if s.assigned[i] == 0 {
			if k := key(i); k.key != "" {
				keys = append(keys, keyAt{k, int32(i)})
			}
		}
	}
	s.keys = keys
	if cap(s.next) < len(keys) {
		s.next = make([]int32, len(keys))
	}
	at := make(map[scopedKey]int32, len(keys))
	buckets := make([]bucket, 0, len(keys))
	for n, ka := range keys {
		k, i := ka.k, int32(n)
		b, ok := at[k]
		if !ok {
			b = int32(len(buckets))
			at[k] = b
			buckets = append(buckets, bucket{k: k, first: i, last: i})
		} else {
			s.next[buckets[b].last] = i
			buckets[b].last = i
		}
		buckets[b].n++
	}
	type entry struct {
		k string // scoped(key, scope)
		b *bucket
	}
	// A bucket too small to form a group matters only when it may join an
	// existing group of src.
	lookup := s.keyed[src]
	var entries []entry
	for j := range buckets {
		if b := &buckets[j]; b.n >= min || lookup {
			entries = append(entries, entry{s.scoped(b.k), b})
		}
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.k, b.k) })
	for _, e := range entries {
		m, k := s.bucketMembers(e.b), e.k
		if gid, ok := s.byKey[groupKey{src, k}]; ok {
			s.join(gid, m)
			continue
		}
		if len(m) >= min && (form == nil || form(m)) {
			s.create(src, k, name(k, m), m)
		}
	}
}

// bucketMembers lists the packages of b in ID order.
func (s *state) bucketMembers(b *bucket) []int {
	m := make([]int, 0, b.n)
	for n := b.first; ; n = s.next[n] {
		m = append(m, int(s.keys[n].i))
		if n == b.last {
			return m
		}
	}
}

// scoped is the key a group of k is stored under (see the function scoped).
func (s *state) scoped(k scopedKey) string {
	if k.scope == 0 {
		return k.key
	}
	return scoped(k.key, s.creatorNames[k.scope])
}

func (s *state) normName(i int) string {
	if s.norm == nil {
		s.norm = make([]string, len(s.pkgs))
	}
	if s.norm[i] == "" && s.pkgs[i].FileName != "" {
		s.norm[i] = normalize(baseName(s.pkgs[i].FileName))
	}
	return s.norm[i]
}

// creatorKey is package i's normalised creator, "" if none.
func (s *state) creatorKey(i int) string { return s.creatorNames[s.creatorID(i)] }

// creatorID numbers package i's normalised creator (0 = none), interning it
// on first use: creators repeat, and every creator-scoped pass compares
// them. Lazily, because a run over a grouped channel looks at few packages.
func (s *state) creatorID(i int) int32 {
	if s.creatorIDs == nil {
		s.creatorIDs = make([]int32, len(s.pkgs))
		for k := range s.creatorIDs {
			s.creatorIDs[k] = -1
		}
		s.creatorNames = []string{""}
		s.creatorByRaw = map[string]int32{"": 0}
		s.creatorByNorm = map[string]int32{"": 0}
	}
	if id := s.creatorIDs[i]; id >= 0 {
		return id
	}
	raw := s.pkgs[i].Creator
	id, ok := s.creatorByRaw[raw]
	if !ok {
		n := normalize(raw)
		if id, ok = s.creatorByNorm[n]; !ok {
			id = int32(len(s.creatorNames))
			s.creatorByNorm[n] = id
			s.creatorNames = append(s.creatorNames, n)
		}
		s.creatorByRaw[raw] = id
	}
	s.creatorIDs[i] = id
	return id
}

func (s *state) members(idx []int) []Package {
	out := make([]Package, len(idx))
	for n, i := range idx {
		out[n] = s.pkgs[i]
	}
	return out
}
