package grouping

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestPassOrderIsDocumented pins the order; change it together with the
// package doc.
func TestPassOrderIsDocumented(t *testing.T) {
	var got []string
	for _, p := range passes {
		got = append(got, p.name)
	}
	want := []string{"album", "rules", "reply", "caption", "zip", "time", "pattern", "design", "creator"}
	if !slices.Equal(got, want) {
		t.Fatalf("passes = %v, want %v", got, want)
	}
	for _, p := range passes {
		if p.always != (p.name == "album") {
			t.Errorf("pass %s: always = %v", p.name, p.always)
		}
	}
}

// signal gives three packages one grouping signal. Without any signal the
// packages have nothing in common.
type signal struct {
	name  string
	apply func(p *Package)
}

const ruleGroup = 500

var signals = []signal{
	{"album", func(p *Package) { p.AlbumID = 77 }},
	{"rules", func(p *Package) { p.FileName = "Zeta " + p.FileName }},
	{"reply", func(p *Package) {
		if p.ID != 1 {
			p.ReplyToMessageID = 10
		}
	}},
	{"caption", func(p *Package) { p.Caption = "Dragon Lord collection" }},
	{"zip", func(p *Package) { p.Paths = []string{"Titan Pack/a.stl", "Titan Pack/b.stl"} }},
	{"time", func(p *Package) { p.PostedAt = at(float64(p.ID)) }},
	{"pattern", func(p *Package) { p.FileName = p.FileName[:len(p.FileName)-4] + " - 2024-01.zip" }},
	// Variants of one design: "Kraken v1", "Kraken v2", ...
	{"design", func(p *Package) {
		p.FileName = strings.Replace(p.FileName, fmt.Sprintf("q%dx", p.ID), fmt.Sprintf("Kraken v%d", p.ID), 1)
	}},
	{"creator", func(p *Package) { p.Creator = "Mammoth" }},
}

var signalSource = map[string]Source{
	"album": SourceAlbum, "reply": SourceReply, "caption": SourceCaption, "zip": SourceZip,
	"pattern": SourcePattern, "time": SourceTime, "design": SourcePattern, "creator": SourceCreator,
}

func signalInput(names ...string) Input {
	in := Input{
		AutoGroupEnabled: true,
		TimeWindow:       5 * time.Minute,
		Groups:           []Group{{ID: ruleGroup, Name: "Zeta", Source: SourceManual}},
		Rules:            []Rule{{ID: 1, GroupID: ruleGroup, Kind: RulePrefix, Pattern: "zeta", Confidence: 1}},
	}
	for id := int64(1); id <= 3; id++ {
		p := Package{
			ID:              id,
			FileName:        fmt.Sprintf("q%dx.zip", id),
			SourceMessageID: id * 10,
			PostedAt:        t0.Add(time.Duration(id) * 24 * time.Hour),
		}
		for _, n := range names {
			for _, s := range signals {
				if s.name == n {
					s.apply(&p)
				}
			}
		}
		in.Packages = append(in.Packages, p)
	}
	return in
}

// wantFor is the plan when signal name wins all three packages.
func wantFor(name string) Plan {
	if name == "rules" {
		return Plan{Joins: []Join{{GroupID: ruleGroup, PackageIDs: ids(1, 2, 3)}}}
	}
	return Plan{NewGroups: []NewGroup{{Source: signalSource[name], PackageIDs: ids(1, 2, 3)}}}
}

func stripNames(p Plan) Plan {
	for i := range p.NewGroups {
		p.NewGroups[i].Name, p.NewGroups[i].Key = "", ""
	}
	return p
}

func TestEachSignalAlone(t *testing.T) {
	for _, s := range signals {
		t.Run(s.name, func(t *testing.T) {
			checkPlan(t, stripNames(Compute(signalInput(s.name))), wantFor(s.name))
		})
	}
	t.Run("none", func(t *testing.T) { checkPlan(t, Compute(signalInput()), Plan{}) })
}

