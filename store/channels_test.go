package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

func TestUpsertChannelDefaults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name       string
		in         hoard.Channel
		wantKind   hoard.ChannelKind
		wantActive bool
	}{
		{"kind defaults to source, inactive", hoard.Channel{}, hoard.ChannelSource, false},
		{"source inactive", hoard.Channel{Kind: hoard.ChannelSource}, hoard.ChannelSource, false},
		{"source created active on request", hoard.Channel{Kind: hoard.ChannelSource, IsActive: true}, hoard.ChannelSource, true},
		{"destination active", hoard.Channel{Kind: hoard.ChannelDestination}, hoard.ChannelDestination, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := storetest.NewTx(t)
			c := tt.in
			c.PlatformID = 5_000_000 + seq.Add(1)
			c.Title = "  Title  "
			c.Category = "  Minis "
			c.IsForum = true
			must(t, db.UpsertChannel(ctx, &c))
			type stored struct {
				HasID, HasCreatedAt, AccessLost                  bool
				Kind                                             hoard.ChannelKind
				IsActive, AutoGroupEnabled, IsForum, IsProtected bool
				Category, Username                               string
			}
			want := stored{HasID: true, HasCreatedAt: true, Kind: tt.wantKind, IsActive: tt.wantActive, AutoGroupEnabled: true,
				IsForum: true, Category: "Minis"}
			have := stored{c.ID != 0, !c.CreatedAt.IsZero(), c.AccessLostAt != nil, c.Kind, c.IsActive, c.AutoGroupEnabled, c.IsForum,
				c.IsProtected, c.Category, c.Username}
			if diff := cmp.Diff(want, have); diff != "" {
				t.Fatalf("stored channel (-want +got):\n%s", diff)
			}
			got, err := db.FindChannelByID(ctx, c.ID)
			must(t, err)
			if got.PlatformID != c.PlatformID || got.Kind != tt.wantKind || got.IsActive != tt.wantActive {
				t.Fatalf("FindChannelByID = %+v", got)
			}
		})
	}
	t.Run("auto-grouping always starts enabled", func(t *testing.T) {
		db := storetest.NewTx(t)
		c := mustChannel(t, db, func(c *hoard.Channel) { c.AutoGroupEnabled = false })
		if !c.AutoGroupEnabled {
			t.Fatal("new channel has auto-grouping disabled")
		}
	})
	t.Run("invalid kind", func(t *testing.T) {
		db := storetest.NewTx(t)
		c := &hoard.Channel{PlatformID: 5_000_000 + seq.Add(1), Kind: "MIRROR"}
		wantCode(t, savepoint(db, func(tx *store.DB) error { return tx.UpsertChannel(ctx, c) }), hoard.EINVALID)
	})
	t.Run("category too long", func(t *testing.T) {
		db := storetest.NewTx(t)
		c := &hoard.Channel{PlatformID: 5_000_000 + seq.Add(1), Category: strings.Repeat("x", 65)}
		wantCode(t, savepoint(db, func(tx *store.DB) error { return tx.UpsertChannel(ctx, c) }), hoard.EINVALID)
	})
}

