package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/grouping"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"
)

// groupFixture is one channel in a rolled-back transaction with the two
// grouping workers.
type groupFixture struct {
	t     *testing.T
	ctx   context.Context
	db    *store.DB
	ch    *hoard.Channel
	group *rivertest.Worker[hoard.GroupChannelArgs, pgx.Tx]
	learn *rivertest.Worker[hoard.LearnGroupRuleArgs, pgx.Tx]
	seq   int64
	clock time.Time
}

func newGroupFixture(t *testing.T, autoGroup bool) *groupFixture {
	t.Helper()
	f := &groupFixture{t: t, ctx: context.Background(), db: storetest.NewTx(t),
		clock: time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)}
	f.ch = &hoard.Channel{PlatformID: 4242, Title: "Minis", Kind: hoard.ChannelSource}
	f.must(f.db.UpsertChannel(f.ctx, f.ch))
	if !autoGroup {
		_, _, err := f.db.UpdateChannelSettings(f.ctx, f.ch.ID, store.ChannelSettings{AutoGroupEnabled: ptrTo(false)})
		f.must(err)
	}
	deps := Deps{DB: f.db, Logger: discardLogger(), GroupTimeWindow: 5 * time.Minute}
	f.group = rivertest.NewWorker(t, riverpgxv5.New(nil), &river.Config{}, river.Worker[hoard.GroupChannelArgs](newGroupChannelWorker(newParts(deps))))
	f.learn = rivertest.NewWorker(t, riverpgxv5.New(nil), &river.Config{}, river.Worker[hoard.LearnGroupRuleArgs](newLearnGroupRuleWorker(newParts(deps))))
	return f
}

func ptrTo[T any](v T) *T { return &v }