// TestPassOrder: three packages matching two signals land in the group of
// the signal whose pass comes first, for every pair of signals.
func TestPassOrder(t *testing.T) {
	for i, first := range signals {
		for _, later := range signals[i+1:] {
			t.Run(first.name+"_before_"+later.name, func(t *testing.T) {
				checkPlan(t, stripNames(Compute(signalInput(first.name, later.name))), wantFor(first.name))
				// The order of the signals in the input does not matter.
				checkPlan(t, stripNames(Compute(signalInput(later.name, first.name))), wantFor(first.name))
			})
		}
	}
}

func TestAutoGroupDisabled(t *testing.T) {
	all := make([]string, len(signals))
	for i, s := range signals {
		all[i] = s.name
	}
	t.Run("albums still group", func(t *testing.T) {
		in := signalInput(all...)
		in.AutoGroupEnabled = false
		checkPlan(t, stripNames(Compute(in)), wantFor("album"))
	})
	t.Run("nothing else groups", func(t *testing.T) {
		in := signalInput(all[1:]...)
		in.AutoGroupEnabled = false
		checkPlan(t, Compute(in), Plan{})
	})
}

// TestKeepUngrouped: a package a user took out of a group stays out, whatever
// it matches; the others group without it.
func TestKeepUngrouped(t *testing.T) {
	all := make([]string, len(signals))
	for i, s := range signals {
		all[i] = s.name
	}
	in := signalInput(all...)
	in.Packages[1].KeepUngrouped = true
	checkPlan(t, stripNames(Compute(in)), Plan{NewGroups: []NewGroup{{Source: SourceAlbum, PackageIDs: ids(1, 3)}}})
	// Even a single package with the key of an existing group stays out.
	in = Input{
		AutoGroupEnabled: true,
		Groups:           []Group{{ID: 4, Source: SourceCreator, Key: "mammoth"}},
		Packages:         []Package{{ID: 1, Creator: "Mammoth", KeepUngrouped: true}},
	}
	checkPlan(t, Compute(in), Plan{})
}

// TestGroupsGrow: one new package with the key of an existing automatic
// group joins it, for every keyed source.
func TestGroupsGrow(t *testing.T) {
	tests := []struct {
		name  string
		group Group
		pkg   Package
	}{
		{"album", Group{Source: SourceAlbum, Key: "77"}, Package{AlbumID: 77}},
		{"reply", Group{Source: SourceReply, Key: "10"}, Package{ReplyToMessageID: 10}},
		{"caption", Group{Source: SourceCaption, Key: "collection dragon lord"}, Package{Caption: "Dragon Lord collection!"}},
		{"zip", Group{Source: SourceZip, Key: "titan pack"}, Package{Paths: []string{"TITAN PACK/x.stl"}}},
		{"pattern date", Group{Source: SourcePattern, Key: "2024-01|mammoth"}, Package{FileName: "2024-01 x.zip", Creator: "MAMMOTH"}},
		{"pattern prefix", Group{Source: SourcePattern, Key: "project titan"}, Package{FileName: "Project Titan - Arms.zip"}},
		{"creator", Group{Source: SourceCreator, Key: "mammoth"}, Package{Creator: "Mammoth"}},
		{"time", Group{Source: SourceTime, Key: "2024-01-15T12:00:00Z"}, Package{PostedAt: at(3)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.group.ID = 40
			tt.pkg.ID = 2
			tt.pkg.SourceMessageID = 99
			in := Input{
				AutoGroupEnabled: true,
				TimeWindow:       5 * time.Minute,
				Groups:           []Group{tt.group, {ID: 41, Source: tt.group.Source, Key: tt.group.Key}}, // a duplicate: the lowest id wins
				Packages:         []Package{{ID: 1, GroupID: 40, PostedAt: at(0), SourceMessageID: 10}, tt.pkg},
			}
			checkPlan(t, Compute(in), Plan{Joins: []Join{{GroupID: 40, PackageIDs: ids(2)}}})
		})
	}
	t.Run("a group of another source does not attract", func(t *testing.T) {
		in := Input{
			AutoGroupEnabled: true,
			Groups:           []Group{{ID: 40, Source: SourceCaption, Key: "mammoth"}},
			Packages:         []Package{{ID: 2, Creator: "Mammoth"}},
		}
		checkPlan(t, Compute(in), Plan{})
	})
}

