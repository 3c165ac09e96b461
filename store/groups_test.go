package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

func TestCreateGroup(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	ch, other := mustChannel(t, db), mustChannel(t, db)

	g := &hoard.PackageGroup{Name: "Dragons 2024-01", GroupingSource: hoard.GroupAutoPattern, GroupingKey: "2024-01",
		SourceChannelID: ch.ID, MemberCount: 12, HasPreview: true}
	must(t, db.CreateGroup(ctx, g))
	want := groupRow{HasID: true, HasCreatedAt: true, Name: "Dragons 2024-01", Source: hoard.GroupAutoPattern, Key: "2024-01",
		SourceChannelID: ch.ID}
	if diff := cmp.Diff(want, groupRowOf(g)); diff != "" {
		t.Fatalf("created group (-want +got):\n%s", diff)
	}

	wantCode(t, db.CreateGroup(ctx, &hoard.PackageGroup{Name: "x", GroupingSource: "AUTO_MAGIC"}), hoard.EINVALID)
	wantCode(t, db.CreateGroup(ctx, &hoard.PackageGroup{Name: "x"}), hoard.EINVALID) // no source
	for name, bad := range map[string]*hoard.PackageGroup{
		"empty name":      {Name: "", GroupingSource: hoard.GroupManual},
		"name too long":   {Name: strings.Repeat("n", 513), GroupingSource: hoard.GroupManual},
		"unknown channel": {Name: "x", GroupingSource: hoard.GroupManual, SourceChannelID: -1},
	} {
		if err := savepoint(db, func(tx *store.DB) error { return tx.CreateGroup(ctx, bad) }); hoard.ErrorCode(err) != hoard.EINVALID {
			t.Errorf("%s: err = %v, want invalid", name, err)
		}
	}

	// Same channel, source and key: conflict.
	dup := &hoard.PackageGroup{Name: "Other name", GroupingSource: hoard.GroupAutoPattern, GroupingKey: "2024-01", SourceChannelID: ch.ID}
	wantCode(t, savepoint(db, func(tx *store.DB) error { return tx.CreateGroup(ctx, dup) }), hoard.ECONFLICT)
	// Any of the three differing is another group.
	for name, ok := range map[string]*hoard.PackageGroup{
		"other source":  {Name: "a", GroupingSource: hoard.GroupAutoCreator, GroupingKey: "2024-01", SourceChannelID: ch.ID},
		"other key":     {Name: "b", GroupingSource: hoard.GroupAutoPattern, GroupingKey: "2024-02", SourceChannelID: ch.ID},
		"other channel": {Name: "c", GroupingSource: hoard.GroupAutoPattern, GroupingKey: "2024-01", SourceChannelID: other.ID},
	} {
		if err := savepoint(db, func(tx *store.DB) error { return tx.CreateGroup(ctx, ok) }); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Manual groups without a key may share a name and channel.
	for i := 0; i < 2; i++ {
		m := &hoard.PackageGroup{Name: "My picks", GroupingSource: hoard.GroupManual, SourceChannelID: ch.ID}
		must(t, db.CreateGroup(ctx, m))
		if m.GroupingKey != "" || m.ID == 0 {
			t.Fatalf("manual group = %+v", m)
		}
	}
	// A group without a channel.
	loose := &hoard.PackageGroup{Name: "Uploads", GroupingSource: hoard.GroupManual}
	must(t, db.CreateGroup(ctx, loose))
	if loose.SourceChannelID != 0 {
		t.Fatalf("channel-less group = %+v", loose)
	}
}

func TestFindGroupByID(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	ch := mustChannel(t, db)
	g := &hoard.PackageGroup{Name: "Album", GroupingSource: hoard.GroupAlbum, GroupingKey: "555", SourceChannelID: ch.ID}
	must(t, db.CreateGroup(ctx, g))
	empty := &hoard.PackageGroup{Name: "Empty", GroupingSource: hoard.GroupManual}
	must(t, db.CreateGroup(ctx, empty))

	got, err := db.FindGroupByID(ctx, g.ID)
	must(t, err)
	if !got.CreatedAt.Equal(g.CreatedAt) {
		t.Fatalf("FindGroupByID created at %s, want %s", got.CreatedAt, g.CreatedAt)
	}
	want := groupRow{HasID: true, HasCreatedAt: true, Name: "Album", Source: hoard.GroupAlbum, Key: "555", SourceChannelID: ch.ID}
	if diff := cmp.Diff(want, groupRowOf(got), cmpopts.IgnoreFields(groupRow{}, "HasPreview")); diff != "" || got.ID != g.ID {
		t.Fatalf("FindGroupByID %d, want %d (-want +got):\n%s", got.ID, g.ID, diff)
	}

	var members []int64
	for i := 0; i < 3; i++ {
		members = append(members, mustPackage(t, db).ID)
	}
	mustPackage(t, db) // not a member
	must(t, db.SetPackageGroup(ctx, members, g.ID))
	got, err = db.FindGroupByID(ctx, g.ID)
	must(t, err)
	if got.MemberCount != 3 {
		t.Fatalf("member count = %d, want 3", got.MemberCount)
	}
	must(t, db.DeletePackage(ctx, members[0]))
	got, _ = db.FindGroupByID(ctx, g.ID)
	if got.MemberCount != 2 {
		t.Fatalf("member count after delete = %d, want 2", got.MemberCount)
	}
	e, err := db.FindGroupByID(ctx, empty.ID)
	must(t, err)
	if e.MemberCount != 0 || e.SourceChannelID != 0 || e.GroupingKey != "" {
		t.Fatalf("empty group = %+v", e)
	}
	_, err = db.FindGroupByID(ctx, -1)
	wantCode(t, err, hoard.ENOTFOUND)

	// Deleting the channel keeps the group without a channel.
	must(t, db.DeleteChannel(ctx, ch.ID))
	got, err = db.FindGroupByID(ctx, g.ID)
	must(t, err)
	if got.SourceChannelID != 0 || got.MemberCount != 2 {
		t.Fatalf("group after channel deletion = %+v", got)
	}
}

// mustGroup stores a group of a channel.
func mustGroup(t *testing.T, db *store.DB, channelID int64, src hoard.GroupingSource, key string, members ...int64) *hoard.PackageGroup {
	t.Helper()
	g := &hoard.PackageGroup{Name: fmt.Sprintf("Group %d", seq.Add(1)), GroupingSource: src, GroupingKey: key, SourceChannelID: channelID}
	must(t, db.CreateGroup(context.Background(), g))
	if len(members) > 0 {
		must(t, db.SetPackageGroup(context.Background(), members, g.ID))
	}
	return g
}

// inChannel makes mustPackage store a package of a channel.
func inChannel(id int64) func(*hoard.Package) {
	return func(p *hoard.Package) { p.SourceChannelID = id }
}

// groupOf returns a package's group id and keep-ungrouped flag.
func groupOf(t *testing.T, db *store.DB, id int64) (int64, bool) {
	t.Helper()
	var g int64
	var keep bool
	if err := db.Tx().QueryRow(context.Background(), `SELECT coalesce(package_group_id, 0), keep_ungrouped FROM packages WHERE id = $1`, id).Scan(&g, &keep); err != nil {
		t.Fatal(err)
	}
	return g, keep
}

func groupExists(t *testing.T, db *store.DB, id int64) bool {
	t.Helper()
	_, err := db.FindGroupByID(context.Background(), id)
	if err != nil && hoard.ErrorCode(err) != hoard.ENOTFOUND {
		t.Fatal(err)
	}
	return err == nil
}

func groupIDs(gs []hoard.PackageGroup) []int64 {
	out := make([]int64, len(gs))
	for i, g := range gs {
		out[i] = g.ID
	}
	return out
}

func TestListGroups(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	ch, other := mustChannel(t, db), mustChannel(t, db)
	var mine []int64
	for i := 0; i < 5; i++ {
		src := hoard.GroupAutoPattern
		if i%2 == 0 {
			src = hoard.GroupManual
		}
		g := mustGroup(t, db, ch.ID, src, "", mustPackage(t, db, inChannel(ch.ID)).ID)
		mine = append([]int64{g.ID}, mine...) // newest first
	}
	mustGroup(t, db, other.ID, hoard.GroupManual, "")

	tests := []struct {
		name string
		f    store.GroupFilter
		want []int64
	}{
		{"channel", store.GroupFilter{ChannelID: ch.ID}, mine},
		{"channel and source", store.GroupFilter{ChannelID: ch.ID, Source: hoard.GroupAutoPattern}, []int64{mine[1], mine[3]}},
		{"unknown channel", store.GroupFilter{ChannelID: -1}, []int64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, next, err := db.ListGroups(ctx, tt.f, 0, 0)
			must(t, err)
			if next != 0 || !slices.Equal(groupIDs(got), tt.want) {
				t.Fatalf("ListGroups = %v (next %d), want %v", groupIDs(got), next, tt.want)
			}
			for _, g := range got {
				if g.MemberCount != 1 {
					t.Fatalf("member count of %d = %d", g.ID, g.MemberCount)
				}
			}
		})
	}

	// Keyset pages of two.
	var seen []int64
	before := int64(0)
	for pages := 0; ; pages++ {
		got, next, err := db.ListGroups(ctx, store.GroupFilter{ChannelID: ch.ID}, before, 2)
		must(t, err)
		seen = append(seen, groupIDs(got)...)
		if next == 0 {
			break
		}
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		before = next
	}
	if !slices.Equal(seen, mine) {
		t.Fatalf("pages = %v, want %v", seen, mine)
	}
	all, _, err := db.ListGroups(ctx, store.GroupFilter{}, 0, 500)
	must(t, err)
	if len(all) < 6 {
		t.Fatalf("all groups = %d, want ≥ 6", len(all))
	}
}