func (f *groupFixture) must(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

// pkg stores a package of the channel, posted an hour after the previous
// one (so that no time window joins them unless a test says so).
func (f *groupFixture) pkg(name string, mutate ...func(*hoard.Package)) int64 {
	f.t.Helper()
	f.seq++
	f.clock = f.clock.Add(time.Hour)
	p := &hoard.Package{FileName: name, FileSize: f.seq, ArchiveType: hoard.ArchiveZIP, ContentHash: fmt.Sprintf("%064x", f.seq),
		SourceChannelID: f.ch.ID, SourceMessageID: 100 + f.seq, SourcePostedAt: f.clock}
	for _, m := range mutate {
		m(p)
	}
	f.must(f.db.CreatePackage(f.ctx, p))
	return p.ID
}

func album(id int64) func(*hoard.Package)   { return func(p *hoard.Package) { p.MediaAlbumID = id } }
func creator(c string) func(*hoard.Package) { return func(p *hoard.Package) { p.Creator = c } }
func postedAt(t time.Time) func(*hoard.Package) {
	return func(p *hoard.Package) { p.SourcePostedAt = t }
}

// run works one group_channel job and returns its result.
func (f *groupFixture) run() store.GroupingResult {
	f.t.Helper()
	res, err := f.group.Work(f.ctx, f.t, f.db.Tx(), hoard.GroupChannelArgs{ChannelID: f.ch.ID}, nil)
	f.must(err)
	if res.Job.State != rivertype.JobStateCompleted {
		f.t.Fatalf("group_channel state = %s", res.Job.State)
	}
	var out store.GroupingResult
	f.must(json.Unmarshal(res.Job.Output(), &out))
	return out
}

// groupOf returns a package's group id (0 = ungrouped).
func (f *groupFixture) groupOf(id int64) int64 {
	f.t.Helper()
	p, err := f.db.FindPackageByID(f.ctx, id)
	f.must(err)
	return p.PackageGroupID
}

func (f *groupFixture) sourceOf(id int64) hoard.GroupingSource {
	f.t.Helper()
	g, err := f.db.FindGroupByID(f.ctx, f.groupOf(id))
	f.must(err)
	return g.GroupingSource
}

// state is every package's group, to compare runs.
func (f *groupFixture) state() map[int64]int64 {
	f.t.Helper()
	snap, err := f.db.LoadGroupingSnapshot(f.ctx, f.ch.ID, store.SnapshotOptions{All: true})
	f.must(err)
	out := map[int64]int64{}
	for _, p := range snap.Packages {
		out[p.ID] = p.GroupID
	}
	return out
}

func (f *groupFixture) conflictNotes() int {
	f.t.Helper()
	n := 0
	for _, note := range storetest.Notifications(f.t, f.db) {
		if note.Type == hoard.NotifyGroupingConflict {
			n++
		}
	}
	return n
}

func TestGroupChannelGroupsAndIsIdempotent(t *testing.T) {
	t.Parallel()
	f := newGroupFixture(t, true)
	a1, a2 := f.pkg("IMG one.zip", album(9)), f.pkg("IMG two.zip", album(9))
	p1, p2 := f.pkg("Mammoth Factory - 2024-01 - Dragon.zip", creator("Mammoth")), f.pkg("Mammoth Factory - 2024-01 - Knight.zip", creator("Mammoth"))
	lone := f.pkg("Something else entirely.zip")

	res := f.run()
	if res.GroupsCreated != 2 || res.PackagesMoved != 4 {
		t.Fatalf("first run = %+v", res)
	}
	if f.groupOf(a1) == 0 || f.groupOf(a1) != f.groupOf(a2) || f.sourceOf(a1) != hoard.GroupAlbum {
		t.Fatal("album not grouped")
	}
	if f.groupOf(p1) == 0 || f.groupOf(p1) != f.groupOf(p2) || f.sourceOf(p1) != hoard.GroupAutoPattern {
		t.Fatal("pattern not grouped")
	}
	if f.groupOf(lone) != 0 {
		t.Fatal("a package without signals was grouped")
	}
	before := f.state()
	if res := f.run(); res != (store.GroupingResult{}) {
		t.Fatalf("second run = %+v, want no change", res)
	}
	if after := f.state(); !mapsEqual(before, after) {
		t.Fatalf("second run changed groups: %v → %v", before, after)
	}
}

func mapsEqual(a, b map[int64]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestGroupChannelGrowsExistingGroups(t *testing.T) {
	t.Parallel()
	burst := time.Date(2023, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		first  []func(f *groupFixture) int64
		later  func(f *groupFixture) int64
		source hoard.GroupingSource
	}{
		{"album", []func(*groupFixture) int64{
			func(f *groupFixture) int64 { return f.pkg("a.zip", album(5)) },
			func(f *groupFixture) int64 { return f.pkg("b.zip", album(5)) },
		}, func(f *groupFixture) int64 { return f.pkg("c.zip", album(5)) }, hoard.GroupAlbum},
		{"pattern", []func(*groupFixture) int64{
			func(f *groupFixture) int64 { return f.pkg("Dragon Forge (Supported).zip") },
			func(f *groupFixture) int64 { return f.pkg("Dragon Forge (Bust).zip") },
		}, func(f *groupFixture) int64 { return f.pkg("Dragon Forge (Base).zip") }, hoard.GroupAutoPattern},
		{"time window", []func(*groupFixture) int64{
			func(f *groupFixture) int64 { return f.pkg("x1.zip", postedAt(burst)) },
			func(f *groupFixture) int64 { return f.pkg("y2.zip", postedAt(burst.Add(time.Minute))) },
		}, func(f *groupFixture) int64 { return f.pkg("z3.zip", postedAt(burst.Add(5*time.Minute))) }, hoard.GroupAutoTime},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newGroupFixture(t, true)
			var first []int64
			for _, mk := range tt.first {
				first = append(first, mk(f))
			}
			f.run()
			g := f.groupOf(first[0])
			if g == 0 || f.groupOf(first[1]) != g || f.sourceOf(first[0]) != tt.source {
				t.Fatalf("first packages not grouped by %s", tt.source)
			}
			late := tt.later(f)
			res := f.run()
			if f.groupOf(late) != g || res.GroupsCreated != 0 || res.PackagesMoved != 1 {
				t.Fatalf("late package in group %d (want %d); run = %+v", f.groupOf(late), g, res)
			}
		})
	}
}