func TestConflicts(t *testing.T) {
	manual := func(id int64) Group { return Group{ID: id, Source: SourceManual} }
	t.Run("many packages, one conflict per pair", func(t *testing.T) {
		in := Input{
			AutoGroupEnabled: true,
			Groups:           []Group{manual(1), manual(2)},
			Rules:            []Rule{{ID: 1, GroupID: 2, Kind: RulePrefix, Pattern: "dragon", Confidence: 1}},
		}
		var want []int64
		for id := int64(100); id < 300; id++ {
			in.Packages = append(in.Packages, Package{ID: id, FileName: fmt.Sprintf("Dragon %d.zip", id), GroupID: 1})
			want = append(want, id)
		}
		got := Compute(in)
		checkPlan(t, got, Plan{Conflicts: []Conflict{{GroupA: 1, GroupB: 2, PackageIDs: want, Patterns: []string{"dragon"}}}})
		if k := got.Conflicts[0].Key(); k != "GROUPING_CONFLICT:1:2" {
			t.Errorf("Key = %q", k)
		}
	})
	t.Run("a package in its own rule's group is no conflict", func(t *testing.T) {
		in := Input{
			Groups:   []Group{manual(2)},
			Rules:    []Rule{{ID: 1, GroupID: 2, Kind: RulePrefix, Pattern: "dragon", Confidence: 1}},
			Packages: []Package{{ID: 1, FileName: "Dragon.zip", GroupID: 2}},
		}
		checkPlan(t, Compute(in), Plan{})
	})
	t.Run("joining by a rule is no conflict", func(t *testing.T) {
		in := Input{
			AutoGroupEnabled: true,
			Groups:           []Group{manual(2)},
			Rules:            []Rule{{ID: 1, GroupID: 2, Kind: RulePrefix, Pattern: "dragon", Confidence: 1}},
			Packages:         []Package{{ID: 1, FileName: "Dragon.zip"}, {ID: 2, FileName: "Dragon 2.zip"}},
		}
		checkPlan(t, Compute(in), Plan{Joins: []Join{{GroupID: 2, PackageIDs: ids(1, 2)}}})
	})
	t.Run("rules of two groups and a third group", func(t *testing.T) {
		in := Input{
			AutoGroupEnabled: true,
			Groups:           []Group{manual(3), manual(1), {ID: 2, Source: SourceTime, Key: "k"}},
			Rules: []Rule{
				{ID: 1, GroupID: 1, Kind: RulePrefix, Pattern: "dragon", Confidence: 1},
				{ID: 2, GroupID: 3, Kind: RuleCreator, Pattern: "Mammoth", Confidence: 0.5},
			},
			Packages: []Package{
				{ID: 10, FileName: "Dragon.zip", Creator: "mammoth", GroupID: 2},
				{ID: 11, FileName: "Dragon B.zip", Creator: "Mammoth", GroupID: 2},
				{ID: 12, FileName: "Dragon C.zip", Creator: "Mammoth"}, // joins 1 by the better rule, conflicts with 3
			},
		}
		checkPlan(t, Compute(in), Plan{
			Joins: []Join{{GroupID: 1, PackageIDs: ids(12)}},
			Conflicts: []Conflict{
				{GroupA: 1, GroupB: 2, PackageIDs: ids(10, 11), Patterns: []string{"dragon"}},
				{GroupA: 1, GroupB: 3, PackageIDs: ids(10, 11, 12), Patterns: []string{"Mammoth", "dragon"}},
				{GroupA: 2, GroupB: 3, PackageIDs: ids(10, 11), Patterns: []string{"Mammoth"}},
			},
		})
	})
	t.Run("checked even when auto grouping is off", func(t *testing.T) {
		in := Input{
			Groups:   []Group{manual(1), manual(2)},
			Rules:    []Rule{{ID: 1, GroupID: 2, Kind: RuleCreator, Pattern: "x y", Confidence: 1}},
			Packages: []Package{{ID: 1, Creator: "X_Y", GroupID: 1}},
		}
		checkPlan(t, Compute(in), Plan{Conflicts: []Conflict{{GroupA: 1, GroupB: 2, PackageIDs: ids(1), Patterns: []string{"x y"}}}})
	})
}