func TestSearchGroupsByName(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	ch := mustChannel(t, db)
	named := func(name string) int64 {
		g := &hoard.PackageGroup{Name: name, GroupingSource: hoard.GroupManual, SourceChannelID: ch.ID}
		must(t, db.CreateGroup(ctx, g))
		return g.ID
	}
	dragons := named("Mammoth Dragons 2024-01")
	dragon := named("Dragon")
	pct := named("100% Orcs_v2")

	tests := []struct {
		q    string
		want []int64
	}{
		{"dragon", []int64{dragon, dragons}}, // the closer name first
		{"MAMMOTH", []int64{dragons}},
		{"100%", []int64{pct}},
		{"s_v", []int64{pct}},     // "_" is literal
		{"0% orcs", []int64{pct}}, // "%" is literal
		{"%", []int64{pct}},
		{"   ", []int64{}},
		{"zebra", []int64{}},
	}
	for _, tt := range tests {
		t.Run(tt.q, func(t *testing.T) {
			got, err := db.SearchGroupsByName(ctx, tt.q, 0)
			must(t, err)
			if !slices.Equal(groupIDs(got), tt.want) {
				t.Fatalf("SearchGroupsByName(%q) = %v, want %v", tt.q, groupIDs(got), tt.want)
			}
		})
	}
}

func TestRenameGroup(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	g := mustGroup(t, db, mustChannel(t, db).ID, hoard.GroupAutoTime, "k")
	got, err := db.RenameGroup(ctx, g.ID, "  Better name ")
	must(t, err)
	// A user's name is not undone by the engine: the group becomes MANUAL.
	if got.Name != "Better name" || got.GroupingKey != "" || got.GroupingSource != hoard.GroupManual || got.ID != g.ID {
		t.Fatalf("renamed = %+v", got)
	}
	for name, tt := range map[string]struct {
		id   int64
		name string
		code string
	}{
		"empty":    {g.ID, "  ", hoard.EINVALID},
		"too long": {g.ID, strings.Repeat("é", 513), hoard.EINVALID},
		"unknown":  {-1, "x", hoard.ENOTFOUND},
	} {
		_, err := db.RenameGroup(ctx, tt.id, tt.name)
		if hoard.ErrorCode(err) != tt.code {
			t.Errorf("%s: err = %v, want %s", name, err, tt.code)
		}
	}
	_, err = db.RenameGroup(ctx, g.ID, strings.Repeat("é", 512))
	must(t, err)
}

