package grouping

import (
	"cmp"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestAlbumPass(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		want Plan
	}{
		{
			name: "two packages of an album, named from the caption",
			in: Input{Packages: []Package{
				{ID: 2, FileName: "b.zip", AlbumID: 900, SourceMessageID: 11},
				{ID: 1, FileName: "a.zip", AlbumID: 900, SourceMessageID: 10, Caption: "\n  Dragon Lord set  \nmore"},
			}},
			want: Plan{NewGroups: []NewGroup{{Name: "Dragon Lord set", Source: SourceAlbum, Key: "900", PackageIDs: ids(1, 2)}}},
		},
		{
			name: "no caption: first posted file name without extension",
			in: Input{Packages: []Package{
				{ID: 1, FileName: "Second.part1.rar", AlbumID: 5, SourceMessageID: 20},
				{ID: 2, FileName: "First Model.7z", AlbumID: 5, SourceMessageID: 19},
			}},
			want: Plan{NewGroups: []NewGroup{{Name: "First Model", Source: SourceAlbum, Key: "5", PackageIDs: ids(1, 2)}}},
		},
		{
			name: "a single album package forms nothing",
			in:   Input{Packages: []Package{{ID: 1, FileName: "a.zip", AlbumID: 5}}},
		},
		{
			name: "a single new package joins its existing album group",
			in: Input{
				Packages: []Package{{ID: 1, AlbumID: 5, GroupID: 40}, {ID: 2, FileName: "late.zip", AlbumID: 5}},
				Groups:   []Group{{ID: 40, Name: "Album", Source: SourceAlbum, Key: "5"}},
			},
			want: Plan{Joins: []Join{{GroupID: 40, PackageIDs: ids(2)}}},
		},
		{
			name: "album id 0 is no album",
			in:   Input{Packages: []Package{{ID: 1, FileName: "a.zip"}, {ID: 2, FileName: "b.zip"}}},
		},
		{
			name: "grouped packages stay where they are",
			in: Input{
				Packages: []Package{{ID: 1, AlbumID: 5, GroupID: 3}, {ID: 2, AlbumID: 5, GroupID: 3}},
				Groups:   []Group{{ID: 3, Source: SourceManual}},
			},
		},
		{
			name: "two albums, in key order",
			in: Input{Packages: []Package{
				{ID: 1, FileName: "x.zip", AlbumID: 20}, {ID: 2, FileName: "y.zip", AlbumID: 10},
				{ID: 3, FileName: "x2.zip", AlbumID: 20}, {ID: 4, FileName: "y2.zip", AlbumID: 10},
			}},
			want: Plan{NewGroups: []NewGroup{
				{Name: "y", Source: SourceAlbum, Key: "10", PackageIDs: ids(2, 4)},
				{Name: "x", Source: SourceAlbum, Key: "20", PackageIDs: ids(1, 3)},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkPlan(t, runPass(albumPass, tt.in), tt.want) })
	}
}

func TestRulesPass(t *testing.T) {
	groups := []Group{{ID: 7, Name: "Dragons", Source: SourceManual}, {ID: 8, Name: "Mammoth", Source: SourceManual}}
	tests := []struct {
		name  string
		pkgs  []Package
		rules []Rule
		want  Plan
	}{
		{
			name:  "prefix, case-insensitive, separators normalised",
			pkgs:  []Package{{ID: 1, FileName: "DRAGON_pack-03.zip"}, {ID: 2, FileName: "dragonfly.zip"}, {ID: 3, FileName: "Knight.zip"}},
			rules: []Rule{{ID: 1, GroupID: 7, Kind: RulePrefix, Pattern: "Dragon Pack", Confidence: 0.9}},
			want:  Plan{Joins: []Join{{GroupID: 7, PackageIDs: ids(1)}}},
		},
		{
			name:  "creator, case-insensitive",
			pkgs:  []Package{{ID: 1, FileName: "a.zip", Creator: "mammoth FACTORY"}, {ID: 2, FileName: "b.zip", Creator: "Mammoth"}},
			rules: []Rule{{ID: 1, GroupID: 8, Kind: RuleCreator, Pattern: "Mammoth Factory", Confidence: 0.5}},
			want:  Plan{Joins: []Join{{GroupID: 8, PackageIDs: ids(1)}}},
		},
		{
			name: "higher confidence wins",
			pkgs: []Package{{ID: 1, FileName: "Dragon Pack.zip", Creator: "Mammoth Factory"}},
			rules: []Rule{
				{ID: 1, GroupID: 8, Kind: RuleCreator, Pattern: "Mammoth Factory", Confidence: 0.5},
				{ID: 2, GroupID: 7, Kind: RulePrefix, Pattern: "dragon", Confidence: 0.8},
			},
			want: Plan{Joins: []Join{{GroupID: 7, PackageIDs: ids(1)}}},
		},
		{
			name: "equal confidence: lower rule id wins",
			pkgs: []Package{{ID: 1, FileName: "Dragon Pack.zip"}},
			rules: []Rule{
				{ID: 9, GroupID: 7, Kind: RulePrefix, Pattern: "dragon pack", Confidence: 0.8},
				{ID: 3, GroupID: 8, Kind: RulePrefix, Pattern: "dragon", Confidence: 0.8},
			},
			want: Plan{Joins: []Join{{GroupID: 8, PackageIDs: ids(1)}}},
		},
		{
			name:  "rule of a deleted group is ignored",
			pkgs:  []Package{{ID: 1, FileName: "Dragon.zip"}},
			rules: []Rule{{ID: 1, GroupID: 99, Kind: RulePrefix, Pattern: "dragon", Confidence: 1}},
		},
		{
			name:  "grouped package is not moved",
			pkgs:  []Package{{ID: 1, FileName: "Dragon.zip", GroupID: 8}},
			rules: []Rule{{ID: 1, GroupID: 7, Kind: RulePrefix, Pattern: "dragon", Confidence: 1}},
		},
		{
			name:  "empty pattern matches nothing",
			pkgs:  []Package{{ID: 1, FileName: "Dragon.zip"}},
			rules: []Rule{{ID: 1, GroupID: 7, Kind: RulePrefix, Pattern: " - ", Confidence: 1}},
		},
		{
			name:  "one-character pattern still works",
			pkgs:  []Package{{ID: 1, FileName: "X wing.zip"}, {ID: 2, FileName: "Y wing.zip"}},
			rules: []Rule{{ID: 1, GroupID: 7, Kind: RulePrefix, Pattern: "x", Confidence: 1}},
			want:  Plan{Joins: []Join{{GroupID: 7, PackageIDs: ids(1)}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkPlan(t, runPass(rulesPass, Input{Packages: tt.pkgs, Groups: groups, Rules: tt.rules}), tt.want)
		})
	}
}

func TestReplyPass(t *testing.T) {
	tests := []struct {
		name   string
		pkgs   []Package
		groups []Group
		want   Plan
	}{
		{
			name: "a chain through packages, root package included",
			pkgs: []Package{
				{ID: 1, FileName: "Base.zip", SourceMessageID: 10, Caption: "Titan base"},
				{ID: 2, FileName: "Arms.zip", SourceMessageID: 11, ReplyToMessageID: 10},
				{ID: 3, FileName: "Legs.zip", SourceMessageID: 12, ReplyToMessageID: 11},
				{ID: 4, FileName: "Other.zip", SourceMessageID: 13},
			},
			want: Plan{NewGroups: []NewGroup{{Name: "Titan base", Source: SourceReply, Key: "10", PackageIDs: ids(1, 2, 3)}}},
		},
		{
			name: "replies to a message that is no package",
			pkgs: []Package{
				{ID: 1, FileName: "Knight A.zip", SourceMessageID: 21, ReplyToMessageID: 5},
				{ID: 2, FileName: "Knight B.zip", SourceMessageID: 22, ReplyToMessageID: 5},
			},
			want: Plan{NewGroups: []NewGroup{{Name: "Knight", Source: SourceReply, Key: "5", PackageIDs: ids(1, 2)}}},
		},
		{
			name: "a lone reply forms nothing",
			pkgs: []Package{{ID: 1, SourceMessageID: 21, ReplyToMessageID: 5}, {ID: 2, SourceMessageID: 22}},
		},
		{
			name: "packages sharing only their message id are no chain",
			pkgs: []Package{{ID: 1, SourceMessageID: 21}, {ID: 2, SourceMessageID: 21}},
		},
		{
			name: "a reply cycle resolves to one root",
			pkgs: []Package{
				{ID: 1, FileName: "a.zip", SourceMessageID: 2, ReplyToMessageID: 3},
				{ID: 2, FileName: "b.zip", SourceMessageID: 3, ReplyToMessageID: 2},
			},
			want: Plan{NewGroups: []NewGroup{{Name: "a", Source: SourceReply, Key: "2", PackageIDs: ids(1, 2)}}},
		},
		{
			name: "a late reply joins the existing chain group",
			pkgs: []Package{
				{ID: 1, SourceMessageID: 10, GroupID: 50},
				{ID: 2, SourceMessageID: 11, ReplyToMessageID: 10, GroupID: 50},
				{ID: 3, SourceMessageID: 30, ReplyToMessageID: 11},
			},
			groups: []Group{{ID: 50, Source: SourceReply, Key: "10"}},
			want:   Plan{Joins: []Join{{GroupID: 50, PackageIDs: ids(3)}}},
		},
		{
			name: "links are followed through grouped packages",
			pkgs: []Package{
				{ID: 1, SourceMessageID: 10, GroupID: 9},
				{ID: 2, SourceMessageID: 11, ReplyToMessageID: 10, GroupID: 9},
				{ID: 3, FileName: "x.zip", SourceMessageID: 30, ReplyToMessageID: 11},
				{ID: 4, FileName: "y.zip", SourceMessageID: 31, ReplyToMessageID: 10},
			},
			groups: []Group{{ID: 9, Source: SourceAlbum, Key: "77"}},
			want:   Plan{NewGroups: []NewGroup{{Name: "x", Source: SourceReply, Key: "10", PackageIDs: ids(3, 4)}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkPlan(t, runPass(replyPass, Input{Packages: tt.pkgs, Groups: tt.groups}), tt.want)
		})
	}
}

func TestCaptionPass(t *testing.T) {
	tests := []struct {
		name string
		pkgs []Package
		want Plan
	}{
		{
			name: "case, punctuation, extensions and word order do not matter",
			pkgs: []Package{
				{ID: 1, Caption: "🐉 Dragon Lord – Collection (part 1).zip"},
				{ID: 2, Caption: "collection DRAGON lord.rar"},
				{ID: 3, Caption: "Knight collection"},
			},
			want: Plan{NewGroups: []NewGroup{{Name: "🐉 Dragon Lord – Collection (part 1).zip", Source: SourceCaption, Key: "collection dragon lord", PackageIDs: ids(1, 2)}}},
		},
		{
			name: "one significant word is too little",
			pkgs: []Package{{ID: 1, Caption: "The dragon"}, {ID: 2, Caption: "the DRAGON!"}},
		},
		{
			name: "empty captions never group",
			pkgs: []Package{{ID: 1}, {ID: 2}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkPlan(t, runPass(captionPass, Input{Packages: tt.pkgs}), tt.want) })
	}
}

func TestZipPass(t *testing.T) {
	titan := []string{"Titan Pack/body.stl", "Titan Pack/arms.stl", "__MACOSX/Titan Pack/._body.stl", "Titan Pack/.DS_Store"}
	tests := []struct {
		name string
		pkgs []Package
		want Plan
	}{
		{
			name: "shared dominant root, noise ignored, case-insensitive",
			pkgs: []Package{
				{ID: 1, Paths: titan},
				{ID: 2, Paths: []string{"titan pack\\legs.stl", "Thumbs.db", "readme.txt", "titan pack/head.stl"}},
			},
			want: Plan{NewGroups: []NewGroup{{Name: "Titan Pack", Source: SourceZip, Key: "titan pack", PackageIDs: ids(1, 2)}}},
		},
		{
			name: "no folder holds more than half of the paths",
			pkgs: []Package{
				{ID: 1, Paths: []string{"Titan/a.stl", "b.stl"}},
				{ID: 2, Paths: []string{"Titan/a.stl", "Other/b.stl"}},
			},
		},
		{
			name: "generic folder names are not a project",
			pkgs: []Package{{ID: 1, Paths: []string{"STL/a.stl"}}, {ID: 2, Paths: []string{"stl/b.stl"}}},
		},
		{
			name: "folder shorter than 3 characters",
			pkgs: []Package{{ID: 1, Paths: []string{"ab/a.stl"}}, {ID: 2, Paths: []string{"ab/b.stl"}}},
		},
		{
			name: "a single package",
			pkgs: []Package{{ID: 1, Paths: titan}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkPlan(t, runPass(zipPass, Input{Packages: tt.pkgs}), tt.want) })
	}
}

func TestPatternPass(t *testing.T) {
	tests := []struct {
		name string
		pkgs []Package
		want Plan
	}{
		{
			name: "a month of one creator",
			pkgs: []Package{
				{ID: 1, FileName: "Mammoth Factory - 2024-01 - Dragon.zip", Creator: "Mammoth Factory"},
				{ID: 2, FileName: "MF_2024_01_Knight.rar", Creator: "mammoth factory"},
				{ID: 3, FileName: "Mammoth Factory - 2024-02 - Orc.zip", Creator: "Mammoth Factory"},
			},
			want: Plan{NewGroups: []NewGroup{{Name: "Mammoth Factory – 2024-01", Source: SourcePattern, Key: "2024-01|mammoth factory", PackageIDs: ids(1, 2)}}},
		},
		{
			name: "the same month of different creators stays apart",
			pkgs: []Package{
				{ID: 1, FileName: "2024-01 Dragon.zip", Creator: "Alpha Studio"},
				{ID: 2, FileName: "2024-01 Knight.zip", Creator: "Beta Minis"},
			},
		},
		{
			name: "month names and numeric dates agree, no creator",
			pkgs: []Package{
				{ID: 1, FileName: "Release January 2024.zip"},
				{ID: 2, FileName: "jan_2024_bonus.7z"},
				{ID: 3, FileName: "2024.01 extras.rar"},
			},
			want: Plan{NewGroups: []NewGroup{{Name: "2024-01", Source: SourcePattern, Key: "2024-01", PackageIDs: ids(1, 2, 3)}}},
		},
		{
			name: "a project prefix",
			pkgs: []Package{
				{ID: 1, FileName: "Project Titan - Part A.zip"},
				{ID: 2, FileName: "project titan (Part B).rar"},
			},
			want: Plan{NewGroups: []NewGroup{{Name: "Project Titan", Source: SourcePattern, Key: "project titan", PackageIDs: ids(1, 2)}}},
		},
		{
			name: "a prefix shorter than 5 characters",
			pkgs: []Package{{ID: 1, FileName: "Orc - a.zip"}, {ID: 2, FileName: "Orc - b.zip"}},
		},
		{
			name: "a single package with a pattern",
			pkgs: []Package{{ID: 1, FileName: "Project Titan - Part A.zip"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkPlan(t, runPass(patternPass, Input{Packages: tt.pkgs}), tt.want) })
	}
}

func TestCreatorPass(t *testing.T) {
	tests := []struct {
		name   string
		pkgs   []Package
		groups []Group
		want   Plan
	}{
		{
			name: "three of one creator, case-insensitive",
			pkgs: []Package{
				{ID: 1, Creator: "Mammoth Factory"}, {ID: 2, Creator: "mammoth factory"}, {ID: 3, Creator: "MAMMOTH FACTORY "},
				{ID: 4, Creator: "Other"}, {ID: 5, Creator: "Other"},
			},
			want: Plan{NewGroups: []NewGroup{{Name: "Mammoth Factory", Source: SourceCreator, Key: "mammoth factory", PackageIDs: ids(1, 2, 3)}}},
		},
		{
			name: "two are not enough",
			pkgs: []Package{{ID: 1, Creator: "A B"}, {ID: 2, Creator: "a b"}},
		},
		{
			name:   "one joins the creator's existing group",
			pkgs:   []Package{{ID: 1, Creator: "Other"}},
			groups: []Group{{ID: 3, Source: SourceCreator, Key: "other"}},
			want:   Plan{Joins: []Join{{GroupID: 3, PackageIDs: ids(1)}}},
		},
		{
			name: "no creator, no group",
			pkgs: []Package{{ID: 1}, {ID: 2}, {ID: 3}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkPlan(t, runPass(creatorPass, Input{Packages: tt.pkgs, Groups: tt.groups}), tt.want)
		})
	}
}

func TestTimePass(t *testing.T) {
	w := 5 * time.Minute
	tests := []struct {
		name   string
		window time.Duration
		pkgs   []Package
		groups []Group
		want   Plan
	}{
		{
			name:   "a chain by gaps, named from the common prefix",
			window: w,
			pkgs: []Package{
				{ID: 1, FileName: "Dragon Lord 01.zip", PostedAt: at(0)},
				{ID: 2, FileName: "Dragon Lord 02.zip", PostedAt: at(4)},
				{ID: 3, FileName: "dragon lord 03.zip", PostedAt: at(8)}, // 8 min from the first
				{ID: 4, FileName: "Unrelated.zip", PostedAt: at(60)},
			},
			want: Plan{NewGroups: []NewGroup{{Name: "Dragon Lord", Source: SourceTime, Key: "2024-01-15T12:00:00Z", PackageIDs: ids(1, 2, 3)}}},
		},
		{
			name:   "no common prefix: the first posted file name",
			window: w,
			pkgs: []Package{
				{ID: 1, FileName: "Knight.zip", PostedAt: at(3)},
				{ID: 2, FileName: "Orc.zip", PostedAt: at(1)},
			},
			want: Plan{NewGroups: []NewGroup{{Name: "Orc", Source: SourceTime, Key: "2024-01-15T12:01:00Z", PackageIDs: ids(1, 2)}}},
		},
		{
			name:   "window ≤ 0 disables",
			window: 0,
			pkgs:   []Package{{ID: 1, PostedAt: at(0)}, {ID: 2, PostedAt: at(0)}},
		},
		{
			name:   "unknown post time is left out",
			window: w,
			pkgs:   []Package{{ID: 1, PostedAt: at(0)}, {ID: 2}},
		},
		{
			name:   "a later post within the window joins the existing group",
			window: w,
			pkgs: []Package{
				{ID: 1, PostedAt: at(0), GroupID: 30}, {ID: 2, PostedAt: at(2), GroupID: 30},
				{ID: 3, FileName: "late.zip", PostedAt: at(6)},
				{ID: 4, FileName: "later.zip", PostedAt: at(10)}, // chained through 3
			},
			groups: []Group{{ID: 30, Source: SourceTime, Key: "2024-01-15T12:00:00Z"}},
			want:   Plan{Joins: []Join{{GroupID: 30, PackageIDs: ids(3, 4)}}},
		},
		{
			name:   "bridging two existing groups merges them into the older",
			window: w,
			pkgs: []Package{
				{ID: 1, PostedAt: at(0), GroupID: 30},
				{ID: 2, PostedAt: at(14), GroupID: 31},
				{ID: 6, PostedAt: at(30), GroupID: 32},
				{ID: 3, PostedAt: at(4)},
				{ID: 4, PostedAt: at(9)},
				{ID: 5, PostedAt: at(18)}, // bridges 31 and 32: both end in 30
				{ID: 7, PostedAt: at(23)},
				{ID: 8, PostedAt: at(27)},
			},
			groups: []Group{{ID: 30, Source: SourceTime, Key: "a"}, {ID: 31, Source: SourceTime, Key: "b"}, {ID: 32, Source: SourceTime, Key: "c"}},
			want: Plan{Joins: []Join{{GroupID: 30, PackageIDs: ids(3, 4, 5, 7, 8)}},
				Merges: []Merge{{From: 31, Into: 30}, {From: 32, Into: 30}}},
		},
		{
			name:   "near two groups without bridging them: the nearest wins",
			window: w,
			pkgs: []Package{
				{ID: 1, PostedAt: at(0), GroupID: 30},
				{ID: 2, PostedAt: at(20), GroupID: 31},
				{ID: 3, PostedAt: at(3)},
				{ID: 4, PostedAt: at(17)},
			},
			groups: []Group{{ID: 30, Source: SourceTime, Key: "a"}, {ID: 31, Source: SourceTime, Key: "b"}},
			want:   Plan{Joins: []Join{{GroupID: 30, PackageIDs: ids(3)}, {GroupID: 31, PackageIDs: ids(4)}}},
		},
		{
			name:   "members of other groups are no bridge",
			window: w,
			pkgs: []Package{
				{ID: 1, PostedAt: at(0), GroupID: 30},
				{ID: 2, PostedAt: at(4), GroupID: 31},
				{ID: 3, FileName: "x.zip", PostedAt: at(8)},
			},
			groups: []Group{{ID: 30, Source: SourceTime, Key: "a"}, {ID: 31, Source: SourceManual}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkPlan(t, runPass(timePass, Input{Packages: tt.pkgs, Groups: tt.groups, TimeWindow: tt.window}), tt.want)
		})
	}
}

// TestTimePassDoesNotDependOnArrivalOrder feeds the same packages to the
// time window once all together and once in random batches, applying each
// plan before the next batch arrives (as the grouping job does), and
// expects the same partition.
func TestTimePassDoesNotDependOnArrivalOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for iter := range 300 {
		n := 2 + r.IntN(25)
		all := make([]Package, n)
		for i := range all {
			all[i] = Package{ID: int64(i + 1), PostedAt: at(float64(r.IntN(120)))}
		}
		want := timePartition(t, applyTimePlans(t, all, [][]int{perm(n, nil)}))

		order := perm(n, r)
		var batches [][]int
		for len(order) > 0 {
			k := 1 + r.IntN(len(order))
			batches = append(batches, order[:k])
			order = order[k:]
		}
		got := timePartition(t, applyTimePlans(t, all, batches))
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("iteration %d: in batches %v the groups are %v, all at once %v", iter, batches, got, want)
		}
	}
}

// perm is 0..n-1, shuffled when r is set.
func perm(n int, r *rand.Rand) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	if r != nil {
		r.Shuffle(n, func(i, j int) { p[i], p[j] = p[j], p[i] })
	}
	return p
}

// applyTimePlans lets the packages of each batch arrive in turn, runs the
// time pass and applies its plan, and returns the packages with their
// groups.
func applyTimePlans(t *testing.T, all []Package, batches [][]int) []Package {
	t.Helper()
	var pkgs []Package
	var groups []Group
	nextID := int64(1000)
	for _, b := range batches {
		for _, i := range b {
			pkgs = append(pkgs, all[i])
		}
		plan := runPass(timePass, Input{Packages: pkgs, Groups: groups, TimeWindow: 5 * time.Minute})
		setGroup := func(ids []int64, gid int64) {
			for k := range pkgs {
				if slices.Contains(ids, pkgs[k].ID) {
					pkgs[k].GroupID = gid
				}
			}
		}
		for _, g := range plan.NewGroups {
			groups = append(groups, Group{ID: nextID, Source: SourceTime, Key: g.Key})
			setGroup(g.PackageIDs, nextID)
			nextID++
		}
		for _, j := range plan.Joins {
			setGroup(j.PackageIDs, j.GroupID)
		}
		for _, m := range plan.Merges {
			for k := range pkgs {
				if pkgs[k].GroupID == m.From {
					pkgs[k].GroupID = m.Into
				}
			}
			groups = slices.DeleteFunc(groups, func(g Group) bool { return g.ID == m.From })
		}
	}
	return pkgs
}

// timePartition is the sorted member lists of the groups.
func timePartition(t *testing.T, pkgs []Package) [][]int64 {
	t.Helper()
	by := map[int64][]int64{}
	for _, p := range pkgs {
		if p.GroupID != 0 {
			by[p.GroupID] = append(by[p.GroupID], p.ID)
		}
	}
	var out [][]int64
	for _, ids := range by {
		slices.Sort(ids)
		out = append(out, ids)
	}
	slices.SortFunc(out, func(a, b []int64) int { return cmp.Compare(a[0], b[0]) })
	return out
}
