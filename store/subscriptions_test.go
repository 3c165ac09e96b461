package store_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

func TestSubscriptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewTx(t)
	u := linkUser(t, db, "subs@example.com")

	for _, tc := range []struct {
		pattern string
		want    string // error code, "" for success
	}{
		{"  Dragon  ", ""},
		{"dragon", hoard.ECONFLICT},
		{"castle walls", ""},
		{"!!!", hoard.EINVALID},
		{"", hoard.EINVALID},
		{strings.Repeat("x", store.MaxSubscriptionPattern+1), hoard.EINVALID},
	} {
		_, err := savepointSub(db, u.ID, tc.pattern)
		if got := hoard.ErrorCode(err); got != tc.want {
			t.Errorf("CreateSubscription(%q) = %v, want code %q", tc.pattern, err, tc.want)
		}
	}
	subs, err := db.ListSubscriptions(ctx, u.ID)
	must(t, err)
	var patterns []string
	for _, s := range subs {
		patterns = append(patterns, s.Pattern)
	}
	if !reflect.DeepEqual(patterns, []string{"Dragon", "castle walls"}) {
		t.Fatalf("patterns = %q", patterns)
	}
	must(t, db.DeleteSubscription(ctx, u.ID, "DRAGON"))
	wantCode(t, db.DeleteSubscription(ctx, u.ID, "dragon"), hoard.ENOTFOUND)
	wantCode(t, db.DeleteSubscriptionByID(ctx, u.ID+1, subs[1].ID), hoard.ENOTFOUND)
	must(t, db.DeleteSubscriptionByID(ctx, u.ID, subs[1].ID))

	for i := range store.MaxSubscriptionsPerUser {
		if _, err := db.CreateSubscription(ctx, u.ID, fmt.Sprintf("word%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	_, err = savepointSub(db, u.ID, "one too many")
	wantCode(t, err, hoard.EINVALID)
	n, err := db.DeleteAllSubscriptions(ctx, u.ID)
	must(t, err)
	if n != store.MaxSubscriptionsPerUser {
		t.Fatalf("DeleteAllSubscriptions = %d", n)
	}
}

// savepointSub creates a subscription in a savepoint, so an error does not
// abort the test's transaction.
func savepointSub(db *store.DB, userID int64, pattern string) (*hoard.BotSubscription, error) {
	var sub *hoard.BotSubscription
	err := savepoint(db, func(tx *store.DB) error {
		var err error
		sub, err = tx.CreateSubscription(context.Background(), userID, pattern)
		return err
	})
	return sub, err
}

// TestCollectNotices indexes packages into the notifier's inbox and checks
// who gets which notice, and that no notice is made twice.
func TestCollectNotices(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewTx(t)
	alice := linkedUser(t, db, "alice-n@example.com", 9201)
	bob := linkedUser(t, db, "bob-n@example.com", 9202)
	carol := linkUser(t, db, "carol-n@example.com") // not linked
	dave := linkedUser(t, db, "dave-n@example.com", 9204)
	subscribe := func(u *hoard.User, patterns ...string) {
		for _, p := range patterns {
			if _, err := db.CreateSubscription(ctx, u.ID, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	subscribe(alice, "dragon", "Castle Walls", "ru")
	subscribe(bob, "dragons", "onsla") // onsla: only the file-name substring matches
	subscribe(carol, "dragon")
	subscribe(dave, "dragon")
	must(t, db.PauseSubscriptions(ctx, dave.ID))

	index := func(name string) *hoard.Package {
		t.Helper()
		p := &hoard.Package{FileName: name, FileSize: 10, ArchiveType: hoard.ArchiveZIP,
			ContentHash: fmt.Sprintf("%064x", seq.Add(1)), DestMessageIDs: []int64{1}}
		if _, err := db.IndexPackage(ctx, p, nil); err != nil {
			t.Fatal(err)
		}
		return p
	}
	red := index("Red Dragon Bust.zip")    // alice: dragon (prefix); bob: dragons stems to dragon
	walls := index("castle_walls_v2.stl")  // alice: Castle Walls
	rune := index("Runestones.zip")        // alice: "ru" (short: word prefix)
	other := index("Spaceship Hangar.zip") // nobody
	sub := index("xXdragonslayerXx.zip")   // substring only: alice "dragon"
	_ = other

	inbox, err := db.FindNotifyInbox(ctx)
	must(t, err)
	if inbox.Packages != 5 || inbox.SinceOldest < inbox.SinceNewest || inbox.SinceNewest < 0 {
		t.Fatalf("inbox = %+v", inbox)
	}
	made, err := db.CollectNotices(ctx)
	must(t, err)
	if made != 2 {
		t.Fatalf("CollectNotices made %d digests, want 2 (alice, bob)", made)
	}
	digests, err := db.ListUnsentDigests(ctx, 10)
	must(t, err)
	type notice struct {
		Platform int64
		Package  string
		Patterns []string
	}
	var got []notice
	for _, d := range digests {
		for _, p := range d.Packages {
			got = append(got, notice{d.PlatformUserID, p.FileName, p.Patterns})
		}
	}
	want := []notice{
		{9201, red.FileName, []string{"dragon"}},
		{9201, walls.FileName, []string{"Castle Walls"}},
		{9201, rune.FileName, []string{"ru"}},
		{9201, sub.FileName, []string{"dragon"}},
		{9202, red.FileName, []string{"dragons"}},
		{9202, sub.FileName, []string{"dragons", "onsla"}},
	}
	sortNotices := func(ns []notice) {
		slices.SortFunc(ns, func(a, b notice) int {
			if a.Platform != b.Platform {
				return int(a.Platform - b.Platform)
			}
			return strings.Compare(a.Package, b.Package)
		})
	}
	sortNotices(got)
	sortNotices(want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("notices:\n got  %+v\n want %+v", got, want)
	}

	// The inbox is empty now; the same packages queued again make nothing.
	if n, err := db.CollectNotices(ctx); err != nil || n != 0 {
		t.Fatalf("second collect = %d, %v", n, err)
	}
	for _, d := range digests {
		must(t, db.FinishDigest(ctx, d.ID, ""))
	}
	if rest, err := db.ListUnsentDigests(ctx, 10); err != nil || len(rest) != 0 {
		t.Fatalf("unsent after finishing = %+v, %v", rest, err)
	}

	// Dave writes to the bot: his subscriptions resume and get later
	// packages.
	if won, err := db.ClaimBotUpdate(ctx, store.UpdateMessage, 9204, 1, 9204); err != nil || !won {
		t.Fatalf("ClaimBotUpdate = %v, %v", won, err)
	}
	if subs, err := db.ListSubscriptions(ctx, dave.ID); err != nil || subs[0].PausedAt != nil {
		t.Fatalf("dave's subscription after he wrote: %+v, %v", subs, err)
	}
	index("Dragon Egg.zip")
	if n, err := db.CollectNotices(ctx); err != nil || n != 3 {
		t.Fatalf("collect after resuming = %d, %v; want alice, bob, dave", n, err)
	}
}