func TestGroupPreview(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	g := mustGroup(t, db, 0, hoard.GroupManual, "")
	_, err := db.FindGroupPreview(ctx, g.ID)
	wantCode(t, err, hoard.ENOTFOUND)
	img := []byte{0xff, 0xd8, 0xff, 1, 2, 3}
	must(t, db.SetGroupPreview(ctx, g.ID, img))
	got, err := db.FindGroupPreview(ctx, g.ID)
	must(t, err)
	if !bytes.Equal(got, img) {
		t.Fatalf("preview = %x", got)
	}
	if f, _ := db.FindGroupByID(ctx, g.ID); !f.HasPreview {
		t.Fatal("HasPreview = false after SetGroupPreview")
	}
	must(t, db.SetGroupPreview(ctx, g.ID, nil))
	_, err = db.FindGroupPreview(ctx, g.ID)
	wantCode(t, err, hoard.ENOTFOUND)
	wantCode(t, db.SetGroupPreview(ctx, -1, img), hoard.ENOTFOUND)
}

// TestGroupShowsAMembersPreview: a group without a picture of its own shows
// its oldest member's that has one, reports HasPreview for it, and its own
// picture, once set, comes first.
func TestGroupShowsAMembersPreview(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	g := mustGroup(t, db, 0, hoard.GroupAutoTime, "k")
	bare := mustGroup(t, db, 0, hoard.GroupAutoTime, "bare")
	var members []int64
	for i, preview := range [][]byte{nil, []byte("second"), []byte("third")} {
		p := mustPackage(t, db, func(p *hoard.Package) { p.PreviewData = preview })
		_, err := db.Tx().Exec(ctx, `UPDATE packages SET created_at = now() - make_interval(hours => $2) WHERE id = $1`, p.ID, 10-i)
		must(t, err)
		members = append(members, p.ID)
	}
	must(t, db.SetPackageGroup(ctx, members, g.ID))
	must(t, db.SetPackageGroup(ctx, []int64{mustPackage(t, db, func(*hoard.Package) {}).ID}, bare.ID))

	type shown struct {
		Preview    string
		HasPreview bool
		Showing    bool // GroupsShowingPreview
	}
	look := func(id int64) shown {
		t.Helper()
		var s shown
		if data, err := db.FindGroupPreview(ctx, id); err == nil {
			s.Preview = string(data)
		} else {
			wantCode(t, err, hoard.ENOTFOUND)
		}
		f, err := db.FindGroupByID(ctx, id)
		must(t, err)
		showing, err := db.GroupsShowingPreview(ctx, []int64{g.ID, bare.ID})
		must(t, err)
		s.HasPreview, s.Showing = f.HasPreview, showing[id]
		return s
	}
	if got, want := look(g.ID), (shown{"second", true, true}); got != want {
		t.Errorf("group of members with previews: %+v, want %+v", got, want)
	}
	if got, want := look(bare.ID), (shown{}); got != want {
		t.Errorf("group without any preview: %+v, want %+v", got, want)
	}
	must(t, db.SetGroupPreview(ctx, g.ID, []byte("own")))
	if got, want := look(g.ID), (shown{"own", true, true}); got != want {
		t.Errorf("group with its own preview: %+v, want %+v", got, want)
	}
}

func TestDissolveGroup(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	ch := mustChannel(t, db)
	a, b := mustPackage(t, db, inChannel(ch.ID)), mustPackage(t, db, inChannel(ch.ID))
	g := mustGroup(t, db, ch.ID, hoard.GroupManual, "", a.ID, b.ID)
	_, err := db.AddGroupingRule(ctx, &hoard.GroupingRule{GroupID: g.ID, Pattern: "Pack", SignalType: hoard.RulePrefix})
	must(t, err)

	n, err := db.DissolveGroup(ctx, g.ID)
	must(t, err)
	if n != 2 || groupExists(t, db, g.ID) {
		t.Fatalf("DissolveGroup released %d, group exists %v", n, groupExists(t, db, g.ID))
	}
	for _, p := range []int64{a.ID, b.ID} {
		if gid, keep := groupOf(t, db, p); gid != 0 || !keep {
			t.Fatalf("package %d: group %d keep %v; want ungrouped and kept so", p, gid, keep)
		}
	}
	rules, err := db.ListGroupingRules(ctx, ch.ID)
	must(t, err)
	if len(rules) != 0 {
		t.Fatalf("rules left: %+v", rules)
	}
	_, err = db.DissolveGroup(ctx, g.ID)
	wantCode(t, err, hoard.ENOTFOUND)
}

func TestRemovePackageFromGroup(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	ch := mustChannel(t, db)
	a, b := mustPackage(t, db, inChannel(ch.ID)), mustPackage(t, db, inChannel(ch.ID))
	outsider := mustPackage(t, db, inChannel(ch.ID))
	g := mustGroup(t, db, ch.ID, hoard.GroupAutoPattern, "pack", a.ID, b.ID)

	_, err := db.RemovePackageFromGroup(ctx, g.ID, outsider.ID)
	wantCode(t, err, hoard.ENOTFOUND)

	deleted, err := db.RemovePackageFromGroup(ctx, g.ID, a.ID)
	must(t, err)
	if gid, keep := groupOf(t, db, a.ID); deleted || gid != 0 || !keep {
		t.Fatalf("after removing a: deleted %v, group %d, keep %v", deleted, gid, keep)
	}
	if gid, keep := groupOf(t, db, b.ID); gid != g.ID || keep {
		t.Fatalf("b: group %d keep %v", gid, keep)
	}
	deleted, err = db.RemovePackageFromGroup(ctx, g.ID, b.ID)
	must(t, err)
	if !deleted || groupExists(t, db, g.ID) {
		t.Fatalf("the emptied group was not deleted (deleted=%v)", deleted)
	}
}