func TestGroupChannelAutoGroupDisabledGroupsAlbumsOnly(t *testing.T) {
	t.Parallel()
	f := newGroupFixture(t, false)
	a1, a2 := f.pkg("one.zip", album(7)), f.pkg("two.zip", album(7))
	p1, p2 := f.pkg("Dragon Forge (Supported).zip"), f.pkg("Dragon Forge (Bust).zip")
	c := []int64{f.pkg("c1.zip", creator("Alice")), f.pkg("c2.zip", creator("Alice")), f.pkg("c3.zip", creator("Alice"))}
	res := f.run()
	if res.GroupsCreated != 1 || f.groupOf(a1) == 0 || f.groupOf(a1) != f.groupOf(a2) {
		t.Fatalf("album not grouped: %+v", res)
	}
	for _, id := range append([]int64{p1, p2}, c...) {
		if f.groupOf(id) != 0 {
			t.Fatalf("package %d grouped with auto-grouping off", id)
		}
	}
}

func TestGroupChannelRemovedPackageStaysUngrouped(t *testing.T) {
	t.Parallel()
	f := newGroupFixture(t, true)
	a, b, c := f.pkg("Dragon Forge (A).zip"), f.pkg("Dragon Forge (B).zip"), f.pkg("Dragon Forge (C).zip")
	f.run()
	g := f.groupOf(a)
	if g == 0 || f.groupOf(c) != g {
		t.Fatal("not grouped")
	}
	_, err := f.db.RemovePackageFromGroup(f.ctx, g, c)
	f.must(err)
	if res := f.run(); res != (store.GroupingResult{}) || f.groupOf(c) != 0 || f.groupOf(b) != g {
		t.Fatalf("after removal: run %+v, c in %d", res, f.groupOf(c))
	}
	// Dissolving releases the rest for good, too.
	_, err = f.db.DissolveGroup(f.ctx, g)
	f.must(err)
	if res := f.run(); res != (store.GroupingResult{}) || f.groupOf(a) != 0 {
		t.Fatalf("after dissolve: run %+v, a in %d", res, f.groupOf(a))
	}
}

