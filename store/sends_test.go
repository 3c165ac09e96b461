package store_test

import (
	"context"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store/storetest"
)

func TestBotSendRequests(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	u := linkUser(t, db, "sender@example.com")
	dest := mustChannel(t, db, func(c *hoard.Channel) { c.Kind = hoard.ChannelDestination })
	published := mustPackage(t, db)
	unpublished := mustPackage(t, db)
	must(t, db.SetPackageDestination(ctx, published.ID, dest.ID, []int64{1, 2}))

	reqs, err := db.CreateBotSendRequests(ctx, u.ID, u.ID, 777, []int64{published.ID, unpublished.ID, -5})
	must(t, err)
	if len(reqs) != 1 || reqs[0].PackageID != published.ID || reqs[0].Status != hoard.SendPending || reqs[0].PlatformUserID != 777 {
		t.Fatalf("requests = %+v", reqs)
	}
	again, err := db.CreateBotSendRequests(ctx, u.ID, u.ID, 777, []int64{published.ID})
	must(t, err)
	if len(again) != 0 {
		t.Fatalf("a pending package was queued twice: %+v", again)
	}
	must(t, db.SetBotSendStatus(ctx, reqs[0].ID, hoard.SendSent, ""))
	got, err := db.FindBotSendRequest(ctx, reqs[0].ID)
	must(t, err)
	if got.Status != hoard.SendSent || got.SentAt == nil {
		t.Fatalf("after SENT: %+v", got)
	}
	// Once sent, the package may be sent again.
	again, err = db.CreateBotSendRequests(ctx, u.ID, 0, 777, []int64{published.ID})
	must(t, err)
	if len(again) != 1 || again[0].RequestedBy != 0 {
		t.Fatalf("resend = %+v", again)
	}
	list, err := db.ListBotSendRequests(ctx, u.ID, 10)
	must(t, err)
	if len(list) != 2 || list[0].ID != again[0].ID || list[0].UserEmail != "sender@example.com" || list[0].PackageName != published.FileName {
		t.Fatalf("history = %+v", list)
	}
	if all, _ := db.ListBotSendRequests(ctx, 0, 10); len(all) < 2 {
		t.Fatalf("all history = %d", len(all))
	}
	wantCode(t, db.SetBotSendStatus(ctx, -1, hoard.SendFailed, "x"), hoard.ENOTFOUND)
	if _, err := db.FindBotSendRequest(ctx, -1); hoard.ErrorCode(err) != hoard.ENOTFOUND {
		t.Fatalf("unknown request: %v", err)
	}
	wantCode(t, db.SetBotSendStatus(ctx, reqs[0].ID, "LOST", ""), hoard.EINVALID) // last: aborts the transaction
}