func TestCreateManualGroup(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	ch, other := mustChannel(t, db), mustChannel(t, db)
	p1, p2, p3 := mustPackage(t, db, inChannel(ch.ID)), mustPackage(t, db, inChannel(ch.ID)), mustPackage(t, db, inChannel(ch.ID))
	foreign := mustPackage(t, db, inChannel(other.ID))
	loose := mustPackage(t, db)

	for name, tt := range map[string]struct {
		name string
		ids  []int64
		code string
	}{
		"one package":       {"g", []int64{p1.ID}, hoard.EINVALID},
		"one package twice": {"g", []int64{p1.ID, p1.ID}, hoard.EINVALID},
		"no name":           {" ", []int64{p1.ID, p2.ID}, hoard.EINVALID},
		"two channels":      {"g", []int64{p1.ID, foreign.ID}, hoard.EINVALID},
		"channel and none":  {"g", []int64{p1.ID, loose.ID}, hoard.EINVALID},
		"unknown package":   {"g", []int64{p1.ID, -5}, hoard.ENOTFOUND},
		"name too long":     {strings.Repeat("n", 513), []int64{p1.ID, p2.ID}, hoard.EINVALID},
	} {
		_, err := db.CreateManualGroup(ctx, tt.name, tt.ids)
		if hoard.ErrorCode(err) != tt.code {
			t.Errorf("%s: err = %v, want %s", name, err, tt.code)
		}
	}
	if gid, _ := groupOf(t, db, p1.ID); gid != 0 {
		t.Fatal("a failed CreateManualGroup grouped a package")
	}

	// p1 and p2 come from an automatic group (emptied → deleted), p3 from
	// one that keeps a member; p3 was marked keep-ungrouped before.
	auto := mustGroup(t, db, ch.ID, hoard.GroupAutoTime, "t", p1.ID, p2.ID)
	rest := mustPackage(t, db, inChannel(ch.ID))
	kept := mustGroup(t, db, ch.ID, hoard.GroupAutoPattern, "p", p3.ID, rest.ID)
	_, err := db.RemovePackageFromGroup(ctx, kept.ID, p3.ID)
	must(t, err)

	g, err := db.CreateManualGroup(ctx, " Picks ", []int64{p3.ID, p1.ID, p2.ID, p1.ID})
	must(t, err)
	want := groupRow{HasID: true, HasCreatedAt: true, Name: "Picks", Source: hoard.GroupManual, SourceChannelID: ch.ID, Members: 3}
	if diff := cmp.Diff(want, groupRowOf(g), cmpopts.IgnoreFields(groupRow{}, "HasPreview")); diff != "" {
		t.Fatalf("manual group (-want +got):\n%s", diff)
	}
	for _, p := range []int64{p1.ID, p2.ID, p3.ID} {
		if gid, keep := groupOf(t, db, p); gid != g.ID || keep {
			t.Fatalf("package %d: group %d keep %v", p, gid, keep)
		}
	}
	if groupExists(t, db, auto.ID) || !groupExists(t, db, kept.ID) {
		t.Fatal("emptied group kept or non-empty group deleted")
	}

	// Packages without a channel form a group without a channel.
	l2 := mustPackage(t, db)
	lg, err := db.CreateManualGroup(ctx, "Uploads", []int64{loose.ID, l2.ID})
	must(t, err)
	if lg.SourceChannelID != 0 || lg.MemberCount != 2 {
		t.Fatalf("channel-less group = %+v", lg)
	}
}

func TestMergeGroups(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	ch := mustChannel(t, db)
	a, b, c := mustPackage(t, db, inChannel(ch.ID)), mustPackage(t, db, inChannel(ch.ID)), mustPackage(t, db, inChannel(ch.ID))
	src := mustGroup(t, db, ch.ID, hoard.GroupManual, "", a.ID, b.ID)
	dst := mustGroup(t, db, ch.ID, hoard.GroupAutoPattern, "key", c.ID)
	addRule := func(g int64, pat string) {
		_, err := db.AddGroupingRule(ctx, &hoard.GroupingRule{GroupID: g, Pattern: pat, SignalType: hoard.RulePrefix, Confidence: 0.8})
		must(t, err)
	}
	addRule(src.ID, "dragon")
	addRule(src.ID, "shared")
	addRule(dst.ID, "shared")
	img := []byte("preview")
	must(t, db.SetGroupPreview(ctx, src.ID, img))

	_, err := db.MergeGroups(ctx, src.ID, src.ID)
	wantCode(t, err, hoard.EINVALID)
	_, err = db.MergeGroups(ctx, src.ID, -1)
	wantCode(t, err, hoard.ENOTFOUND)
	_, err = db.MergeGroups(ctx, -1, dst.ID)
	wantCode(t, err, hoard.ENOTFOUND)

	got, err := db.MergeGroups(ctx, src.ID, dst.ID)
	must(t, err)
	// A user's merge is not undone by the engine: the target becomes MANUAL.
	want := groupRow{HasID: true, HasCreatedAt: true, Name: dst.Name, Source: hoard.GroupManual, Members: 3, HasPreview: true,
		SourceChannelID: got.SourceChannelID}
	if diff := cmp.Diff(want, groupRowOf(got)); diff != "" || got.ID != dst.ID {
		t.Fatalf("merged into %d, want %d (-want +got):\n%s", got.ID, dst.ID, diff)
	}
	if groupExists(t, db, src.ID) {
		t.Fatal("source group still exists")
	}
	for _, p := range []int64{a.ID, b.ID, c.ID} {
		if gid, _ := groupOf(t, db, p); gid != dst.ID {
			t.Fatalf("package %d in group %d", p, gid)
		}
	}
	rules, err := db.ListGroupRules(ctx, dst.ID)
	must(t, err)
	var pats []string
	for _, r := range rules {
		pats = append(pats, r.Pattern)
		if r.ChannelID != ch.ID {
			t.Fatalf("rule channel = %d", r.ChannelID)
		}
	}
	slices.Sort(pats)
	if !slices.Equal(pats, []string{"dragon", "shared"}) {
		t.Fatalf("target rules = %v", pats)
	}
	// The target's own preview wins over the source's.
	other := mustGroup(t, db, ch.ID, hoard.GroupManual, "")
	must(t, db.SetGroupPreview(ctx, other.ID, []byte("other")))
	_, err = db.MergeGroups(ctx, other.ID, dst.ID)
	must(t, err)
	if p, _ := db.FindGroupPreview(ctx, dst.ID); !bytes.Equal(p, img) {
		t.Fatalf("preview after second merge = %q", p)
	}
}