func TestManualGroupTrainsRule(t *testing.T) {
	t.Parallel()
	f := newGroupFixture(t, true)
	a, b := f.pkg("Shadow Minis Lich.zip"), f.pkg("Shadow Minis Paladin.zip")
	g, err := f.db.CreateManualGroup(f.ctx, "Shadow Minis", []int64{a, b})
	f.must(err)

	res, err := f.learn.Work(f.ctx, t, f.db.Tx(), hoard.LearnGroupRuleArgs{GroupID: g.ID}, nil)
	f.must(err)
	if res.Job.State != rivertype.JobStateCompleted {
		t.Fatalf("learn_group_rule state = %s", res.Job.State)
	}
	rules, err := f.db.ListGroupRules(f.ctx, g.ID)
	f.must(err)
	if len(rules) != 1 || rules[0].SignalType != hoard.RulePrefix || rules[0].Pattern != "shadow minis" || rules[0].ChannelID != f.ch.ID {
		t.Fatalf("learned rules = %+v", rules)
	}
	var out learnResult
	f.must(json.Unmarshal(res.Job.Output(), &out))
	if out.RuleID != rules[0].ID || out.Pattern != "shadow minis" {
		t.Fatalf("recorded output = %+v", out)
	}
	job := rivertest.RequireInsertedTx[*riverpgxv5.Driver](f.ctx, t, f.db.Tx(), &hoard.GroupChannelArgs{},
		&rivertest.RequireInsertedOpts{Queue: hoard.QueueMaintenance, State: rivertype.JobStateScheduled})
	if job.Args.ChannelID != f.ch.ID {
		t.Fatalf("enqueued group_channel for channel %d", job.Args.ChannelID)
	}

	later := f.pkg("Shadow Minis Wyvern.zip")
	other := f.pkg("Unrelated.zip")
	run := f.run()
	if f.groupOf(later) != g.ID || f.groupOf(other) != 0 || run.PackagesMoved != 1 {
		t.Fatalf("later package in %d (want %d), run %+v", f.groupOf(later), g.ID, run)
	}

	// Learning again (a retry) adds nothing; a deleted group cancels.
	_, err = f.learn.Work(f.ctx, t, f.db.Tx(), hoard.LearnGroupRuleArgs{GroupID: g.ID}, nil)
	f.must(err)
	if rules, _ := f.db.ListGroupRules(f.ctx, g.ID); len(rules) != 1 {
		t.Fatalf("rules after relearning = %+v", rules)
	}
	res, err = f.learn.Work(f.ctx, t, f.db.Tx(), hoard.LearnGroupRuleArgs{GroupID: -1}, nil)
	f.must(err)
	if res.Job.State != rivertype.JobStateCancelled {
		t.Fatalf("unknown group: state %s", res.Job.State)
	}
}

func TestGroupChannelConflictsNotifiedOnce(t *testing.T) {
	t.Parallel()
	f := newGroupFixture(t, true)
	// Two manual groups; the second's rule "dragon" also matches a member
	// of the first. Learning declines such a rule
	// (TestLearnGroupRuleDeclinesAClashingRule); a user may still add it.
	a := f.pkg("Dragon Bust.zip", creator("Zed"))
	b := f.pkg("Knight Base.zip", creator("Zed"))
	g1, err := f.db.CreateManualGroup(f.ctx, "Zed picks", []int64{a, b})
	f.must(err)
	c, d := f.pkg("Dragon Wing.zip"), f.pkg("Dragon Tail.zip")
	g2, err := f.db.CreateManualGroup(f.ctx, "Dragons", []int64{c, d})
	f.must(err)
	_, err = f.learn.Work(f.ctx, t, f.db.Tx(), hoard.LearnGroupRuleArgs{GroupID: g1.ID}, nil)
	f.must(err)
	_, err = f.db.AddGroupingRule(f.ctx, &hoard.GroupingRule{GroupID: g2.ID, Pattern: "dragon", SignalType: hoard.RulePrefix, Confidence: 0.72})
	f.must(err)
	if res := f.run(); res.Conflicts != 1 || f.conflictNotes() != 1 {
		t.Fatalf("first run: %+v, %d notifications", res, f.conflictNotes())
	}
	// More packages in the same conflict: still one notification per pair.
	e := f.pkg("Dragon Claw.zip")
	f.must(f.db.SetPackageGroup(f.ctx, []int64{e}, g1.ID))
	if res := f.run(); res.Conflicts != 0 || f.conflictNotes() != 1 {
		t.Fatalf("second run: %+v, %d notifications", res, f.conflictNotes())
	}
	_, err = f.db.DismissAllNotifications(f.ctx)
	f.must(err)
	if res := f.run(); res.Conflicts != 0 || f.conflictNotes() != 1 {
		t.Fatalf("after dismissal: %+v, %d notifications", res, f.conflictNotes())
	}
}