func TestUpsertChannelUpdatesPlatformFieldsOnly(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	first := mustChannel(t, db, func(c *hoard.Channel) {
		c.Title = "Old"
		c.Username = "old_name"
		c.InviteLink = "https://t.me/+old"
		c.Category = "Minis"
	})
	// hoard's own settings changed by an administrator.
	_, _, err := db.UpdateChannelSettings(ctx, first.ID, store.ChannelSettings{IsActive: ptr(true), AutoGroupEnabled: ptr(false)})
	must(t, err)

	second := &hoard.Channel{
		PlatformID:  first.PlatformID,
		Title:       "New",
		Username:    "new_name",
		Kind:        hoard.ChannelDestination, // ignored for a known channel
		Category:    "Terrain",                // ignored
		IsActive:    false,                    // ignored
		IsForum:     true,
		IsProtected: true,
	}
	must(t, db.UpsertChannel(ctx, second))
	want := upserted{ID: first.ID, Title: "New", Username: "new_name", InviteLink: "https://t.me/+old", IsForum: true, IsProtected: true,
		Kind: hoard.ChannelSource, Category: "Minis", IsActive: true}
	if diff := cmp.Diff(want, upsertedOf(second)); diff != "" {
		t.Fatalf("after second upsert (-want +got):\n%s", diff)
	}

	// Empty username and invite link do not erase the stored ones; flags
	// follow the platform both ways.
	third := &hoard.Channel{PlatformID: first.PlatformID, Title: "Newest"}
	must(t, db.UpsertChannel(ctx, third))
	got, err := db.FindChannelByPlatformID(ctx, first.PlatformID)
	must(t, err)
	want = upserted{ID: first.ID, Title: "Newest", Username: "new_name", InviteLink: "https://t.me/+old", Category: "Minis", IsActive: true,
		Kind: got.Kind, AutoGroupEnabled: got.AutoGroupEnabled}
	if diff := cmp.Diff(want, upsertedOf(got)); diff != "" {
		t.Fatalf("after third upsert (-want +got):\n%s", diff)
	}
	if !got.UpdatedAt.After(first.UpdatedAt) && !got.UpdatedAt.Equal(first.UpdatedAt) {
		t.Fatalf("updated_at went back: %v < %v", got.UpdatedAt, first.UpdatedAt)
	}
}

func TestFindChannel(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	c := mustChannel(t, db, func(c *hoard.Channel) { c.Username = "findme" })
	byID, err := db.FindChannelByID(ctx, c.ID)
	must(t, err)
	byPlatform, err := db.FindChannelByPlatformID(ctx, c.PlatformID)
	must(t, err)
	if byID.ID != c.ID || byPlatform.ID != c.ID || byID.Username != "findme" || byPlatform.Title != c.Title {
		t.Fatalf("found %+v and %+v, want channel %d", byID, byPlatform, c.ID)
	}
	_, err = db.FindChannelByID(ctx, -1)
	wantCode(t, err, hoard.ENOTFOUND)
	_, err = db.FindChannelByPlatformID(ctx, -1)
	wantCode(t, err, hoard.ENOTFOUND)
}

func TestFindDestinationChannel(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	_, err := db.FindDestinationChannel(ctx)
	wantCode(t, err, hoard.ENOTFOUND)

	mustChannel(t, db, activeSource) // a source never counts
	first := mustChannel(t, db, func(c *hoard.Channel) { c.Kind = hoard.ChannelDestination })
	second := mustChannel(t, db, func(c *hoard.Channel) { c.Kind = hoard.ChannelDestination })
	got, err := db.FindDestinationChannel(ctx)
	must(t, err)
	if got.ID != first.ID {
		t.Fatalf("destination = %d, want the first one %d", got.ID, first.ID)
	}
	// An inactive destination is skipped.
	_, _, err = db.UpdateChannelSettings(ctx, first.ID, store.ChannelSettings{IsActive: ptr(false)})
	must(t, err)
	got, err = db.FindDestinationChannel(ctx)
	must(t, err)
	if got.ID != second.ID {
		t.Fatalf("destination = %d, want the active one %d", got.ID, second.ID)
	}
	_, _, err = db.UpdateChannelSettings(ctx, second.ID, store.ChannelSettings{IsActive: ptr(false)})
	must(t, err)
	_, err = db.FindDestinationChannel(ctx)
	wantCode(t, err, hoard.ENOTFOUND)
}

func TestListChannels(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	title := func(s string) func(*hoard.Channel) { return func(c *hoard.Channel) { c.Title = s } }
	b := mustChannel(t, db, title("beta"))
	a := mustChannel(t, db, title("Alpha"))
	d := mustChannel(t, db, title("Delta"), func(c *hoard.Channel) { c.Kind = hoard.ChannelDestination })
	c := mustChannel(t, db, title("charlie"))
	a2 := mustChannel(t, db, title("alpha")) // same title ignoring case: by id

	tests := []struct {
		kind hoard.ChannelKind
		want []int64
	}{
		{"", []int64{a.ID, a2.ID, b.ID, c.ID, d.ID}},
		{hoard.ChannelSource, []int64{a.ID, a2.ID, b.ID, c.ID}},
		{hoard.ChannelDestination, []int64{d.ID}},
	}
	for _, tt := range tests {
		got, err := db.ListChannels(ctx, tt.kind)
		must(t, err)
		var ids []int64
		for _, ch := range got {
			ids = append(ids, ch.ID)
		}
		if !slices.Equal(ids, tt.want) {
			t.Errorf("ListChannels(%q) = %v, want %v", tt.kind, ids, tt.want)
		}
	}
}