func TestGroupingRules(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	ch, other := mustChannel(t, db), mustChannel(t, db)
	g := mustGroup(t, db, ch.ID, hoard.GroupManual, "")
	g2 := mustGroup(t, db, ch.ID, hoard.GroupManual, "")
	og := mustGroup(t, db, other.ID, hoard.GroupManual, "")

	r := &hoard.GroupingRule{GroupID: g.ID, ChannelID: other.ID, Pattern: " Mammoth ", SignalType: hoard.RulePrefix, Confidence: 0.7}
	ok, err := db.AddGroupingRule(ctx, r)
	must(t, err)
	type added struct {
		OK, HasID  bool
		ChannelID  int64
		Pattern    string
		Confidence float64
	}
	if diff := cmp.Diff(added{true, true, ch.ID, "Mammoth", 0.7}, added{ok, r.ID != 0, r.ChannelID, r.Pattern, r.Confidence},
		cmpopts.EquateApprox(0, 0.01)); diff != "" {
		t.Fatalf("added rule (-want +got):\n%s", diff)
	}
	dup := &hoard.GroupingRule{GroupID: g.ID, Pattern: "Mammoth", SignalType: hoard.RulePrefix}
	ok, err = db.AddGroupingRule(ctx, dup)
	must(t, err)
	if ok || dup.ID != 0 {
		t.Fatalf("duplicate rule added: %+v", dup)
	}
	ok, err = db.AddGroupingRule(ctx, &hoard.GroupingRule{GroupID: g2.ID, Pattern: "Alice", SignalType: hoard.RuleCreator})
	must(t, err)
	if !ok {
		t.Fatal("creator rule not added")
	}
	_, err = db.AddGroupingRule(ctx, &hoard.GroupingRule{GroupID: og.ID, Pattern: "Other", SignalType: hoard.RulePrefix})
	must(t, err)

	for name, tt := range map[string]struct {
		r    hoard.GroupingRule
		code string
	}{
		"unknown group":  {hoard.GroupingRule{GroupID: -1, Pattern: "x", SignalType: hoard.RulePrefix}, hoard.ENOTFOUND},
		"unknown signal": {hoard.GroupingRule{GroupID: g.ID, Pattern: "x", SignalType: "REGEX"}, hoard.EINVALID},
		"empty pattern":  {hoard.GroupingRule{GroupID: g.ID, Pattern: " ", SignalType: hoard.RulePrefix}, hoard.EINVALID},
		"confidence":     {hoard.GroupingRule{GroupID: g.ID, Pattern: "x", SignalType: hoard.RulePrefix, Confidence: 1.5}, hoard.EINVALID},
	} {
		if _, err := db.AddGroupingRule(ctx, &tt.r); hoard.ErrorCode(err) != tt.code {
			t.Errorf("%s: err = %v, want %s", name, err, tt.code)
		}
	}

	rules, err := db.ListGroupingRules(ctx, ch.ID)
	must(t, err)
	if len(rules) != 2 || rules[0].Pattern != "Alice" || rules[0].Confidence != 1 || rules[1].Pattern != "Mammoth" {
		t.Fatalf("channel rules = %+v", rules)
	}
	gr, err := db.ListGroupRules(ctx, g.ID)
	must(t, err)
	if len(gr) != 1 || gr[0].ID != r.ID {
		t.Fatalf("group rules = %+v", gr)
	}
}

