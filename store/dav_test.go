package store_test

import (
	"context"
	"reflect"
	"strconv"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// mustNamedGroup stores a manual group named name.
func mustNamedGroup(t *testing.T, db *store.DB, name string) *hoard.PackageGroup {
	t.Helper()
	g := &hoard.PackageGroup{Name: name, GroupingSource: hoard.GroupManual}
	must(t, db.CreateGroup(context.Background(), g))
	return g
}

// publishedTo makes mustPackage store a package published to dest.
func publishedTo(dest *hoard.Channel) func(*hoard.Package) {
	return func(p *hoard.Package) {
		id := seq.Add(1)
		p.DestChannelID, p.DestMessageID, p.DestMessageIDs = dest.ID, id, []int64{id}
	}
}

func TestDavFolders(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t) // listings read whole tables' worth: no other test's rows
	ctx := context.Background()
	dest := mustChannel(t, db, func(c *hoard.Channel) { c.Kind = hoard.ChannelDestination })
	pub := publishedTo(dest)
	g1, g2, g3, g4 := mustNamedGroup(t, db, "Dragons"), mustNamedGroup(t, db, "a/b"), mustNamedGroup(t, db, "Unpublished"), mustNamedGroup(t, db, "Dragons")
	with := func(creator string, groupID int64, tags ...string) func(*hoard.Package) {
		return func(p *hoard.Package) { p.Creator, p.PackageGroupID, p.Tags = creator, groupID, tags }
	}
	a := mustPackage(t, db, pub, with("alice", g1.ID, "minis", "dragons"))
	b := mustPackage(t, db, pub, with("Alice", 0, "minis"))
	mustPackage(t, db, with("Bob", g3.ID, "terrain")) // not published: Bob, terrain and g3 are not listed
	d := mustPackage(t, db, pub, with("Zed/Ω", g2.ID, "b/c"))
	e := mustPackage(t, db, pub, with("", g4.ID))
	mustPackage(t, db, func(p *hoard.Package) { p.DestChannelID = dest.ID }) // a destination but no posts

	list := func(f store.DavPackageFolder) func() (any, error) {
		return func() (any, error) {
			pkgs, err := db.ListDavPackages(ctx, f)
			return ids(pkgs), err
		}
	}
	type found struct {
		Name string
		OK   bool
	}
	creator := func(name string) func() (any, error) {
		return func() (any, error) {
			got, ok, err := db.FindDavCreator(ctx, name)
			return found{got, ok}, err
		}
	}
	tag := func(name string) func() (any, error) {
		return func() (any, error) {
			ok, err := db.HasDavTag(ctx, name)
			return ok, err
		}
	}
	group := func(name string) func() (any, error) {
		return func() (any, error) {
			g, ok, err := db.FindDavGroupByName(ctx, name)
			return found{g.Name + "#" + strconv.FormatInt(g.ID, 10), ok}, err
		}
	}
	tests := []struct {
		name string
		got  func() (any, error)
		want any
	}{
		{"creators", func() (any, error) { return db.ListDavCreators(ctx) }, []string{"Alice", "Zed/Ω"}},
		{"creator any case", creator("ALICE"), found{"Alice", true}},
		{"creator unpublished", creator("Bob"), found{"", false}},
		{"creator unknown", creator("Nobody"), found{"", false}},
		{"tags", func() (any, error) { return db.ListDavTags(ctx) }, []string{"b/c", "dragons", "minis"}},
		{"tag", tag("minis"), true},
		{"tag is exact", tag("Minis"), false},
		{"tag unpublished", tag("terrain"), false},
		{"groups", func() (any, error) { return db.ListDavGroups(ctx) },
			[]store.DavGroup{{ID: g1.ID, Name: "Dragons"}, {ID: g2.ID, Name: "a/b"}, {ID: g4.ID, Name: "Dragons"}}},
		{"group: the oldest of a name", group("Dragons"), found{"Dragons#" + strconv.FormatInt(g1.ID, 10), true}},
		{"group unpublished", group("Unpublished"), found{"#0", false}},
		{"packages of a creator", list(store.DavPackageFolder{Creator: "ALICE"}), []int64{b.ID, a.ID}},
		{"packages of a tag", list(store.DavPackageFolder{Tag: "minis"}), []int64{b.ID, a.ID}},
		{"packages of a group", list(store.DavPackageFolder{GroupID: g1.ID}), []int64{a.ID}},
		{"packages of an unpublished group", list(store.DavPackageFolder{GroupID: g3.ID}), []int64{}},
		{"latest", list(store.DavPackageFolder{Latest: true}), []int64{e.ID, d.ID, b.ID, a.ID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.got()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
	_, err := db.ListDavPackages(ctx, store.DavPackageFolder{})
	wantCode(t, err, hoard.EINVALID)
}

// TestDavPaging checks that listings read page by page return every row
// once, in order, up to their bound.
func TestDavPaging(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	ctx := context.Background()
	dest := mustChannel(t, db, func(c *hoard.Channel) { c.Kind = hoard.ChannelDestination })
	// 10,050 packages of one creator and tag, three at each instant (ties
	// across page boundaries), then 1,200 with a creator, tag and group each.
	_, err := db.Pool().Exec(ctx, `
		INSERT INTO packages (file_name, file_size, archive_type, creator, tags, dest_channel_id, dest_message_ids, created_at)
		SELECT 'many ' || i || '.zip', i, 'ZIP', 'Many', '{bulk}', $1, ARRAY[i::bigint], '2024-01-01'::timestamptz + (i / 3) * interval '1 second'
		FROM generate_series(1, 10050) i`, dest.ID)
	must(t, err)
	_, err = db.Pool().Exec(ctx, `
		WITH g AS (INSERT INTO package_groups (name) SELECT 'group ' || i FROM generate_series(1, 1200) i RETURNING id, name)
		INSERT INTO packages (file_name, file_size, archive_type, creator, tags, package_group_id, dest_channel_id, dest_message_ids)
		SELECT 'solo.zip', 1, 'ZIP', 'solo ' || g.id, ARRAY['tag ' || g.id], g.id, $1, ARRAY[20000 + g.id]
		FROM g`, dest.ID)
	must(t, err)

	want := func(sql string) []int64 {
		rows, err := db.Pool().Query(ctx, sql)
		must(t, err)
		defer rows.Close()
		var out []int64
		for rows.Next() {
			var id int64
			must(t, rows.Scan(&id))
			out = append(out, id)
		}
		must(t, rows.Err())
		return out
	}
	newest := `SELECT id FROM packages WHERE creator = 'Many' ORDER BY created_at DESC, id DESC LIMIT `
	pkgs, err := db.ListDavPackages(ctx, store.DavPackageFolder{Creator: "many"})
	must(t, err)
	if got, want := ids(pkgs), want(newest+"10000"); !reflect.DeepEqual(got, want) {
		t.Errorf("packages of a creator: %d ids, want the %d newest in order", len(got), len(want))
	}
	pkgs, err = db.ListDavPackages(ctx, store.DavPackageFolder{Latest: true})
	must(t, err)
	if got, want := ids(pkgs), want(`SELECT id FROM packages ORDER BY created_at DESC, id DESC LIMIT 100`); !reflect.DeepEqual(got, want) {
		t.Errorf("latest = %v, want %v", got, want)
	}

	creators, err := db.ListDavCreators(ctx)
	must(t, err)
	tags, err := db.ListDavTags(ctx)
	must(t, err)
	groups, err := db.ListDavGroups(ctx)
	must(t, err)
	if len(creators) != 1201 || creators[0] != "Many" || !sortedUnique(creators[1:]) {
		t.Errorf("creators: %d, first %q, want 1201 in order", len(creators), creators[0])
	}
	if len(tags) != 1201 || tags[0] != "bulk" || !sortedUnique(tags[1:]) {
		t.Errorf("tags: %d, first %q, want 1201 in order", len(tags), tags[0])
	}
	var groupIDs []int64
	for _, g := range groups {
		groupIDs = append(groupIDs, g.ID)
	}
	if want := want(`SELECT id FROM package_groups ORDER BY id`); !reflect.DeepEqual(groupIDs, want) {
		t.Errorf("groups: %d, want %d in order", len(groupIDs), len(want))
	}
}

// sortedUnique reports whether names are strictly increasing in byte order.
func sortedUnique(names []string) bool {
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			return false
		}
	}
	return true
}