func TestUpdateChannelSettings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dest := hoard.ChannelDestination
	tests := []struct {
		name  string
		set   store.ChannelSettings
		check func(t *testing.T, after *hoard.Channel)
	}{
		{"nothing set changes nothing", store.ChannelSettings{}, func(t *testing.T, c *hoard.Channel) {
			if c.Kind != hoard.ChannelSource || c.Category != "Minis" || c.IsActive || !c.AutoGroupEnabled {
				t.Fatalf("after = %+v", c)
			}
		}},
		{"kind", store.ChannelSettings{Kind: &dest}, func(t *testing.T, c *hoard.Channel) {
			if c.Kind != hoard.ChannelDestination || c.Category != "Minis" || c.IsActive {
				t.Fatalf("after = %+v", c)
			}
		}},
		{"category trimmed", store.ChannelSettings{Category: ptr("  Terrain ")}, func(t *testing.T, c *hoard.Channel) {
			if c.Category != "Terrain" || c.Kind != hoard.ChannelSource {
				t.Fatalf("after = %+v", c)
			}
		}},
		{"empty category clears", store.ChannelSettings{Category: ptr("")}, func(t *testing.T, c *hoard.Channel) {
			if c.Category != "" {
				t.Fatalf("category = %q", c.Category)
			}
		}},
		{"blank category clears", store.ChannelSettings{Category: ptr("   ")}, func(t *testing.T, c *hoard.Channel) {
			if c.Category != "" {
				t.Fatalf("category = %q", c.Category)
			}
		}},
		{"active and auto-group", store.ChannelSettings{IsActive: ptr(true), AutoGroupEnabled: ptr(false)},
			func(t *testing.T, c *hoard.Channel) {
				if !c.IsActive || c.AutoGroupEnabled || c.Category != "Minis" {
					t.Fatalf("after = %+v", c)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := storetest.NewTx(t)
			c := mustChannel(t, db, func(c *hoard.Channel) { c.Category = "Minis" })
			before, after, err := db.UpdateChannelSettings(ctx, c.ID, tt.set)
			must(t, err)
			type settings struct {
				ID                         int64
				Category                   string
				Kind                       hoard.ChannelKind
				IsActive, AutoGroupEnabled bool
			}
			if diff := cmp.Diff(settings{c.ID, "Minis", hoard.ChannelSource, false, true},
				settings{before.ID, before.Category, before.Kind, before.IsActive, before.AutoGroupEnabled}); diff != "" {
				t.Fatalf("before (-want +got):\n%s", diff)
			}
			tt.check(t, after)
			got, err := db.FindChannelByID(ctx, c.ID)
			must(t, err)
			if got.Category != after.Category || got.Kind != after.Kind || got.IsActive != after.IsActive ||
				got.AutoGroupEnabled != after.AutoGroupEnabled {
				t.Fatalf("stored %+v, returned %+v", got, after)
			}
		})
	}
	t.Run("unknown id", func(t *testing.T) {
		db := storetest.NewTx(t)
		_, _, err := db.UpdateChannelSettings(ctx, -1, store.ChannelSettings{IsActive: ptr(true)})
		wantCode(t, err, hoard.ENOTFOUND)
	})
	t.Run("invalid values", func(t *testing.T) {
		db := storetest.NewTx(t)
		c := mustChannel(t, db)
		bad := hoard.ChannelKind("MIRROR")
		for _, s := range []store.ChannelSettings{{Kind: &bad}, {Category: ptr(strings.Repeat("x", 65))}} {
			err := savepoint(db, func(tx *store.DB) error { _, _, err := tx.UpdateChannelSettings(ctx, c.ID, s); return err })
			wantCode(t, err, hoard.EINVALID)
		}
		got, err := db.FindChannelByID(ctx, c.ID)
		must(t, err)
		if got.Kind != hoard.ChannelSource || got.Category != "" {
			t.Fatalf("rejected settings were stored: %+v", got)
		}
	})
}