func TestLoadGroupingSnapshot(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	ch, other := mustChannel(t, db), mustChannel(t, db)
	posted := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	free := mustPackage(t, db, inChannel(ch.ID), func(p *hoard.Package) {
		p.FileName, p.Creator, p.SourcePostedAt, p.MediaAlbumID = "Dragon.zip", "Alice", posted, 77
		p.SourceMessageID, p.ReplyToMessageID, p.SourceCaption = 10, 9, "A dragon"
	})
	grouped := mustPackage(t, db, inChannel(ch.ID), func(p *hoard.Package) { p.SourceCaption = "hidden"; p.SourceMessageID = 11 })
	held := mustPackage(t, db, inChannel(ch.ID), func(p *hoard.Package) { p.SourceCaption = "hidden too" })
	doc := mustPackage(t, db, inChannel(ch.ID), func(p *hoard.Package) { p.ArchiveType = hoard.ArchiveDocument })
	mustPackage(t, db, inChannel(other.ID))

	files := func(pkg int64, n int) {
		fs := make([]hoard.PackageFile, n)
		for i := range fs {
			fs[i] = hoard.PackageFile{Ordinal: i, Path: fmt.Sprintf("Dragon/part%03d.stl", i), FileName: "x.stl"}
		}
		must(t, db.ReplacePackageFiles(ctx, pkg, fs))
	}
	files(free.ID, 60)
	files(grouped.ID, 3)
	files(held.ID, 3)
	files(doc.ID, 1)

	g := mustGroup(t, db, ch.ID, hoard.GroupAutoPattern, "k", grouped.ID)
	hg := mustGroup(t, db, ch.ID, hoard.GroupManual, "", held.ID)
	_, err := db.RemovePackageFromGroup(ctx, hg.ID, held.ID)
	must(t, err)
	// A group of another channel that a rule of this channel points to
	// (after a cross-channel merge) is part of the snapshot.
	foreign := mustGroup(t, db, other.ID, hoard.GroupManual, "")
	local := mustGroup(t, db, ch.ID, hoard.GroupManual, "")
	_, err = db.AddGroupingRule(ctx, &hoard.GroupingRule{GroupID: local.ID, Pattern: "Drag", SignalType: hoard.RulePrefix})
	must(t, err)
	_, err = db.MergeGroups(ctx, local.ID, foreign.ID)
	must(t, err)

	snap, err := db.LoadGroupingSnapshot(ctx, ch.ID, store.SnapshotOptions{AutoGroup: true, All: true})
	must(t, err)
	if len(snap.Packages) != 4 {
		t.Fatalf("packages = %d, want 4", len(snap.Packages))
	}
	p := snap.Packages[0]
	if diff := cmp.Diff(hoard.GroupingPackage{ID: free.ID, FileName: "Dragon.zip", Creator: "Alice", PostedAt: posted, AlbumID: 77,
		SourceMessageID: 10, ReplyToMessageID: 9, Caption: "A dragon"}, p, cmpopts.IgnoreFields(hoard.GroupingPackage{}, "Paths")); diff != "" {
		t.Fatalf("free package (-want +got):\n%s", diff)
	}
	if len(p.Paths) != hoard.GroupingPathLimit || p.Paths[0] != "Dragon/part000.stl" || p.Paths[49] != "Dragon/part049.stl" {
		t.Fatalf("paths = %d %v", len(p.Paths), p.Paths[:2])
	}
	q := snap.Packages[1]
	if diff := cmp.Diff(hoard.GroupingPackage{ID: q.ID, FileName: q.FileName, Creator: q.Creator, AlbumID: q.AlbumID,
		ReplyToMessageID: q.ReplyToMessageID, GroupID: g.ID, SourceMessageID: 11, KeepUngrouped: q.KeepUngrouped}, q); diff != "" {
		t.Fatalf("grouped package (-want +got):\n%s", diff)
	}
	if q := snap.Packages[2]; !q.KeepUngrouped || q.Caption != "" || q.Paths != nil {
		t.Fatalf("held package = %+v", q)
	}
	if q := snap.Packages[3]; q.Paths != nil {
		t.Fatalf("document paths = %v", q.Paths)
	}
	if gs := groupIDs(snap.Groups); !slices.Equal(gs, []int64{g.ID, foreign.ID}) {
		t.Fatalf("groups = %v, want %v", gs, []int64{g.ID, foreign.ID})
	}
	if len(snap.Rules) != 1 || snap.Rules[0].GroupID != foreign.ID {
		t.Fatalf("rules = %+v", snap.Rules)
	}
	noPaths, err := db.LoadGroupingSnapshot(ctx, ch.ID, store.SnapshotOptions{All: true})
	must(t, err)
	if noPaths.Packages[0].Paths != nil {
		t.Fatal("paths loaded without withPaths")
	}
	empty, err := db.LoadGroupingSnapshot(ctx, -1, store.SnapshotOptions{AutoGroup: true})
	must(t, err)
	if len(empty.Packages) != 0 || len(empty.Groups) != 0 {
		t.Fatalf("unknown channel snapshot = %+v", empty)
	}

	members, err := db.LoadGroupMembers(ctx, g.ID)
	must(t, err)
	if len(members) != 1 || members[0].ID != grouped.ID {
		t.Fatalf("members = %+v", members)
	}
}

func TestLockChannelGrouping(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	must(t, db.LockChannelGrouping(context.Background(), 1))
	must(t, db.InTx(context.Background(), func(tx *store.DB) error { return tx.LockChannelGrouping(context.Background(), 2) }))
}

func countConflictNotes(t *testing.T, db *store.DB, key string) (live, all int) {
	t.Helper()
	if err := db.Tx().QueryRow(context.Background(), `SELECT count(*) FILTER (WHERE NOT dismissed), count(*)
		FROM system_notifications WHERE dedup_key = $1`, key).Scan(&live, &all); err != nil {
		t.Fatal(err)
	}
	return live, all
}