func TestGroupChannelAfterMerge(t *testing.T) {
	t.Parallel()
	f := newGroupFixture(t, true)
	a, b := f.pkg("Iron Guild Titan.zip"), f.pkg("Iron Guild Hydra.zip")
	src, err := f.db.CreateManualGroup(f.ctx, "Iron Guild", []int64{a, b})
	f.must(err)
	_, err = f.learn.Work(f.ctx, t, f.db.Tx(), hoard.LearnGroupRuleArgs{GroupID: src.ID}, nil)
	f.must(err)
	c, d := f.pkg("x.zip", album(3)), f.pkg("y.zip", album(3))
	f.run()
	target := f.groupOf(c)
	if target == 0 || f.groupOf(d) != target {
		t.Fatal("album not grouped")
	}
	_, err = f.db.MergeGroups(f.ctx, src.ID, target)
	f.must(err)
	later := f.pkg("Iron Guild Golem.zip")
	f.run()
	if f.groupOf(a) != target || f.groupOf(later) != target {
		t.Fatalf("after merge: a in %d, later in %d, want %d", f.groupOf(a), f.groupOf(later), target)
	}
}

func TestGroupChannelUnknownChannelCancels(t *testing.T) {
	t.Parallel()
	f := newGroupFixture(t, true)
	res, err := f.group.Work(f.ctx, t, f.db.Tx(), hoard.GroupChannelArgs{ChannelID: -1}, nil)
	f.must(err)
	if res.Job.State != rivertype.JobStateCancelled {
		t.Fatalf("state = %s", res.Job.State)
	}
}

