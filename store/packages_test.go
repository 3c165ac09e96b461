package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

func TestCreateAndFindPackage(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	ch := mustChannel(t, db)
	posted := time.Date(2024, 1, 5, 10, 0, 0, 0, time.UTC)
	p := mustPackage(t, db, func(p *hoard.Package) {
		p.FileName = "Mammoth Factory - 2024-01.zip"
		p.Creator = "Mammoth Factory"
		p.Tags = []string{"STL", "Fantasy"}
		p.SourceChannelID = ch.ID
		p.SourceMessageID = 10
		p.SourceMessageIDs = []int64{10, 11}
		p.SourceCaption = "January"
		p.SourcePostedAt = posted
		p.RemoteUniqueID = "uniq-1"
		p.PreviewData = []byte{0xff, 0xd8}
		p.PreviewMsgID = 9
		p.PartCount = 2
	})
	if p.ID == 0 || !p.HasPreview || p.CreatedAt.IsZero() {
		t.Fatalf("CreatePackage did not fill id/has_preview/created_at: %+v", p)
	}
	got, err := db.FindPackageByID(ctx, p.ID)
	must(t, err)
	type found struct {
		FileName, Creator                            string
		Tags                                         []string
		SourceChannelID, PreviewMsgID, DestChannelID int64
		SourceMessageIDs                             []int64
		SourcePostedAt                               time.Time
		PartCount                                    int
		HasPreview                                   bool
		PreviewData                                  []byte
	}
	want := found{p.FileName, "Mammoth Factory", []string{"STL", "Fantasy"}, ch.ID, 9, 0, []int64{10, 11}, posted, 2, true, nil}
	if diff := cmp.Diff(want, found{got.FileName, got.Creator, got.Tags, got.SourceChannelID, got.PreviewMsgID, got.DestChannelID,
		got.SourceMessageIDs, got.SourcePostedAt, got.PartCount, got.HasPreview, got.PreviewData}); diff != "" {
		t.Fatalf("FindPackageByID (-want +got):\n%s", diff)
	}
	preview, err := db.FindPackagePreview(ctx, p.ID)
	must(t, err)
	if !slices.Equal(preview, []byte{0xff, 0xd8}) {
		t.Fatalf("preview = %x", preview)
	}

	for name, find := range map[string]func() (*hoard.Package, error){
		"hash":          func() (*hoard.Package, error) { return db.FindPackageByContentHash(ctx, p.ContentHash) },
		"remote id":     func() (*hoard.Package, error) { return db.FindPackageByRemoteUniqueID(ctx, ch.ID, "uniq-1") },
		"first message": func() (*hoard.Package, error) { return db.FindPackageBySourceMessage(ctx, ch.ID, 10) },
		"other part":    func() (*hoard.Package, error) { return db.FindPackageBySourceMessage(ctx, ch.ID, 11) },
		"name and size": func() (*hoard.Package, error) { return db.FindPackageByNameAndSize(ctx, p.FileName, p.FileSize) },
	} {
		got, err := find()
		if err != nil || got.ID != p.ID {
			t.Errorf("find by %s = %v, %v; want package %d", name, got, err, p.ID)
		}
	}
	for name, find := range map[string]func() (*hoard.Package, error){
		"unknown id":      func() (*hoard.Package, error) { return db.FindPackageByID(ctx, -1) },
		"other channel":   func() (*hoard.Package, error) { return db.FindPackageByRemoteUniqueID(ctx, ch.ID+1, "uniq-1") },
		"other message":   func() (*hoard.Package, error) { return db.FindPackageBySourceMessage(ctx, ch.ID, 12) },
		"other size":      func() (*hoard.Package, error) { return db.FindPackageByNameAndSize(ctx, p.FileName, p.FileSize+1) },
		"other hash":      func() (*hoard.Package, error) { return db.FindPackageByContentHash(ctx, "0") },
		"preview missing": func() (*hoard.Package, error) { _, err := db.FindPackagePreview(ctx, -1); return nil, err },
	} {
		_, err := find()
		if hoard.ErrorCode(err) != hoard.ENOTFOUND {
			t.Errorf("find by %s: err = %v, want not found", name, err)
		}
	}
}

func TestCreatePackageRejectsBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name   string
		mutate func(*hoard.Package)
		code   string
	}{
		{"unknown archive type", func(p *hoard.Package) { p.ArchiveType = "TAR" }, hoard.EINVALID},
		{"malformed hash", func(p *hoard.Package) { p.ContentHash = "xyz" }, hoard.EINVALID},
		{"empty name", func(p *hoard.Package) { p.FileName = "" }, hoard.EINVALID},
		{"negative size", func(p *hoard.Package) { p.FileSize = -1 }, hoard.EINVALID},
		{"unknown channel", func(p *hoard.Package) { p.SourceChannelID = -5 }, hoard.EINVALID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := storetest.NewTx(t)
			p := &hoard.Package{FileName: "a.zip", FileSize: 1, ArchiveType: hoard.ArchiveZIP,
				ContentHash: "0000000000000000000000000000000000000000000000000000000000000001"}
			tt.mutate(p)
			wantCode(t, db.CreatePackage(ctx, p), tt.code)
		})
	}
	t.Run("duplicate content hash", func(t *testing.T) {
		db := storetest.NewTx(t)
		p := mustPackage(t, db)
		dup := &hoard.Package{FileName: "b.zip", FileSize: 2, ArchiveType: hoard.ArchiveZIP, ContentHash: p.ContentHash}
		wantCode(t, db.CreatePackage(ctx, dup), hoard.ECONFLICT)
	})
}

func TestPackageDestinationPreviewCreator(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	dest := mustChannel(t, db, func(c *hoard.Channel) { c.Kind = hoard.ChannelDestination })
	p := mustPackage(t, db)

	wantCode(t, db.SetPackageDestination(ctx, p.ID, dest.ID, nil), hoard.EINVALID)
	wantCode(t, db.SetPackageDestination(ctx, -1, dest.ID, []int64{1}), hoard.ENOTFOUND)
	must(t, db.SetPackageDestination(ctx, p.ID, dest.ID, []int64{101, 102, 103}))
	got, err := db.FindPackageByID(ctx, p.ID)
	must(t, err)
	if got.DestChannelID != dest.ID || got.DestMessageID != 101 || !slices.Equal(got.DestMessageIDs, []int64{101, 102, 103}) {
		t.Fatalf("destination = %d %d %v", got.DestChannelID, got.DestMessageID, got.DestMessageIDs)
	}
	must(t, db.ClearPackageDestination(ctx, p.ID))
	got, _ = db.FindPackageByID(ctx, p.ID)
	if got.DestChannelID != 0 || got.DestMessageID != 0 || len(got.DestMessageIDs) != 0 {
		t.Fatalf("after clear: %d %d %v", got.DestChannelID, got.DestMessageID, got.DestMessageIDs)
	}
	wantCode(t, db.ClearPackageDestination(ctx, -1), hoard.ENOTFOUND)

	must(t, db.SetPackagePreview(ctx, p.ID, []byte("png"), 0))
	got, _ = db.FindPackageByID(ctx, p.ID)
	if !got.HasPreview || got.PreviewMsgID != 0 {
		t.Fatalf("preview set: has=%v msg=%d", got.HasPreview, got.PreviewMsgID)
	}
	must(t, db.SetPackagePreview(ctx, p.ID, nil, 0))
	got, _ = db.FindPackageByID(ctx, p.ID)
	if got.HasPreview {
		t.Fatal("preview removed but HasPreview is true")
	}
	wantCode(t, db.SetPackagePreview(ctx, -1, nil, 0), hoard.ENOTFOUND)

	must(t, db.SetPackageCreator(ctx, []int64{p.ID}, "  Someone  "))
	got, _ = db.FindPackageByID(ctx, p.ID)
	if got.Creator != "Someone" {
		t.Fatalf("creator = %q", got.Creator)
	}
	must(t, db.SetPackageCreator(ctx, []int64{p.ID}, ""))
	got, _ = db.FindPackageByID(ctx, p.ID)
	if got.Creator != "" {
		t.Fatalf("creator after clear = %q", got.Creator)
	}
}

func TestEditPackageTags(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name    string
		initial []string
		edit    func() (set, add, remove []string)
		want    []string
	}{
		{"add keeps order and uniqueness", []string{"STL", "Dragons"}, func() ([]string, []string, []string) {
			return nil, []string{"Dragons", " Busts ", ""}, nil
		}, []string{"STL", "Dragons", "Busts"}},
		{"remove", []string{"STL", "Dragons", "Busts"}, func() ([]string, []string, []string) {
			return nil, nil, []string{"Dragons"}
		}, []string{"STL", "Busts"}},
		{"set replaces", []string{"STL"}, func() ([]string, []string, []string) {
			return []string{"A", "B", "A"}, nil, nil
		}, []string{"A", "B"}},
		{"set empty clears", []string{"STL"}, func() ([]string, []string, []string) {
			return []string{}, nil, nil
		}, []string{}},
		{"set then add then remove", []string{"X"}, func() ([]string, []string, []string) {
			return []string{"A"}, []string{"B", "C"}, []string{"A"}
		}, []string{"B", "C"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A database of its own: a transaction of the shared one would
			// hold these common tags' catalog names across two packages
			// while parallel tests write them too.
			db := storetest.NewDB(t)
			p := mustPackage(t, db, func(p *hoard.Package) { p.Tags = tt.initial })
			other := mustPackage(t, db, func(p *hoard.Package) { p.Tags = []string{"untouched"} })
			set, add, remove := tt.edit()
			n, err := db.EditPackageTags(ctx, []int64{p.ID}, storeTagEdit(set, add, remove))
			must(t, err)
			got, _ := db.FindPackageByID(ctx, p.ID)
			if !slices.Equal(got.Tags, tt.want) {
				t.Fatalf("tags = %q, want %q", got.Tags, tt.want)
			}
			if wantN := int64(1); slices.Equal(tt.initial, tt.want) && n != 0 || !slices.Equal(tt.initial, tt.want) && n != wantN {
				t.Fatalf("changed = %d", n)
			}
			o, _ := db.FindPackageByID(ctx, other.ID)
			if !slices.Equal(o.Tags, []string{"untouched"}) {
				t.Fatalf("other package changed: %q", o.Tags)
			}
		})
	}
}