func TestApplyGroupingPlan(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	ch, other := mustChannel(t, db), mustChannel(t, db)
	pkg := func() int64 { return mustPackage(t, db, inChannel(ch.ID)).ID }
	a, b, c, d, e, f := pkg(), pkg(), pkg(), pkg(), pkg(), pkg()
	stolen := pkg()                                             // grouped by someone else after planning
	held := pkg()                                               // a user took it out of a group
	foreign := mustPackage(t, db, inChannel(other.ID)).ID       // not of this channel
	existing := mustGroup(t, db, ch.ID, hoard.GroupAlbum, "42") // a run planned before it existed
	manual := mustGroup(t, db, ch.ID, hoard.GroupManual, "", stolen)
	hg := mustGroup(t, db, ch.ID, hoard.GroupManual, "", held, pkg())
	_, err := db.RemovePackageFromGroup(ctx, hg.ID, held)
	must(t, err)

	plan := hoard.GroupingPlan{
		NewGroups: []hoard.NewGroupSpec{
			{Name: "  Dragons  ", Source: hoard.GroupAutoPattern, Key: "dragons", PackageIDs: []int64{a, b}},
			{Name: "Album", Source: hoard.GroupAlbum, Key: "42", PackageIDs: []int64{c}},                       // joins existing
			{Name: "Gone", Source: hoard.GroupAutoTime, Key: "t1", PackageIDs: []int64{stolen, held, foreign}}, // gets nobody
			{Name: "", Source: hoard.GroupAutoCaption, Key: "", PackageIDs: []int64{d, e}},
		},
		Joins: []hoard.GroupJoin{{GroupID: manual.ID, PackageIDs: []int64{f}}},
		Conflicts: []hoard.GroupConflict{{Key: fmt.Sprintf("GROUPING_CONFLICT:%d:%d", existing.ID, manual.ID),
			GroupA: existing.ID, GroupB: manual.ID, PackageIDs: []int64{c}, Patterns: []string{"drag"}}},
	}
	res, err := db.ApplyGroupingPlan(ctx, ch.ID, plan)
	must(t, err)
	if res != (store.GroupingResult{GroupsCreated: 2, PackagesMoved: 6, Conflicts: 1}) {
		t.Fatalf("result = %+v", res)
	}
	ga, _ := groupOf(t, db, a)
	if gb, _ := groupOf(t, db, b); ga == 0 || gb != ga {
		t.Fatalf("a, b in %d, %d", ga, gb)
	}
	g, err := db.FindGroupByID(ctx, ga)
	must(t, err)
	if g.Name != "Dragons" || g.GroupingSource != hoard.GroupAutoPattern || g.GroupingKey != "dragons" || g.SourceChannelID != ch.ID {
		t.Fatalf("new group = %+v", g)
	}
	if gc, _ := groupOf(t, db, c); gc != existing.ID {
		t.Fatalf("c in %d, want the existing album group %d", gc, existing.ID)
	}
	gd, _ := groupOf(t, db, d)
	if ge, _ := groupOf(t, db, e); gd == 0 || ge != gd {
		t.Fatalf("d, e in %d, %d", gd, ge)
	}
	if g, _ := db.FindGroupByID(ctx, gd); g.Name != "Unnamed group" || g.GroupingKey != "" {
		t.Fatalf("keyless group = %+v", g)
	}
	if gf, _ := groupOf(t, db, f); gf != manual.ID {
		t.Fatalf("f in %d", gf)
	}
	if gs, _ := groupOf(t, db, stolen); gs != manual.ID {
		t.Fatal("a package grouped meanwhile was stolen")
	}
	if gh, keep := groupOf(t, db, held); gh != 0 || !keep {
		t.Fatal("a keep-ungrouped package was grouped")
	}
	if gf, _ := groupOf(t, db, foreign); gf != 0 {
		t.Fatal("a package of another channel was grouped")
	}
	if all, _, _ := db.ListGroups(ctx, store.GroupFilter{ChannelID: ch.ID, Source: hoard.GroupAutoTime}, 0, 0); len(all) != 0 {
		t.Fatalf("a new group without members was kept: %+v", all)
	}
	key := plan.Conflicts[0].Key
	if live, all := countConflictNotes(t, db, key); live != 1 || all != 1 {
		t.Fatalf("conflict notifications: live %d, all %d", live, all)
	}
	notes, err := db.ListNotifications(ctx, 0, 10)
	must(t, err)
	var n hoard.Notification
	for _, x := range notes {
		if x.DedupKey == key {
			n = x
		}
	}
	type note struct {
		Type                       hoard.NotificationType
		ChannelID                  int64
		NamesExisting, NamesManual bool
		Patterns                   bool
	}
	if diff := cmp.Diff(note{hoard.NotifyGroupingConflict, ch.ID, true, true, true}, note{n.Type, n.ChannelID,
		strings.Contains(n.Title, existing.Name), strings.Contains(n.Title, manual.Name), jsonHas(t, n.Context, "patterns", []any{"drag"})}); diff != "" {
		t.Fatalf("notification %q, context %s (-want +got):\n%s", n.Title, n.Context, diff)
	}

	// Applying the same plan again changes nothing and notifies nothing.
	res, err = db.ApplyGroupingPlan(ctx, ch.ID, plan)
	must(t, err)
	if res.PackagesMoved != 0 || res.Conflicts != 0 {
		t.Fatalf("second apply = %+v", res)
	}
	// Dismissed, even cleaned up: the pair is never reported again.
	must(t, db.DismissNotification(ctx, n.ID))
	if _, err := db.Tx().Exec(ctx, `DELETE FROM system_notifications WHERE id = $1`, n.ID); err != nil {
		t.Fatal(err)
	}
	res, err = db.ApplyGroupingPlan(ctx, ch.ID, hoard.GroupingPlan{Conflicts: plan.Conflicts})
	must(t, err)
	if _, all := countConflictNotes(t, db, key); res.Conflicts != 0 || all != 0 {
		t.Fatalf("dismissed conflict raised again: %+v, %d rows", res, all)
	}
	// A pair with a deleted group is skipped, not an error; bad sources are.
	_, err = db.ApplyGroupingPlan(ctx, ch.ID, hoard.GroupingPlan{Conflicts: []hoard.GroupConflict{{GroupA: existing.ID, GroupB: -3}}})
	must(t, err)
	_, err = db.ApplyGroupingPlan(ctx, ch.ID, hoard.GroupingPlan{NewGroups: []hoard.NewGroupSpec{{Name: "x", Source: "AUTO_MAGIC", Key: "k", PackageIDs: []int64{a}}}})
	wantCode(t, err, hoard.EINVALID)
}

// jsonHas reports whether the JSON object doc has field equal to want (as
// decoded by encoding/json).
func jsonHas(t *testing.T, doc []byte, field string, want any) bool {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(m[field], want)
}

func TestApplyGroupingPlanMergesTimeGroups(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	ch := mustChannel(t, db)
	pkg := func() int64 { return mustPackage(t, db, inChannel(ch.ID)).ID }
	a, b, c, bridge := pkg(), pkg(), pkg(), pkg()
	older := mustGroup(t, db, ch.ID, hoard.GroupAutoTime, "t1", a)
	newer := mustGroup(t, db, ch.ID, hoard.GroupAutoTime, "t2", b)
	manual := mustGroup(t, db, ch.ID, hoard.GroupManual, "", c)
	res, err := db.ApplyGroupingPlan(ctx, ch.ID, hoard.GroupingPlan{
		Joins: []hoard.GroupJoin{{GroupID: older.ID, PackageIDs: []int64{bridge}}},
		Merges: []hoard.GroupMerge{{From: newer.ID, Into: older.ID},
			{From: manual.ID, Into: older.ID}}, // not a time group: left alone
	})
	must(t, err)
	if res != (store.GroupingResult{GroupsMerged: 1, PackagesMoved: 1}) {
		t.Fatalf("result = %+v", res)
	}
	for _, id := range []int64{a, b, bridge} {
		if g, _ := groupOf(t, db, id); g != older.ID {
			t.Errorf("package %d in group %d, want %d", id, g, older.ID)
		}
	}
	if g, _ := groupOf(t, db, c); g != manual.ID {
		t.Errorf("the manual group's package moved to %d", g)
	}
	if _, err := db.FindGroupByID(ctx, newer.ID); hoard.ErrorCode(err) != hoard.ENOTFOUND {
		t.Errorf("merged group still there: %v", err)
	}
}