func TestSetChannelAccessLost(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	c := mustChannel(t, db)
	other := mustChannel(t, db)
	steps := []struct {
		lost, wantChanged bool
	}{
		{false, false}, // already accessible
		{true, true},
		{true, false}, // lost once, raised once
		{false, true},
		{false, false},
		{true, true},
	}
	for i, s := range steps {
		changed, err := db.SetChannelAccessLost(ctx, c.ID, s.lost)
		must(t, err)
		if changed != s.wantChanged {
			t.Fatalf("step %d: SetChannelAccessLost(%v) changed = %v, want %v", i, s.lost, changed, s.wantChanged)
		}
		got, err := db.FindChannelByID(ctx, c.ID)
		must(t, err)
		if (got.AccessLostAt != nil) != s.lost {
			t.Fatalf("step %d: access_lost_at = %v, want lost=%v", i, got.AccessLostAt, s.lost)
		}
	}
	got, _ := db.FindChannelByID(ctx, other.ID)
	if got.AccessLostAt != nil {
		t.Fatal("other channel marked lost")
	}
	changed, err := db.SetChannelAccessLost(ctx, -1, true)
	if err != nil || changed {
		t.Fatalf("unknown channel: changed = %v, err = %v", changed, err)
	}
}

func TestDeleteChannelCascades(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	acc := mustAccount(t, db)
	ch := mustChannel(t, db)
	keep := mustChannel(t, db)
	m := mustMap(t, db, acc.ID, ch.ID)
	keepMap := mustMap(t, db, acc.ID, keep.ID)
	_, err := db.UpsertTopic(ctx, m.ID, 5, "Topic", false)
	must(t, err)
	s := &hoard.SkippedPackage{SourceChannelID: ch.ID, SourceMessageID: 9, Reason: hoard.SkipOther}
	must(t, db.UpsertSkippedPackage(ctx, s))
	p := mustPackage(t, db, func(p *hoard.Package) { p.SourceChannelID = ch.ID })

	must(t, db.DeleteChannel(ctx, ch.ID))
	_, err = db.FindChannelByID(ctx, ch.ID)
	wantCode(t, err, hoard.ENOTFOUND)
	_, err = db.FindChannelMap(ctx, m.ID)
	wantCode(t, err, hoard.ENOTFOUND)
	_, err = db.FindTopic(ctx, m.ID, 5)
	wantCode(t, err, hoard.ENOTFOUND)
	_, err = db.FindSkippedPackage(ctx, s.ID)
	wantCode(t, err, hoard.ENOTFOUND)
	got, err := db.FindPackageByID(ctx, p.ID)
	must(t, err)
	if got.SourceChannelID != 0 {
		t.Fatalf("package source = %d, want none", got.SourceChannelID)
	}
	// The account and its other maps stay.
	_, err = db.FindAccountByID(ctx, acc.ID)
	must(t, err)
	_, err = db.FindChannelMap(ctx, keepMap.ID)
	must(t, err)

	wantCode(t, db.DeleteChannel(ctx, ch.ID), hoard.ENOTFOUND)
}

// upserted is what the upsert tests check of a stored channel.
type upserted struct {
	ID                                               int64
	Title, Username, InviteLink, Category            string
	Kind                                             hoard.ChannelKind
	IsActive, AutoGroupEnabled, IsForum, IsProtected bool
}

func upsertedOf(c *hoard.Channel) upserted {
	return upserted{c.ID, c.Title, c.Username, c.InviteLink, c.Category, c.Kind, c.IsActive, c.AutoGroupEnabled, c.IsForum, c.IsProtected}
}
