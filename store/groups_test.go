package store_test

import (
	"context"
	"strings"
	"testing"

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
	if g.ID == 0 || g.Name != "Dragons 2024-01" || g.GroupingSource != hoard.GroupAutoPattern || g.GroupingKey != "2024-01" ||
		g.SourceChannelID != ch.ID || g.MemberCount != 0 || g.HasPreview || g.CreatedAt.IsZero() {
		t.Fatalf("created group = %+v", g)
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
	if got.ID != g.ID || got.Name != "Album" || got.GroupingSource != hoard.GroupAlbum || got.GroupingKey != "555" ||
		got.SourceChannelID != ch.ID || got.MemberCount != 0 || !got.CreatedAt.Equal(g.CreatedAt) {
		t.Fatalf("FindGroupByID = %+v", got)
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