// TestEditPackageTagsMax: an edit that would give a package more than Max
// tags is refused whole — no package of the bulk edit changes.
func TestEditPackageTagsMax(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewTx(t)
	three := []string{"a", "b", "c"}
	full := mustPackage(t, db, func(p *hoard.Package) { p.Tags = three })
	empty := mustPackage(t, db, func(p *hoard.Package) { p.Tags = []string{} })
	ids := []int64{full.ID, empty.ID}

	_, err := db.EditPackageTags(ctx, ids, store.TagEdit{Add: []string{"d"}, Max: 3})
	wantCode(t, err, hoard.EINVALID)
	for _, p := range []*hoard.Package{full, empty} {
		got, _ := db.FindPackageByID(ctx, p.ID)
		if !slices.Equal(got.Tags, p.Tags) {
			t.Fatalf("package %d changed to %q by a refused edit", p.ID, got.Tags)
		}
	}
	// Up to the bound is fine, and so is an edit that only removes.
	n, err := db.EditPackageTags(ctx, ids, store.TagEdit{Set: []string{"x", "y", "z"}, Max: 3})
	must(t, err)
	if n != 2 {
		t.Fatalf("%d changed, want 2", n)
	}
	// A package over the bound (the bound fell) may still lose tags, or
	// swap one, but not grow.
	n, err = db.EditPackageTags(ctx, ids, store.TagEdit{Remove: []string{"x"}, Max: 1})
	must(t, err)
	if n != 2 {
		t.Fatalf("%d changed, want 2", n)
	}
	_, err = db.EditPackageTags(ctx, ids, store.TagEdit{Set: []string{"p", "q"}, Max: 1})
	must(t, err)
	_, err = db.EditPackageTags(ctx, []int64{full.ID}, store.TagEdit{Add: []string{"r"}, Max: 1})
	wantCode(t, err, hoard.EINVALID)
}

func TestRetagChannelPackages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name     string
		tags     []string
		old, new string
		want     []string
	}{
		{"replace category", []string{"STL", "Dragons"}, "STL", "3D", []string{"3D", "Dragons"}},
		{"new category first", []string{"Dragons"}, "", "STL", []string{"STL", "Dragons"}},
		{"category removed", []string{"STL", "Dragons"}, "STL", "", []string{"Dragons"}},
		{"no duplicate when tag already present", []string{"Dragons", "3D"}, "STL", "3D", []string{"3D", "Dragons"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := storetest.NewTx(t)
			ch := mustChannel(t, db)
			other := mustChannel(t, db)
			p := mustPackage(t, db, func(p *hoard.Package) { p.SourceChannelID = ch.ID; p.Tags = tt.tags })
			q := mustPackage(t, db, func(p *hoard.Package) { p.SourceChannelID = other.ID; p.Tags = tt.tags })
			n, err := db.RetagChannelPackages(ctx, ch.ID, tt.old, tt.new)
			must(t, err)
			if n != 1 {
				t.Fatalf("retagged %d packages, want 1", n)
			}
			got, _ := db.FindPackageByID(ctx, p.ID)
			if !slices.Equal(got.Tags, tt.want) {
				t.Fatalf("tags = %q, want %q", got.Tags, tt.want)
			}
			gotQ, _ := db.FindPackageByID(ctx, q.ID)
			if !slices.Equal(gotQ.Tags, tt.tags) {
				t.Fatalf("other channel's package retagged: %q", gotQ.Tags)
			}
		})
	}
}