func shuffled(in Input, r *rand.Rand) Input {
	out := in
	out.Packages = slices.Clone(in.Packages)
	out.Groups = slices.Clone(in.Groups)
	out.Rules = slices.Clone(in.Rules)
	r.Shuffle(len(out.Packages), func(i, j int) { out.Packages[i], out.Packages[j] = out.Packages[j], out.Packages[i] })
	r.Shuffle(len(out.Groups), func(i, j int) { out.Groups[i], out.Groups[j] = out.Groups[j], out.Groups[i] })
	r.Shuffle(len(out.Rules), func(i, j int) { out.Rules[i], out.Rules[j] = out.Rules[j], out.Rules[i] })
	return out
}

func TestDeterministic(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			in := generate(3000, seed)
			// A second round: existing groups, rules and new arrivals.
			in = apply(in, Compute(in))
			in.Packages = append(in.Packages, generate(300, seed+100).Packages...)
			for i := range in.Packages[len(in.Packages)-300:] {
				in.Packages[len(in.Packages)-300+i].ID += 1_000_000
			}
			want := Compute(in)
			if len(want.NewGroups) == 0 || len(want.Joins) == 0 {
				t.Fatalf("weak test data: %d new groups, %d joins", len(want.NewGroups), len(want.Joins))
			}
			r := rand.New(rand.NewPCG(seed, 99))
			for range 5 {
				if got := Compute(shuffled(in, r)); !reflect.DeepEqual(got, want) {
					t.Fatal("plan differs for shuffled input")
				}
			}
		})
	}
}

// TestFixpoint: applying a plan and planning again changes nothing.
func TestFixpoint(t *testing.T) {
	in := generate(5000, 7)
	first := Compute(in)
	if len(first.NewGroups) == 0 {
		t.Fatal("no groups")
	}
	again := Compute(apply(in, first))
	if len(again.NewGroups) != 0 || len(again.Joins) != 0 {
		t.Fatalf("second run: %d new groups, %d joins; first: %+v", len(again.NewGroups), len(again.Joins), again.NewGroups[:min(3, len(again.NewGroups))])
	}
}

// TestDuplicatePackageIDs: duplicates collapse the same way in any order.
func TestDuplicatePackageIDs(t *testing.T) {
	in := Input{AutoGroupEnabled: true, Packages: []Package{
		{ID: 1, FileName: "a.zip", AlbumID: 5}, {ID: 1, FileName: "b.zip", AlbumID: 5}, {ID: 2, FileName: "c.zip", AlbumID: 5},
	}}
	want := Compute(in)
	slices.Reverse(in.Packages)
	if got := Compute(in); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if len(want.NewGroups) != 1 || !slices.Equal(want.NewGroups[0].PackageIDs, ids(1, 2)) {
		t.Fatalf("plan %+v", want)
	}
}

// FuzzCompute: any channel plans without panicking, independently of input
// order, never moves a grouped package and places a package at most once.
func FuzzCompute(f *testing.F) {
	f.Add("Mammoth Factory - 2024-01 - Dragon.zip", "Dragon Lord collection", "Titan/a.stl", int64(3), int64(5), uint8(0b1111))
	f.Add("Project (A).7z", "", "", int64(0), int64(-1), uint8(0))
	f.Fuzz(func(t *testing.T, name, caption, path string, a, b int64, bits uint8) {
		in := Input{
			AutoGroupEnabled: bits&1 != 0,
			TimeWindow:       time.Duration(a) * time.Second,
			Groups:           []Group{{ID: 1, Source: SourceManual}, {ID: 2, Source: SourceCreator, Key: normalize(caption)}},
			Rules:            []Rule{{ID: 1, GroupID: 1, Kind: RulePrefix, Pattern: name[:len(name)/2], Confidence: float64(b)}},
		}
		for id := int64(1); id <= 8; id++ {
			p := Package{
				ID:               id,
				FileName:         fmt.Sprint(name, id%3),
				Creator:          caption[:len(caption)*int(id%2)],
				Caption:          caption,
				PostedAt:         t0.Add(time.Duration(id*a) * time.Second),
				AlbumID:          (b + id) % 3,
				SourceMessageID:  a + id,
				ReplyToMessageID: (a + id*b) % 11,
				Paths:            []string{path, fmt.Sprint(path, "/", id)},
			}
			if bits&(1<<(id%8)) != 0 && id%3 == 0 {
				p.GroupID = 1 + id%2
			}
			in.Packages = append(in.Packages, p)
		}
		got := Compute(in)
		rev := in
		rev.Packages = slices.Clone(in.Packages)
		slices.Reverse(rev.Packages)
		if again := Compute(rev); !reflect.DeepEqual(got, again) {
			t.Fatalf("order changed the plan:\n%+v\n%+v", got, again)
		}
		seen := map[int64]bool{}
		place := func(id int64) {
			if seen[id] {
				t.Fatalf("package %d placed twice: %+v", id, got)
			}
			seen[id] = true
			if in.Packages[id-1].GroupID != 0 {
				t.Fatalf("grouped package %d moved: %+v", id, got)
			}
		}
		for _, g := range got.NewGroups {
			if g.Name == "" || g.Key == "" {
				t.Fatalf("new group without name or key: %+v", g)
			}
			for _, id := range g.PackageIDs {
				place(id)
			}
		}
		for _, j := range got.Joins {
			for _, id := range j.PackageIDs {
				place(id)
			}
		}
		for _, c := range got.Conflicts {
			if c.GroupA >= c.GroupB || len(c.PackageIDs) == 0 {
				t.Fatalf("bad conflict %+v", c)
			}
		}
	})
}

