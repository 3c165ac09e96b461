package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// TestClearedDestinationBecomesStalePosts: a repair's clear keeps the posts
// as the package's stale posts, which count as taken (no part adopts them,
// the audit reports none of them as orphaned) until they are forgotten.
func TestClearedDestinationBecomesStalePosts(t *testing.T) {
	db := storetest.NewTx(t)
	ctx := context.Background()
	dest := mustChannel(t, db, func(c *hoard.Channel) { c.Kind = hoard.ChannelDestination })
	p := mustPackage(t, db)
	must(t, db.SetPackageDestination(ctx, p.ID, dest.ID, []int64{101, 102, 103}))
	must(t, db.ClearPackageDestination(ctx, p.ID))
	must(t, db.ClearPackageDestination(ctx, p.ID)) // twice: nothing more to keep

	type state struct {
		Stale      []store.StalePost
		Taken      bool
		Unreferred []int64
	}
	read := func() state {
		t.Helper()
		stale, err := db.ListStalePosts(ctx, p.ID)
		must(t, err)
		taken, err := db.IsDestMessageTaken(ctx, dest.ID, 102)
		must(t, err)
		free, err := db.ListUnreferencedDestMessages(ctx, dest.ID, []int64{101, 102, 103, 104})
		must(t, err)
		return state{stale, taken, free}
	}
	for _, tt := range []struct {
		name   string
		forget []store.StalePost
		want   state
	}{
		{"after the clear", nil, state{[]store.StalePost{{dest.ID, 101}, {dest.ID, 102}, {dest.ID, 103}}, true, []int64{104}}},
		{"two forgotten", []store.StalePost{{dest.ID, 101}, {dest.ID, 102}},
			state{[]store.StalePost{{dest.ID, 103}}, false, []int64{101, 102, 104}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			must(t, db.ForgetStalePosts(ctx, p.ID, tt.forget))
			if got := read(); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
