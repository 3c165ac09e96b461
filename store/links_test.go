package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store/storetest"
)

func linkUser(t *testing.T, db interface {
	CreateUser(context.Context, string, string, hoard.Role) (*hoard.User, error)
}, email string) *hoard.User {
	t.Helper()
	u, err := db.CreateUser(context.Background(), email, "x", hoard.RoleUser)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestMessengerLinkCodes(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	alice := linkUser(t, db, "alice@example.com")
	bob := linkUser(t, db, "bob@example.com")

	if _, err := db.FindMessengerLink(ctx, alice.ID); hoard.ErrorCode(err) != hoard.ENOTFOUND {
		t.Fatalf("unlinked user: %v", err)
	}
	must(t, db.CreateLinkCode(ctx, alice.ID, "old", time.Now().Add(time.Hour)))
	must(t, db.CreateLinkCode(ctx, alice.ID, "new", time.Now().Add(time.Hour)))
	if _, err := db.ConsumeLinkCode(ctx, "old", 100, 1, "alice_tg"); hoard.ErrorCode(err) != hoard.EINVALID {
		t.Fatalf("a replaced code still works: %v", err)
	}
	link, err := db.ConsumeLinkCode(ctx, "new", 100, 1, "alice_tg")
	must(t, err)
	if link.UserID != alice.ID || link.PlatformUserID != 100 || link.Username != "alice_tg" {
		t.Fatalf("link = %+v", link)
	}
	if _, err := db.ConsumeLinkCode(ctx, "new", 100, 1, "alice_tg"); hoard.ErrorCode(err) != hoard.EINVALID {
		t.Fatalf("a code worked twice: %v", err)
	}
	got, err := db.FindMessengerLinkByPlatformUser(ctx, 100)
	must(t, err)
	if got.UserID != alice.ID {
		t.Fatalf("by platform user = %+v", got)
	}

	// Expired codes do not link.
	must(t, db.CreateLinkCode(ctx, bob.ID, "stale", time.Now().Add(-time.Minute)))
	if _, err := db.ConsumeLinkCode(ctx, "stale", 200, 2, "bob_tg"); hoard.ErrorCode(err) != hoard.EINVALID {
		t.Fatalf("expired code: %v", err)
	}
	// The same messenger account moving to another user replaces the link.
	must(t, db.CreateLinkCode(ctx, bob.ID, "bob", time.Now().Add(time.Hour)))
	_, err = db.ConsumeLinkCode(ctx, "bob", 100, 1, "alice_tg")
	must(t, err)
	if _, err := db.FindMessengerLink(ctx, alice.ID); hoard.ErrorCode(err) != hoard.ENOTFOUND {
		t.Fatalf("alice keeps a link to an account that moved: %v", err)
	}
	must(t, db.DeleteMessengerLink(ctx, bob.ID))
	if _, err := db.FindMessengerLink(ctx, bob.ID); hoard.ErrorCode(err) != hoard.ENOTFOUND {
		t.Fatalf("after unlink: %v", err)
	}
	must(t, db.DeleteMessengerLink(ctx, bob.ID)) // not linked is fine
}
