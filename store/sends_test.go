package store_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
	"github.com/jackc/pgx/v5"
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

// linkedUser makes a user linked to messenger account platformID.
func linkedUser(t *testing.T, db *store.DB, email string, platformID int64) *hoard.User {
	t.Helper()
	ctx := context.Background()
	u := linkUser(t, db, email)
	must(t, db.CreateLinkCode(ctx, u.ID, hoard.LinkCodeHash(email), time.Now().Add(time.Minute)))
	if _, err := db.ConsumeLinkCode(ctx, hoard.LinkCodeHash(email), platformID, 1, ""); err != nil {
		t.Fatal(err)
	}
	return u
}

// published stores a package published to dest with the given message ids.
func published(t *testing.T, db *store.DB, dest *hoard.Channel, msgIDs ...int64) *hoard.Package {
	t.Helper()
	p := mustPackage(t, db)
	must(t, db.SetPackageDestination(context.Background(), p.ID, dest.ID, msgIDs))
	p.DestMessageIDs = msgIDs
	return p
}

func TestQueueBotSends(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewTx(t)
	u := linkedUser(t, db, "queue@example.com", 9101)
	dest := mustChannel(t, db, func(c *hoard.Channel) { c.Kind = hoard.ChannelDestination })
	a, b, c := published(t, db, dest, 11), published(t, db, dest, 21, 22, 23), published(t, db, dest, 31)
	unpublished := mustPackage(t, db)

	type queued struct {
		Packages []int64
		Parts    []int
		Batched  bool
		Jobs     int
	}
	run := func(o store.SendOrder) queued {
		t.Helper()
		var jobs []hoard.BotSendArgs
		reqs, err := db.QueueBotSends(ctx, o, func(_ pgx.Tx, j []hoard.BotSendArgs) error { jobs = j; return nil })
		must(t, err)
		got := queued{Jobs: len(jobs)}
		for _, r := range reqs {
			got.Packages = append(got.Packages, r.PackageID)
			got.Parts = append(got.Parts, r.PartsTotal)
			got.Batched = r.BatchID != 0
			if r.Status != hoard.SendPending || r.PartsSent != 0 || r.PlatformUserID != 9101 {
				t.Errorf("new request %+v", r)
			}
		}
		for _, j := range jobs {
			if (j.BatchID != 0) != got.Batched || (j.RequestID != 0) == got.Batched {
				t.Errorf("job %+v for batched=%v", j, got.Batched)
			}
		}
		return got
	}
	order := func(title string, ids ...int64) store.SendOrder {
		return store.SendOrder{UserID: u.ID, RequestedBy: u.ID, PlatformUserID: 9101, PackageIDs: ids, Title: title}
	}
	for _, tc := range []struct {
		name  string
		order store.SendOrder
		want  queued
	}{
		{"one package alone", order("", b.ID), queued{Packages: []int64{b.ID}, Parts: []int{3}, Jobs: 1}},
		{"pending packages are skipped, order kept", order("", c.ID, b.ID, a.ID, unpublished.ID, c.ID),
			queued{Packages: []int64{c.ID, a.ID}, Parts: []int{1, 1}, Batched: true, Jobs: 1}},
		{"nothing left to send", order("Group", a.ID, unpublished.ID), queued{}},
	} {
		if got := run(tc.order); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}

	// Delivery: starting moves PENDING to SENDING, in order; progress and
	// failure are recorded.
	reqs, err := db.ListBotSendRequests(ctx, u.ID, 10)
	must(t, err)
	batchID := reqs[0].BatchID
	ds, err := db.StartBotSends(ctx, 0, batchID)
	must(t, err)
	type delivery struct {
		PackageID, DestChannelPlatformID int64
		Status                           hoard.SendStatus
		DestMessageIDs                   []int64
		FileName                         string
	}
	var got []delivery
	for _, d := range ds {
		got = append(got, delivery{d.Request.PackageID, d.DestChannelPlatformID, d.Request.Status, d.DestMessageIDs, d.FileName})
	}
	if len(got) == 2 { // the second is checked only for its order
		got[1] = delivery{PackageID: got[1].PackageID}
	}
	want := []delivery{{c.ID, dest.PlatformID, hoard.SendSending, []int64{31}, c.FileName}, {PackageID: a.ID}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("StartBotSends(batch) (-want +got):\n%s", diff)
	}
	must(t, db.SetBotSendProgress(ctx, ds[0].Request.ID, 1))
	must(t, db.SetBotSendStatus(ctx, ds[0].Request.ID, hoard.SendSent, ""))
	n, err := db.FailBotSends(ctx, []int64{ds[0].Request.ID, ds[1].Request.ID}, "unlinked")
	must(t, err)
	if n != 1 {
		t.Fatalf("FailBotSends marked %d, want only the unfinished one", n)
	}
	again, err := db.StartBotSends(ctx, 0, batchID)
	must(t, err)
	if again[0].Request.Status != hoard.SendSent || again[0].Request.PartsSent != 1 || again[1].Request.Status != hoard.SendFailed ||
		again[1].Request.ErrorMessage != "unlinked" {
		t.Fatalf("after finishing: %+v", again)
	}
	batch, err := db.FindBotSendBatch(ctx, batchID)
	must(t, err)
	if batch.UserID != u.ID || batch.PlatformUserID != 9101 {
		t.Fatalf("batch = %+v", batch)
	}

	// A package whose destination was cleared is delivered from nowhere.
	must(t, db.ClearPackageDestination(ctx, b.ID))
	single, err := db.StartBotSends(ctx, reqs[len(reqs)-1].ID, 0)
	must(t, err)
	if len(single) != 1 || single[0].DestChannelPlatformID != 0 || len(single[0].DestMessageIDs) != 0 {
		t.Fatalf("unpublished delivery = %+v", single)
	}

	for _, tc := range []struct {
		user, platform int64
		want           bool
	}{{u.ID, 9101, true}, {u.ID, 9102, false}, {-1, 9101, false}} {
		if got, err := db.IsLinkedTo(ctx, tc.user, tc.platform); err != nil || got != tc.want {
			t.Errorf("IsLinkedTo(%d, %d) = %v, %v; want %v", tc.user, tc.platform, got, err, tc.want)
		}
	}
}

func TestListGroupDeliveryOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewTx(t)
	day := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	later := mustPackage(t, db, func(p *hoard.Package) { p.SourcePostedAt = day.Add(time.Hour) })
	first := mustPackage(t, db, func(p *hoard.Package) { p.SourcePostedAt = day })
	g := &hoard.PackageGroup{Name: "Order", GroupingSource: hoard.GroupManual}
	must(t, db.CreateGroup(ctx, g))
	must(t, db.SetPackageGroup(ctx, []int64{later.ID, first.ID}, g.ID))
	got, err := db.ListGroupDeliveryOrder(ctx, g.ID)
	must(t, err)
	if !reflect.DeepEqual(got, []int64{first.ID, later.ID}) {
		t.Fatalf("order = %v, want oldest first %v", got, []int64{first.ID, later.ID})
	}
	empty := &hoard.PackageGroup{Name: "Empty", GroupingSource: hoard.GroupManual}
	must(t, db.CreateGroup(ctx, empty))
	if got, err := db.ListGroupDeliveryOrder(ctx, empty.ID); err != nil || len(got) != 0 {
		t.Fatalf("empty group = %v, %v", got, err)
	}
	_, err = db.ListGroupDeliveryOrder(ctx, -1)
	wantCode(t, err, hoard.ENOTFOUND)
}

// TestFailBotSend ends one request FAILED with the parts that arrived, and
// leaves a final one as it is.
func TestFailBotSend(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	u := linkUser(t, db, "failsend@example.com")
	dest := mustChannel(t, db, func(c *hoard.Channel) { c.Kind = hoard.ChannelDestination })
	a, b := mustPackage(t, db), mustPackage(t, db)
	must(t, db.SetPackageDestination(ctx, a.ID, dest.ID, []int64{1, 2, 3}))
	must(t, db.SetPackageDestination(ctx, b.ID, dest.ID, []int64{4, 5}))
	reqs, err := db.CreateBotSendRequests(ctx, u.ID, u.ID, 777, []int64{a.ID, b.ID})
	must(t, err)
	must(t, db.SetBotSendStatus(ctx, reqs[1].ID, hoard.SendSent, ""))
	must(t, db.FailBotSend(ctx, reqs[0].ID, 2, "Part 2 is missing."))
	must(t, db.FailBotSend(ctx, reqs[1].ID, 0, "late"))
	type row struct {
		Status hoard.SendStatus
		Sent   int
		Error  string
	}
	var got []row
	for _, r := range reqs {
		r, err := db.FindBotSendRequest(ctx, r.ID)
		must(t, err)
		got = append(got, row{r.Status, r.PartsSent, r.ErrorMessage})
	}
	if want := []row{{hoard.SendFailed, 2, "Part 2 is missing."}, {hoard.SendSent, 2, ""}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}
