package store_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

func TestCrowdfundsStore(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	alice := linkUser(t, db, "cf-alice@example.com")
	bob := linkUser(t, db, "cf-bob@example.com")
	h1, err := db.FindOrCreateHost(ctx, alice.ID, " Kickstarter ")
	must(t, err)
	h2, err := db.FindOrCreateHost(ctx, alice.ID, "kickstarter")
	must(t, err)
	if h1.ID != h2.ID || h1.Name != "Kickstarter" || h1.UserID != alice.ID {
		t.Fatalf("hosts %+v %+v", h1, h2)
	}
	if _, err := db.FindOrCreateHost(ctx, alice.ID, "  "); hoard.ErrorCode(err) != hoard.EINVALID {
		t.Fatalf("empty host: %v", err)
	}
	other, _ := db.FindOrCreateHost(ctx, alice.ID, "Patreon")
	if hosts, _ := db.ListHosts(ctx, alice.ID); len(hosts) != 2 || hosts[0].Name != "Kickstarter" {
		t.Fatalf("hosts = %+v", hosts)
	}

	c := &hoard.Crowdfund{UserID: alice.ID, HostID: h1.ID, Name: "Dragons"}
	must(t, db.SaveCrowdfund(ctx, c))
	if c.ID == 0 || c.DeliveryStatus != hoard.DeliveryNone || c.PaymentStatus != hoard.PaymentUnpaid || c.HostName != "Kickstarter" {
		t.Fatalf("saved = %+v", c)
	}
	c.DeliveryStatus, c.HostID = hoard.DeliveryDone, other.ID
	must(t, db.SaveCrowdfund(ctx, c))
	if c.DeliveryStatus != hoard.DeliveryDone || c.HostName != "Patreon" {
		t.Fatalf("updated = %+v", c)
	}
	d := &hoard.Crowdfund{UserID: alice.ID, Name: "Knights", PaymentStatus: hoard.PaymentPaid}
	must(t, db.SaveCrowdfund(ctx, d))
	// Bob sees nothing of Alice's.
	if _, err := db.FindCrowdfund(ctx, bob.ID, c.ID); hoard.ErrorCode(err) != hoard.ENOTFOUND {
		t.Fatalf("bob finds alice's record: %v", err)
	}
	stolen := *c
	stolen.UserID = bob.ID
	wantCode(t, db.SaveCrowdfund(ctx, &stolen), hoard.ENOTFOUND)
	wantCode(t, db.DeleteCrowdfund(ctx, bob.ID, c.ID), hoard.ENOTFOUND)
	if _, err := db.LinkCrowdfundPackages(ctx, bob.ID, c.ID, []int64{1}); hoard.ErrorCode(err) != hoard.ENOTFOUND {
		t.Fatalf("bob links to alice's record: %v", err)
	}

	p1, p2 := mustPackage(t, db), mustPackage(t, db)
	n, err := db.LinkCrowdfundPackages(ctx, alice.ID, c.ID, []int64{p1.ID, p2.ID, p1.ID, -1})
	must(t, err)
	if n != 2 {
		t.Fatalf("linked %d", n)
	}
	if n, _ := db.LinkCrowdfundPackages(ctx, alice.ID, c.ID, []int64{p1.ID}); n != 0 {
		t.Fatalf("relinked %d", n)
	}
	pk, err := db.ListCrowdfundPackages(ctx, alice.ID, c.ID)
	must(t, err)
	if len(pk) != 2 {
		t.Fatalf("linked packages %d", len(pk))
	}
	if pk, _ := db.ListCrowdfundPackages(ctx, bob.ID, c.ID); len(pk) != 0 {
		t.Fatal("bob lists alice's packages")
	}
	wantCode(t, db.UnlinkCrowdfundPackage(ctx, bob.ID, c.ID, p1.ID), hoard.ENOTFOUND)
	must(t, db.UnlinkCrowdfundPackage(ctx, alice.ID, c.ID, p1.ID))

	all, err := db.ListCrowdfunds(ctx, alice.ID, store.CrowdfundFilter{})
	must(t, err)
	done, _ := db.ListCrowdfunds(ctx, alice.ID, store.CrowdfundFilter{Delivery: hoard.DeliveryDone})
	paid, _ := db.ListCrowdfunds(ctx, alice.ID, store.CrowdfundFilter{Payment: hoard.PaymentPaid})
	byHost, _ := db.ListCrowdfunds(ctx, alice.ID, store.CrowdfundFilter{HostID: other.ID})
	ids := func(cs []hoard.Crowdfund) (out []int64) {
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	type lists struct {
		All, Done, ByHost int
		Paid              []int64
		DonePackages      int
	}
	got := lists{All: len(all), Done: len(done), ByHost: len(byHost), Paid: ids(paid)}
	if len(done) > 0 {
		got.DonePackages = done[0].PackageCount
	}
	if diff := cmp.Diff(lists{2, 1, 1, []int64{d.ID}, 1}, got); diff != "" {
		t.Fatalf("lists (-want +got):\n%s", diff)
	}
	if mine, _ := db.ListCrowdfunds(ctx, bob.ID, store.CrowdfundFilter{}); len(mine) != 0 {
		t.Fatal("bob lists alice's records")
	}
	must(t, db.DeleteCrowdfund(ctx, alice.ID, c.ID))
	if n, _ := db.ListCrowdfunds(ctx, alice.ID, store.CrowdfundFilter{}); len(n) != 1 {
		t.Fatal("delete")
	}
	wantCode(t, db.SaveCrowdfund(ctx, &hoard.Crowdfund{UserID: alice.ID, Name: ""}), hoard.EINVALID) // last: aborts the transaction
}

// TestCrowdfundHostsArePrivate: a user's hosts are their own (issue #26):
// another user never lists them, naming the same host makes another row,
// and no record can use another user's host.
func TestCrowdfundHostsArePrivate(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	alice := linkUser(t, db, "cfh-alice@example.com")
	bob := linkUser(t, db, "cfh-bob@example.com")
	secret, err := db.FindOrCreateHost(ctx, alice.ID, "Alice's Secret Shop")
	must(t, err)
	kickA, err := db.FindOrCreateHost(ctx, alice.ID, "Kickstarter")
	must(t, err)
	kickB, err := db.FindOrCreateHost(ctx, bob.ID, "kickstarter")
	must(t, err)
	if kickA.ID == kickB.ID {
		t.Fatalf("alice and bob share host %d", kickA.ID)
	}
	tests := []struct {
		user int64
		want []hoard.CrowdfundHost
	}{
		{alice.ID, []hoard.CrowdfundHost{*secret, *kickA}},
		{bob.ID, []hoard.CrowdfundHost{*kickB}},
		{-1, []hoard.CrowdfundHost{}},
	}
	for _, tt := range tests {
		got, err := db.ListHosts(ctx, tt.user)
		must(t, err)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ListHosts(%d) = %+v, want %+v", tt.user, got, tt.want)
		}
	}
	// Bob's record cannot point at Alice's host.
	wantCode(t, db.InTx(ctx, func(tx *store.DB) error { // a savepoint: the refusal aborts it
		return tx.SaveCrowdfund(ctx, &hoard.Crowdfund{UserID: bob.ID, HostID: secret.ID, Name: "Stolen host"})
	}), hoard.EINVALID)
	// Nor does filtering by it show him anything of hers.
	a := &hoard.Crowdfund{UserID: alice.ID, HostID: secret.ID, Name: "Alice's reward"}
	must(t, db.SaveCrowdfund(ctx, a))
	if got, _ := db.ListCrowdfunds(ctx, bob.ID, store.CrowdfundFilter{HostID: secret.ID}); len(got) != 0 {
		t.Fatalf("bob filtering by alice's host: %+v", got)
	}
}