// TestNamesFromEarliestPost: a new group is named from its first posted
// member whatever the package ids, which follow the order of indexing.
func TestNamesFromEarliestPost(t *testing.T) {
	tests := []struct {
		name  string
		early Package // posted first
		late  Package
		want  NewGroup
	}{
		{"caption", Package{Caption: "Dragon Lord collection!"}, Package{Caption: "dragon lord COLLECTION"},
			NewGroup{Name: "Dragon Lord collection!", Source: SourceCaption, Key: "collection dragon lord"}},
		{"zip", Package{Paths: []string{"Titan Pack/a.stl"}}, Package{Paths: []string{"TITAN PACK/b.stl"}},
			NewGroup{Name: "Titan Pack", Source: SourceZip, Key: "titan pack"}},
		{"pattern", Package{FileName: "Mammoth - 2024-01 - A.zip", Creator: "Mammoth"},
			Package{FileName: "Mammoth - 2024-01 - B.zip", Creator: "MAMMOTH"},
			NewGroup{Name: "Mammoth – 2024-01", Source: SourcePattern, Key: "2024-01|mammoth"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.early.PostedAt, tt.early.SourceMessageID = at(0), 10
			tt.late.PostedAt, tt.late.SourceMessageID = at(60), 20
			for _, lateID := range []int64{1, 3} { // indexed before or after the early post
				tt.early.ID, tt.late.ID = 2, lateID
				want := tt.want
				want.PackageIDs = []int64{min(2, lateID), max(2, lateID)}
				in := Input{AutoGroupEnabled: true, Packages: []Package{tt.early, tt.late}}
				checkPlan(t, Compute(in), Plan{NewGroups: []NewGroup{want}})
			}
		})
	}
	t.Run("creator", func(t *testing.T) {
		var pkgs []Package
		for k, c := range []string{"MAMMOTH", "Mammoth", "mammoth"} {
			pkgs = append(pkgs, Package{ID: int64(3 - k), Creator: c, PostedAt: at(float64(60 * k)), SourceMessageID: int64(10 + k)})
		}
		checkPlan(t, Compute(Input{AutoGroupEnabled: true, Packages: pkgs}),
			Plan{NewGroups: []NewGroup{{Name: "MAMMOTH", Source: SourceCreator, Key: "mammoth", PackageIDs: ids(1, 2, 3)}}})
	})
}