func TestListPackagesAndUngrouped(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	ch := mustChannel(t, db)
	g := &hoard.PackageGroup{Name: "Group", GroupingSource: hoard.GroupManual, SourceChannelID: ch.ID}
	must(t, db.CreateGroup(ctx, g))
	var ids []int64
	for i := 0; i < 7; i++ {
		p := mustPackage(t, db, func(p *hoard.Package) {
			p.SourceChannelID = ch.ID
			p.Creator = "Maker"
			p.Tags = []string{"STL"}
			if i%2 == 0 {
				p.ArchiveType = hoard.ArchiveRAR
				p.Tags = []string{"STL", "Odd"}
			}
		})
		ids = append(ids, p.ID)
	}
	must(t, db.SetPackageGroup(ctx, ids[:2], g.ID))

	// Keyset pages of 3 cover every package exactly once, newest first.
	var seen []int64
	var cur *storeCursor
	for page := 0; page < 5; page++ {
		items, next, err := db.ListPackages(ctx, storeFilter(ch.ID), cur, 3)
		must(t, err)
		for _, it := range items {
			seen = append(seen, it.ID)
		}
		if next == nil {
			break
		}
		cur = next
	}
	want := slices.Clone(ids)
	slices.Reverse(want)
	if !slices.Equal(seen, want) {
		t.Fatalf("paged ids = %v, want %v", seen, want)
	}

	filters := []struct {
		name string
		f    func() (int, error)
		want int
	}{
		{"archive type", func() (int, error) {
			return count(db.ListPackages(ctx, storeFilterType(ch.ID, hoard.ArchiveRAR), nil, 50))
		}, 4},
		{"creator case-insensitive", func() (int, error) { return count(db.ListPackages(ctx, storeFilterCreator(ch.ID, "maker"), nil, 50)) }, 7},
		{"tags all present", func() (int, error) { return count(db.ListPackages(ctx, storeFilterTags(ch.ID, "STL", "Odd"), nil, 50)) }, 4},
		{"group", func() (int, error) { return count(db.ListPackages(ctx, storeFilterGroup(g.ID), nil, 50)) }, 2},
		{"ungrouped", func() (int, error) { return count(db.ListUngroupedPackages(ctx, nil, 50)) }, 5},
	}
	for _, tt := range filters {
		n, err := tt.f()
		must(t, err)
		if n != tt.want {
			t.Errorf("%s: %d packages, want %d", tt.name, n, tt.want)
		}
	}
	n, err := db.CountUngroupedPackages(ctx)
	must(t, err)
	if n != 5 {
		t.Fatalf("CountUngroupedPackages = %d, want 5", n)
	}
	got, _ := db.FindGroupByID(ctx, g.ID)
	if got.MemberCount != 2 {
		t.Fatalf("group member count = %d", got.MemberCount)
	}
	must(t, db.SetPackageGroup(ctx, ids[:1], 0))
	n, _ = db.CountUngroupedPackages(ctx)
	if n != 6 {
		t.Fatalf("after ungrouping one: %d ungrouped", n)
	}
}

func TestAuditQueries(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	dest := mustChannel(t, db, func(c *hoard.Channel) { c.Kind = hoard.ChannelDestination })
	complete := mustPackage(t, db, func(p *hoard.Package) { p.PartCount = 3 })
	missing := mustPackage(t, db, func(p *hoard.Package) { p.PartCount = 3 })
	legacy := mustPackage(t, db, func(p *hoard.Package) { p.PartCount = 3 })
	orphan := mustPackage(t, db)
	must(t, db.SetPackageDestination(ctx, complete.ID, dest.ID, []int64{1, 2, 3}))
	must(t, db.SetPackageDestination(ctx, missing.ID, dest.ID, []int64{4, 5}))
	must(t, db.SetPackageDestination(ctx, legacy.ID, dest.ID, []int64{6}))
	must(t, db.SetPackageDestination(ctx, orphan.ID, dest.ID, []int64{7}))
	// An orphan: destination channel set, message gone.
	_, err := db.Tx().Exec(ctx, `UPDATE packages SET dest_message_id = NULL WHERE id = $1`, orphan.ID)
	must(t, err)

	inc, err := db.ListIncompleteMultipartPackages(ctx)
	must(t, err)
	if len(inc) != 1 || inc[0].ID != missing.ID {
		t.Fatalf("incomplete = %v, want only %d", ids(inc), missing.ID)
	}
	orph, err := db.ListOrphanedPackages(ctx)
	must(t, err)
	if len(orph) != 1 || orph[0].ID != orphan.ID {
		t.Fatalf("orphaned = %v, want only %d", ids(orph), orphan.ID)
	}
}

func TestDeletePackageAndChannelKeepsPackages(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	ch := mustChannel(t, db)
	p := mustPackage(t, db, func(p *hoard.Package) { p.SourceChannelID = ch.ID })
	must(t, db.DeleteChannel(ctx, ch.ID))
	got, err := db.FindPackageByID(ctx, p.ID)
	must(t, err)
	if got.SourceChannelID != 0 {
		t.Fatalf("package still points at deleted channel %d", got.SourceChannelID)
	}
	must(t, db.DeletePackage(ctx, p.ID))
	wantCode(t, db.DeletePackage(ctx, p.ID), hoard.ENOTFOUND)
}