// TestApplyGroupingPlanLongKeys: keys longer than a b-tree entry holds (a
// root folder of thousands of characters) are stored in a bounded form;
// the same key finds its group again, a different one with the same start
// does not.
func TestApplyGroupingPlanLongKeys(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	ch := mustChannel(t, db)
	pkg := func() int64 { return mustPackage(t, db, inChannel(ch.ID)).ID }
	a, b, c := pkg(), pkg(), pkg()
	var long strings.Builder
	for i := range 5000 { // distinct characters: no compression saves the index
		long.WriteRune(rune(0x4E00 + i*7919%20000))
	}
	key := long.String()
	spec := func(key string, ids ...int64) hoard.GroupingPlan {
		return hoard.GroupingPlan{NewGroups: []hoard.NewGroupSpec{{Name: "Deep", Source: hoard.GroupAutoZip, Key: key, PackageIDs: ids}}}
	}
	type result struct {
		Created      int
		SameGroup    bool
		OtherGroup   bool
		StoredKeyLen bool
	}
	res1, err := db.ApplyGroupingPlan(ctx, ch.ID, spec(key, a))
	must(t, err)
	res2, err := db.ApplyGroupingPlan(ctx, ch.ID, spec(key, b))
	must(t, err)
	res3, err := db.ApplyGroupingPlan(ctx, ch.ID, spec(key+"x", c))
	must(t, err)
	ga, _ := groupOf(t, db, a)
	gb, _ := groupOf(t, db, b)
	gc, _ := groupOf(t, db, c)
	g, err := db.FindGroupByID(ctx, ga)
	must(t, err)
	got := result{Created: res1.GroupsCreated + res2.GroupsCreated + res3.GroupsCreated, SameGroup: ga != 0 && ga == gb,
		OtherGroup: gc != 0 && gc != ga, StoredKeyLen: len(g.GroupingKey) <= 512}
	if want := (result{Created: 2, SameGroup: true, OtherGroup: true, StoredKeyLen: true}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// TestApplyGroupingPlanRegroup: the plan of a re-evaluation moves packages
// out of automatic groups, ungroups them, dissolves the automatic groups left
// empty and renames and re-keys automatic ones; it never touches a MANUAL
// group, and a plan without Regroup moves no grouped package.
func TestApplyGroupingPlanRegroup(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	ch := mustChannel(t, db)
	p := make([]int64, 6)
	for i := range p {
		p[i] = mustPackage(t, db, inChannel(ch.ID)).ID
	}
	a := mustGroup(t, db, ch.ID, hoard.GroupAutoTime, "2024-01-01T00:00:00Z", p[0], p[1])
	b := mustGroup(t, db, ch.ID, hoard.GroupAutoCaption, "dragon lord", p[2])
	c := mustGroup(t, db, ch.ID, hoard.GroupAutoCaption, "knight", p[5])
	manual := mustGroup(t, db, ch.ID, hoard.GroupManual, "", p[3])

	// Without Regroup a grouped package stays.
	res, err := db.ApplyGroupingPlan(ctx, ch.ID, hoard.GroupingPlan{Joins: []hoard.GroupJoin{{GroupID: b.ID, PackageIDs: []int64{p[0]}}}})
	must(t, err)
	if gid, _ := groupOf(t, db, p[0]); gid != a.ID || res.PackagesMoved != 0 {
		t.Fatalf("without Regroup: package in %d, %+v", gid, res)
	}

	plan := hoard.GroupingPlan{
		Regroup:  true,
		Joins:    []hoard.GroupJoin{{GroupID: b.ID, PackageIDs: []int64{p[0], p[3]}}},
		Ungroup:  []int64{p[1], p[3]},
		Dissolve: []int64{a.ID, manual.ID, c.ID},
		Renames: []hoard.GroupRename{{GroupID: b.ID, Name: "Dragon Lord", Key: "dragon lord collection"},
			{GroupID: manual.ID, Name: "Renamed", Key: "x"}, {GroupID: c.ID, Name: "Clash", Key: "dragon lord collection"}},
	}
	res, err = db.ApplyGroupingPlan(ctx, ch.ID, plan)
	must(t, err)
	want := store.GroupingResult{PackagesMoved: 1, PackagesUngrouped: 1, GroupsDissolved: 1, GroupsRenamed: 2}
	if res != want {
		t.Fatalf("result = %+v, want %+v", res, want)
	}
	for _, tt := range []struct {
		pkg, group int64
	}{{p[0], b.ID}, {p[1], 0}, {p[2], b.ID}, {p[3], manual.ID}, {p[4], 0}, {p[5], c.ID}} {
		if gid, _ := groupOf(t, db, tt.pkg); gid != tt.group {
			t.Errorf("package %d in group %d, want %d", tt.pkg, gid, tt.group)
		}
	}
	if groupExists(t, db, a.ID) || !groupExists(t, db, manual.ID) || !groupExists(t, db, c.ID) {
		t.Fatal("dissolved the wrong groups")
	}
	for _, tt := range []struct {
		id        int64
		name, key string
	}{{b.ID, "Dragon Lord", "dragon lord collection"}, {manual.ID, manual.Name, ""}, {c.ID, "Clash", "knight"}} {
		g, err := db.FindGroupByID(ctx, tt.id)
		must(t, err)
		if g.Name != tt.name || g.GroupingKey != tt.key {
			t.Errorf("group %d = %q key %q, want %q key %q", tt.id, g.Name, g.GroupingKey, tt.name, tt.key)
		}
	}
}

// groupRow is what the group tests check of a stored group.
type groupRow struct {
	HasID, HasCreatedAt bool
	Name                string
	Source              hoard.GroupingSource
	Key                 string
	SourceChannelID     int64
	Members             int
	HasPreview          bool
}

func groupRowOf(g *hoard.PackageGroup) groupRow {
	return groupRow{g.ID != 0, !g.CreatedAt.IsZero(), g.Name, g.GroupingSource, g.GroupingKey, g.SourceChannelID, g.MemberCount, g.HasPreview}
}
