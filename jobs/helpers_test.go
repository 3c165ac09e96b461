package jobs

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// resolveChannel finds a channel by a link or @username through acc,
// failing the test when it cannot.
func resolveChannel(t testing.TB, acc messenger.Account, ref string) messenger.Channel {
	t.Helper()
	r, err := messenger.ParseChannelRef(ref)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := acc.ResolveChannel(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// destinationDB is a test database whose signed-in account (phone) writes
// to the destination channel peer, as set-up leaves it.
func destinationDB(t *testing.T, phone string, peer messenger.Channel) (*store.DB, *hoard.Channel) {
	t.Helper()
	ctx := context.Background()
	db := storetest.NewTx(t)
	account, err := db.CreateAccount(ctx, phone)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetAccountAuthState(ctx, account.ID, hoard.AuthAuthenticated, ""); err != nil {
		t.Fatal(err)
	}
	dest := &hoard.Channel{PlatformID: peer.ID, Title: peer.Title, Username: peer.Username, Kind: hoard.ChannelDestination}
	if err := db.UpsertChannel(ctx, dest); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpsertChannelMap(ctx, account.ID, dest.ID, peer.AccessHash, hoard.MapWriter); err != nil {
		t.Fatal(err)
	}
	return db, dest
}
