package store_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store/storetest"
)

func TestChannelJoins(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	acc, err := db.CreateAccount(ctx, "+15550000001")
	must(t, err)
	j := &hoard.ChannelJoin{Ref: "@mammothfactory", AccountID: acc.ID, Category: " STL "}
	created, err := db.CreateChannelJoin(ctx, j)
	must(t, err)
	type join struct {
		Created, HasID, Finished bool
		Status                   hoard.JoinStatus
		Category                 string
	}
	if diff := cmp.Diff(join{Created: true, HasID: true, Status: hoard.JoinPending, Category: "STL"},
		join{created, j.ID != 0, j.FinishedAt != nil, j.Status, j.Category}); diff != "" {
		t.Fatalf("join (-want +got):\n%s", diff)
	}
	// The same reference while pending: the same request.
	again := &hoard.ChannelJoin{Ref: "@mammothfactory", AccountID: acc.ID}
	created, err = db.CreateChannelJoin(ctx, again)
	must(t, err)
	if created || again.ID != j.ID {
		t.Fatalf("second = %+v (created %v)", again, created)
	}
	must(t, db.SetChannelJoinJob(ctx, j.ID, 77))
	// A pending request whose job is gone does not block a new one.
	stale := &hoard.ChannelJoin{Ref: "@stalechannel", AccountID: acc.ID}
	_, err = db.CreateChannelJoin(ctx, stale)
	must(t, err)
	must(t, db.SetChannelJoinJob(ctx, stale.ID, 987654321))
	fresh := &hoard.ChannelJoin{Ref: "@stalechannel", AccountID: acc.ID}
	created, err = db.CreateChannelJoin(ctx, fresh)
	must(t, err)
	if old, _ := db.FindChannelJoin(ctx, stale.ID); !created || fresh.ID == stale.ID || old.Status != hoard.JoinFailed {
		t.Fatalf("after a lost job: new %+v (created %v), old %+v", fresh, created, old)
	}
	must(t, db.SetChannelJoinError(ctx, j.ID, "timeout"))
	if _, err := db.FinishChannelJoin(ctx, j.ID, hoard.JoinPending, 0, "", ""); hoard.ErrorCode(err) != hoard.EINVALID {
		t.Fatalf("finish as PENDING: %v", err)
	}
	ok, err := db.FinishChannelJoin(ctx, j.ID, hoard.JoinNotFound, 0, "", "No channel is called @mammothfactory.")
	must(t, err)
	if !ok {
		t.Fatal("first finish reported no change")
	}
	if ok, err := db.FinishChannelJoin(ctx, j.ID, hoard.JoinJoined, 0, "x", ""); err != nil || ok {
		t.Fatalf("second finish = %v, %v: the outcome is exactly-once", ok, err)
	}
	got, err := db.FindChannelJoin(ctx, j.ID)
	must(t, err)
	if got.Status != hoard.JoinNotFound || got.RiverJobID != 77 || got.FinishedAt == nil || got.ErrorMessage == "" {
		t.Fatalf("finished = %+v", got)
	}
	// Once final, the reference may be asked for again.
	next := &hoard.ChannelJoin{Ref: "@mammothfactory", AccountID: acc.ID}
	created, err = db.CreateChannelJoin(ctx, next)
	must(t, err)
	if !created || next.ID == j.ID {
		t.Fatalf("after the outcome = %+v (created %v)", next, created)
	}
	list, err := db.ListChannelJoins(ctx, 0)
	must(t, err)
	if len(list) != 4 || list[0].ID != next.ID {
		t.Fatalf("list = %+v", list)
	}
	// Deleting the account keeps the history.
	must(t, db.DeleteAccount(ctx, acc.ID))
	got, err = db.FindChannelJoin(ctx, j.ID)
	must(t, err)
	if got.AccountID != 0 {
		t.Fatalf("account id after delete = %d", got.AccountID)
	}
}

func TestAccountLoginSecrets(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	acc, err := db.CreateAccount(ctx, "+15550000001")
	must(t, err)
	if err := db.SubmitAccountCode(ctx, acc.ID, []byte("c")); hoard.ErrorCode(err) != hoard.ECONFLICT {
		t.Fatalf("code while PENDING: %v", err)
	}
	must(t, db.SetAccountCodeSent(ctx, acc.ID, []byte("req")))
	must(t, db.SubmitAccountCode(ctx, acc.ID, []byte("c")))
	if err := db.SubmitAccountCode(ctx, acc.ID, []byte("c2")); hoard.ErrorCode(err) != hoard.ECONFLICT {
		t.Fatalf("second code: %v", err)
	}
	a, err := db.FindAccountByID(ctx, acc.ID)
	must(t, err)
	if a.AuthState != hoard.AuthAwaitingCode || !a.LoginPending {
		t.Fatalf("account = %+v", a)
	}
	// A wrong code: the request stays, the code goes.
	must(t, db.FinishAccountLogin(ctx, acc.ID, hoard.AuthAwaitingCode, "wrong"))
	s, err := db.FindAccountLoginSecrets(ctx, acc.ID)
	must(t, err)
	if string(s.CodeRequest) != "req" || s.Code != nil {
		t.Fatalf("secrets = %+v", s)
	}
	must(t, db.FinishAccountLogin(ctx, acc.ID, hoard.AuthAwaitingPassword, ""))
	must(t, db.SubmitAccountPassword(ctx, acc.ID, []byte("p")))
	must(t, db.FinishAccountLogin(ctx, acc.ID, hoard.AuthAuthenticated, ""))
	s, err = db.FindAccountLoginSecrets(ctx, acc.ID)
	must(t, err)
	if s.CodeRequest != nil || s.Code != nil || s.Password != nil {
		t.Fatalf("secrets after sign-in = %+v", s)
	}
	a, err = db.FindAccountByID(ctx, acc.ID)
	must(t, err)
	if a.AuthState != hoard.AuthAuthenticated || a.LoginPending || a.LastSeenAt == nil {
		t.Fatalf("account = %+v", a)
	}

	// A login left half-done for a day is forgotten by the clean-up.
	must(t, db.SetAccountCodeSent(ctx, acc.ID, []byte("req")))
	if _, err := db.Tx().Exec(ctx, `UPDATE messenger_accounts SET updated_at = now() - interval '2 days' WHERE id = $1`, acc.ID); err != nil {
		t.Fatal(err)
	}
	c, err := db.DeleteExpired(ctx, 0)
	must(t, err)
	if c.LoginSecrets != 1 {
		t.Fatalf("cleanup = %+v", c)
	}
	a, err = db.FindAccountByID(ctx, acc.ID)
	must(t, err)
	s, _ = db.FindAccountLoginSecrets(ctx, acc.ID)
	if a.AuthState != hoard.AuthExpired || s.CodeRequest != nil {
		t.Fatalf("after cleanup: %+v %+v", a, s)
	}
}