// TestGroupChannelInsertOpts checks the coalescing schedule: the unique
// bucket is always the one after the insert's, and the job runs at least
// the margin after every insert it absorbed.
func TestGroupChannelInsertOpts(t *testing.T) {
	t.Parallel()
	before := time.Now()
	opts := hoard.GroupChannelArgs{ChannelID: 1}.InsertOpts()
	after := time.Now()
	p := hoard.GroupChannelPeriod
	if hoard.GroupChannelMargin <= 0 || hoard.GroupChannelMargin >= p {
		t.Fatalf("margin %v must be in (0, period %v)", hoard.GroupChannelMargin, p)
	}
	if opts.Queue != hoard.QueueMaintenance || !opts.UniqueOpts.ByArgs || opts.UniqueOpts.ByPeriod != p ||
		slices.Contains(opts.UniqueOpts.ByState, rivertype.JobStateCompleted) {
		t.Fatalf("insert opts = %+v", opts)
	}
	if !opts.ScheduledAt.After(before.Add(hoard.GroupChannelMargin)) && !opts.ScheduledAt.Equal(before.Add(hoard.GroupChannelMargin)) {
		t.Fatalf("scheduled %v, less than the margin after %v", opts.ScheduledAt, before)
	}
	if opts.ScheduledAt.After(after.Add(p + hoard.GroupChannelMargin)) {
		t.Fatalf("scheduled %v, more than period+margin after %v", opts.ScheduledAt, after)
	}
	if b := opts.ScheduledAt.Truncate(p); b != before.Truncate(p).Add(p) && b != after.Truncate(p).Add(p) {
		t.Fatalf("unique bucket %v is not the one after the insert (%v)", b, before.Truncate(p))
	}
	// Two inserts in one transaction coalesce.
	client, err := river.NewClient(riverpgxv5.New(nil), &river.Config{})
	if err != nil {
		t.Fatal(err)
	}
	db := storetest.NewTx(t)
	ctx := context.Background()
	r1, err := client.InsertTx(ctx, db.Tx(), hoard.GroupChannelArgs{ChannelID: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := client.InsertTx(ctx, db.Tx(), hoard.GroupChannelArgs{ChannelID: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r1.Job.ID != r2.Job.ID && r1.Job.ScheduledAt.Truncate(p).Equal(r2.Job.ScheduledAt.Truncate(p)) {
		t.Fatal("two inserts in one bucket were not coalesced")
	}
}

// TestIncrementalSnapshotPlansLikeFull checks the contract of the
// incremental snapshot: planning over the packages it loads gives the same
// new groups and joins as planning over every package of the channel. The
// channel is grouped once, then a second batch interleaved in time (time
// neighbours, reply chains into the first batch) and a few packages taken
// out of their groups arrive.
func TestIncrementalSnapshotPlansLikeFull(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	ch := &hoard.Channel{PlatformID: 4343, Title: "Equivalence", Kind: hoard.ChannelSource}
	if err := db.UpsertChannel(ctx, ch); err != nil {
		t.Fatal(err)
	}
	window := 5 * time.Minute
	seedChannel(t, db, ch.ID, 600, 1)
	if _, err := GroupChannel(ctx, db, ch.ID, window); err != nil {
		t.Fatal(err)
	}
	seedChannel(t, db, ch.ID, 200, 2)
	snap, err := db.LoadGroupingSnapshot(ctx, ch.ID, store.SnapshotOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	removed := 0
	for _, p := range snap.Packages {
		if p.GroupID != 0 && p.ID%41 == 0 {
			if _, err := db.RemovePackageFromGroup(ctx, p.GroupID, p.ID); err != nil {
				t.Fatal(err)
			}
			removed++
		}
	}
	for _, auto := range []bool{true, false} {
		t.Run(fmt.Sprintf("autoGroup=%v", auto), func(t *testing.T) {
			full, err := db.LoadGroupingSnapshot(ctx, ch.ID, store.SnapshotOptions{AutoGroup: auto, TimeWindow: window, All: true})
			if err != nil {
				t.Fatal(err)
			}
			part, err := db.LoadGroupingSnapshot(ctx, ch.ID, store.SnapshotOptions{AutoGroup: auto, TimeWindow: window})
			if err != nil {
				t.Fatal(err)
			}
			want := groupingPlan(grouping.Compute(groupingInput(full, auto, window)))
			got := groupingPlan(grouping.Compute(groupingInput(part, auto, window)))
			if len(part.Packages) >= len(full.Packages) {
				t.Fatalf("incremental snapshot loaded %d of %d packages", len(part.Packages), len(full.Packages))
			}
			if !reflect.DeepEqual(got.NewGroups, want.NewGroups) || !reflect.DeepEqual(got.Joins, want.Joins) {
				t.Fatalf("plans differ:\nincremental %d new groups, %d joins\nfull        %d new groups, %d joins",
					len(got.NewGroups), len(got.Joins), len(want.NewGroups), len(want.Joins))
			}
			if len(want.NewGroups) == 0 || (auto && len(want.Joins) == 0) {
				t.Fatalf("weak test data: %d new groups, %d joins", len(want.NewGroups), len(want.Joins))
			}
			t.Logf("%d of %d packages loaded, %d removed; plan: %d new groups, %d joins",
				len(part.Packages), len(full.Packages), removed, len(want.NewGroups), len(want.Joins))
		})
	}
}

func TestRegisterAddsGroupingWorkers(t *testing.T) {
	t.Parallel()
	workers := river.NewWorkers()
	if err := Register(workers, Deps{DB: storetest.NewTx(t)}); err != nil {
		t.Fatal(err)
	}
	if err := river.AddWorkerSafely(workers, &GroupChannelWorker{}); err == nil {
		t.Error("group_channel was not registered")
	}
	if err := river.AddWorkerSafely(workers, &LearnGroupRuleWorker{}); err == nil {
		t.Error("learn_group_rule was not registered")
	}
}

func TestLearnGroupRuleWithoutCommonGround(t *testing.T) {
	t.Parallel()
	f := newGroupFixture(t, true)
	a, b := f.pkg("Alpha.zip", creator("A")), f.pkg("Beta.zip", creator("B"))
	g, err := f.db.CreateManualGroup(f.ctx, "Mixed", []int64{a, b})
	f.must(err)
	res, err := f.learn.Work(f.ctx, t, f.db.Tx(), hoard.LearnGroupRuleArgs{GroupID: g.ID}, nil)
	f.must(err)
	if rules, _ := f.db.ListGroupRules(f.ctx, g.ID); res.Job.State != rivertype.JobStateCompleted || len(rules) != 0 {
		t.Fatalf("state %s, rules %+v", res.Job.State, rules)
	}
	rivertest.RequireNotInsertedTx[*riverpgxv5.Driver](f.ctx, t, f.db.Tx(), &hoard.GroupChannelArgs{}, nil)
}

func TestLearnGroupRuleCutsLongPrefix(t *testing.T) {
	t.Parallel()
	f := newGroupFixture(t, true)
	long := strings.Repeat("Verylongname ", 60) // 780 characters
	a, b := f.pkg(long+"A.zip"), f.pkg(long+"B.zip")
	g, err := f.db.CreateManualGroup(f.ctx, "Long", []int64{a, b})
	f.must(err)
	res, err := f.learn.Work(f.ctx, t, f.db.Tx(), hoard.LearnGroupRuleArgs{GroupID: g.ID}, nil)
	f.must(err)
	rules, _ := f.db.ListGroupRules(f.ctx, g.ID)
	if res.Job.State != rivertype.JobStateCompleted || len(rules) != 1 || utf8.RuneCountInString(rules[0].Pattern) > 512 ||
		!strings.HasPrefix(rules[0].Pattern, "verylongname verylongname") {
		t.Fatalf("state %s, rules %+v", res.Job.State, rules)
	}
}

// TestLearnGroupRuleDeclinesAClashingRule: grouping two packages by hand
// whose only common ground is a creator whose other packages are grouped
// already learns no rule (it would raise conflicts at once): the group
// records the rule it declined and why.
// Learning it anyway (the page's button adds it) and grouping then raise a
// conflict whose notification names and links both groups; merging them
// makes the notification go away.
func TestLearnGroupRuleDeclinesAClashingRule(t *testing.T) {
	t.Parallel()
	f := newGroupFixture(t, true)
	const forge = "Dragon Forge"
	early := f.clock
	x, y := f.pkg("Orc Warband.rar", creator(forge), postedAt(early)), f.pkg("Knight Shield.7z", creator(forge), postedAt(early.Add(time.Minute)))
	// A group of the user's: the packages of automatic groups follow a
	// learned rule (the engine re-evaluates them), those of manual groups
	// stay and conflict.
	others, err := f.db.CreateManualGroup(f.ctx, "Others", []int64{x, y})
	f.must(err)
	auto := others.ID
	a, b := f.pkg("Dragon_Bust_v2_supported.stl", creator(forge)), f.pkg("Goblin Camp.zip", creator(forge))
	g, err := f.db.CreateManualGroup(f.ctx, "My picks", []int64{a, b})
	f.must(err)
	res, err := f.learn.Work(f.ctx, t, f.db.Tx(), hoard.LearnGroupRuleArgs{GroupID: g.ID}, nil)
	f.must(err)
	rules, err := f.db.ListGroupRules(f.ctx, g.ID)
	f.must(err)
	declined, err := f.db.FindDeclinedRule(f.ctx, g.ID)
	f.must(err)
	if res.Job.State != rivertype.JobStateCompleted || len(rules) != 0 || declined == nil {
		t.Fatalf("state %s, rules %+v, declined %+v", res.Job.State, rules, declined)
	}
	want := store.DeclinedRule{SignalType: hoard.RuleCreator, Pattern: forge,
		Note: "No rule learned: packages by “Dragon Forge” would also match packages of another group (Orc Warband.rar, Knight Shield.7z), which would raise grouping conflicts."}
	if *declined != want {
		t.Fatalf("declined %+v\nwant     %+v", *declined, want)
	}
	var out learnResult
	f.must(json.Unmarshal(res.Job.Output(), &out))
	if out != (learnResult{Note: want.Note}) {
		t.Fatalf("recorded output %+v", out)
	}

	// Learned anyway: the next run reports the conflict, naming both groups.
	_, err = f.db.AddGroupingRule(f.ctx, &hoard.GroupingRule{GroupID: g.ID, Pattern: forge, SignalType: hoard.RuleCreator, Confidence: 0.5})
	f.must(err)
	if run := f.run(); run.Conflicts != 1 {
		t.Fatalf("run after learning anyway: %+v", run)
	}
	notes, err := f.db.ListNotifications(f.ctx, 0, 10)
	f.must(err)
	if len(notes) != 1 {
		t.Fatalf("notifications %+v", notes)
	}
	var ctxData map[string]any
	f.must(json.Unmarshal(notes[0].Context, &ctxData))
	names := []any{ctxData["name_a"], ctxData["name_b"]}
	if !slices.Contains(names, "My picks") || ctxData["group_a"] == nil || ctxData["group_b"] == nil {
		t.Fatalf("conflict context %s", notes[0].Context)
	}
	// Merged: the notification goes away.
	_, err = f.db.MergeGroups(f.ctx, g.ID, auto)
	f.must(err)
	if notes, err := f.db.ListNotifications(f.ctx, 0, 10); err != nil || len(notes) != 0 {
		t.Fatalf("after the merge: %+v, %v", notes, err)
	}
}

// TestGroupChannelArrivalOrder: a channel's groups (names, signals, members)
// depend only on its catalog: the same posts indexed in another order, with
// a grouping run after each, end in the same groups (issue 28).
func TestGroupChannelArrivalOrder(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	type post struct {
		name, caption, creator string
		at                     time.Duration
	}
	posts := []post{
		{"Knight.zip", "Dragon Lord collection", "", 0},
		{"Orc.zip", "", "", 2 * time.Minute},
		{"Wyrm.zip", "dragon lord collection", "", 10 * time.Hour},
		{"Golem.zip", "", "Mammoth", 20 * time.Hour},
		{"Titan.zip", "", "Mammoth", 30 * time.Hour},
		{"Hydra.zip", "", "Mammoth", 40 * time.Hour},
	}
	type group struct {
		Name    string
		Source  hoard.GroupingSource
		Members string
	}
	// Each order in a subtest of its own: its fixture's transaction ends
	// with it (the next one's channel waits for it).
	grow := func(t *testing.T, order []int) []group {
		f := newGroupFixture(t, true)
		for _, i := range order {
			p := posts[i]
			f.pkg(p.name, func(q *hoard.Package) {
				q.SourceMessageID, q.SourcePostedAt = int64(100+i), t0.Add(p.at)
				q.SourceCaption, q.Creator = p.caption, p.creator
			})
			f.run()
		}
		if res := f.run(); res != (store.GroupingResult{}) {
			t.Errorf("a run over the settled channel changed %+v", res)
		}
		groups, _, err := f.db.ListGroups(f.ctx, store.GroupFilter{ChannelID: f.ch.ID}, 0, 0)
		f.must(err)
		var out []group
		for _, g := range groups {
			pkgs, err := f.db.LoadGroupMembers(f.ctx, g.ID)
			f.must(err)
			var names []string
			for _, p := range pkgs {
				names = append(names, p.FileName)
			}
			slices.Sort(names)
			out = append(out, group{g.Name, g.GroupingSource, strings.Join(names, ", ")})
		}
		slices.SortFunc(out, func(a, b group) int { return strings.Compare(a.Members, b.Members) })
		return out
	}
	want := []group{
		{"Mammoth", hoard.GroupAutoCreator, "Golem.zip, Hydra.zip, Titan.zip"},
		{"Dragon Lord collection", hoard.GroupAutoCaption, "Knight.zip, Wyrm.zip"},
	}
	for _, order := range [][]int{{0, 1, 2, 3, 4, 5}, {5, 4, 3, 2, 1, 0}, {2, 0, 4, 1, 5, 3}} {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			if got := grow(t, order); !reflect.DeepEqual(got, want) {
				t.Errorf("groups\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}