// TestReevaluate: with Input.Reevaluate the packages of automatic groups are
// placed again, so that the groups are those of the catalog grouped at once;
// MANUAL groups and packages kept ungrouped stay as they are.
func TestReevaluate(t *testing.T) {
	tests := []struct {
		name   string
		groups []Group
		pkgs   []Package
		want   Plan
	}{
		{
			name:   "a caption partner takes a package out of a time group, whose rest is ungrouped",
			groups: []Group{{ID: 40, Name: "Knight", Source: SourceTime, Key: "k"}},
			pkgs: []Package{
				{ID: 1, FileName: "Knight.zip", PostedAt: at(0), SourceMessageID: 10, Caption: "Dragon Lord collection", GroupID: 40},
				{ID: 2, FileName: "Orc.zip", PostedAt: at(2), SourceMessageID: 11, GroupID: 40},
				{ID: 3, FileName: "Wyrm.zip", PostedAt: at(600), SourceMessageID: 50, Caption: "dragon lord collection"},
			},
			want: Plan{
				NewGroups: []NewGroup{{Name: "Dragon Lord collection", Source: SourceCaption, Key: "collection dragon lord", PackageIDs: ids(1, 3)}},
				Ungroup:   ids(2),
				Dissolve:  ids(40),
			},
		},
		{
			name:   "a group of the same key continues and is renamed from its first post",
			groups: []Group{{ID: 40, Name: "dragon lord collection", Source: SourceCaption, Key: "collection dragon lord"}},
			pkgs: []Package{
				{ID: 1, PostedAt: at(60), SourceMessageID: 20, Caption: "dragon lord collection", GroupID: 40},
				{ID: 2, PostedAt: at(90), SourceMessageID: 30, Caption: "Dragon Lord collection!", GroupID: 40},
				{ID: 3, PostedAt: at(0), SourceMessageID: 10, Caption: "DRAGON LORD COLLECTION"},
			},
			want: Plan{
				Joins:   []Join{{GroupID: 40, PackageIDs: ids(3)}},
				Renames: []Rename{{GroupID: 40, Name: "DRAGON LORD COLLECTION", Key: "collection dragon lord"}},
			},
		},
		{
			name: "a time group grown from an earlier post is re-keyed; the bridged group is dissolved",
			groups: []Group{
				{ID: 40, Name: "Dragon Head", Source: SourceTime, Key: "2024-01-15T12:10:00Z"},
				{ID: 41, Name: "Dragon Tail", Source: SourceTime, Key: "2024-01-15T12:20:00Z"},
			},
			pkgs: []Package{
				{ID: 1, FileName: "Dragon Head.zip", PostedAt: at(10), SourceMessageID: 11, GroupID: 40},
				{ID: 2, FileName: "Dragon Neck.zip", PostedAt: at(13), SourceMessageID: 12, GroupID: 40},
				{ID: 3, FileName: "Dragon Tail.zip", PostedAt: at(20), SourceMessageID: 14, GroupID: 41},
				{ID: 4, FileName: "Dragon Wing.zip", PostedAt: at(24), SourceMessageID: 15, GroupID: 41},
				{ID: 5, FileName: "Dragon Body.zip", PostedAt: at(17), SourceMessageID: 13},
			},
			want: Plan{
				Joins:    []Join{{GroupID: 40, PackageIDs: ids(3, 4, 5)}},
				Renames:  []Rename{{GroupID: 40, Name: "Dragon", Key: "2024-01-15T12:10:00Z"}},
				Dissolve: ids(41),
			},
		},
		{
			name:   "manual groups and kept-out packages stay",
			groups: []Group{{ID: 40, Name: "Mine", Source: SourceManual}},
			pkgs: []Package{
				{ID: 1, PostedAt: at(0), SourceMessageID: 10, Caption: "Dragon Lord collection", GroupID: 40},
				{ID: 2, PostedAt: at(1), SourceMessageID: 11, Caption: "Dragon Lord collection", KeepUngrouped: true},
				{ID: 3, PostedAt: at(2), SourceMessageID: 12, Caption: "Dragon Lord collection"},
			},
		},
		{
			name:   "a settled channel changes nothing",
			groups: []Group{{ID: 40, Name: "Dragon Lord collection", Source: SourceCaption, Key: "collection dragon lord"}},
			pkgs: []Package{
				{ID: 1, PostedAt: at(0), SourceMessageID: 10, Caption: "Dragon Lord collection", GroupID: 40},
				{ID: 2, PostedAt: at(90), SourceMessageID: 30, Caption: "dragon lord collection", GroupID: 40},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Input{AutoGroupEnabled: true, TimeWindow: 5 * time.Minute, Reevaluate: true, Groups: tt.groups, Packages: tt.pkgs}
			checkPlan(t, Compute(in), tt.want)
		})
	}
}
