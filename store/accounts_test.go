package store_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

func TestCreateAndFindAccount(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	phone := fmt.Sprintf("+4470%07d", seq.Add(1))
	a, err := db.CreateAccount(ctx, phone)
	must(t, err)
	if a.ID == 0 || a.CreatedAt.IsZero() {
		t.Fatalf("created account = %+v: want an id and a creation time", a)
	}
	want := hoard.Account{ID: a.ID, Phone: phone, AuthState: hoard.AuthPending, IsActive: true, CreatedAt: a.CreatedAt}
	if diff := cmp.Diff(want, *a, cmpopts.IgnoreFields(hoard.Account{}, "UpdatedAt", "LoginPending")); diff != "" {
		t.Fatalf("created account (-want +got):\n%s", diff)
	}
	byID, err := db.FindAccountByID(ctx, a.ID)
	must(t, err)
	byPhone, err := db.FindAccountByPhone(ctx, phone)
	must(t, err)
	if byID.Phone != phone || byPhone.ID != a.ID || byID.AuthState != hoard.AuthPending {
		t.Fatalf("found %+v and %+v", byID, byPhone)
	}
	_, err = db.FindAccountByID(ctx, -1)
	wantCode(t, err, hoard.ENOTFOUND)
	_, err = db.FindAccountByPhone(ctx, phone+"0")
	wantCode(t, err, hoard.ENOTFOUND)

	_, err = db.CreateAccount(ctx, "")
	wantCode(t, err, hoard.EINVALID)
	err = savepoint(db, func(tx *store.DB) error { _, err := tx.CreateAccount(ctx, phone); return err })
	wantCode(t, err, hoard.ECONFLICT)
}

func TestListAccounts(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	got, err := db.ListAccounts(ctx)
	must(t, err)
	if len(got) != 0 {
		t.Fatalf("fresh database lists %d accounts", len(got))
	}
	var want []int64
	for i := 0; i < 3; i++ {
		want = append(want, mustAccount(t, db).ID)
	}
	got, err = db.ListAccounts(ctx)
	must(t, err)
	var ids []int64
	for _, a := range got {
		ids = append(ids, a.ID)
	}
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Fatalf("ListAccounts = %v, want oldest first %v", ids, want)
	}
}

func TestSetAccountAuthState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	states := []hoard.AuthState{hoard.AuthPending, hoard.AuthAwaitingCode, hoard.AuthAwaitingPassword,
		hoard.AuthAuthenticated, hoard.AuthExpired, hoard.AuthFailed}
	// Every state reaches every other: an expired session is never a dead end.
	for _, from := range states {
		for _, to := range states {
			t.Run(fmt.Sprintf("%s to %s", from, to), func(t *testing.T) {
				db := storetest.NewTx(t)
				a := mustAccount(t, db)
				must(t, db.SetAccountAuthState(ctx, a.ID, from, "from error"))
				must(t, db.SetAccountAuthState(ctx, a.ID, to, ""))
				got, err := db.FindAccountByID(ctx, a.ID)
				must(t, err)
				if got.AuthState != to || got.AuthError != "" {
					t.Fatalf("state = %s (%q), want %s with no error", got.AuthState, got.AuthError, to)
				}
				seen := from == hoard.AuthAuthenticated || to == hoard.AuthAuthenticated
				if (got.LastSeenAt != nil) != seen {
					t.Fatalf("last_seen_at = %v, want set = %v", got.LastSeenAt, seen)
				}
			})
		}
	}

	t.Run("error message and last seen", func(t *testing.T) {
		db := storetest.NewTx(t)
		a := mustAccount(t, db)
		must(t, db.SetAccountAuthState(ctx, a.ID, hoard.AuthFailed, "PHONE_CODE_INVALID"))
		got, _ := db.FindAccountByID(ctx, a.ID)
		if got.AuthState != hoard.AuthFailed || got.AuthError != "PHONE_CODE_INVALID" || got.LastSeenAt != nil {
			t.Fatalf("failed account = %+v", got)
		}
		must(t, db.SetAccountAuthState(ctx, a.ID, hoard.AuthAuthenticated, ""))
		auth, _ := db.FindAccountByID(ctx, a.ID)
		if auth.LastSeenAt == nil || auth.AuthError != "" {
			t.Fatalf("authenticated account = %+v", auth)
		}
		// Leaving AUTHENTICATED keeps when it was last seen.
		must(t, db.SetAccountAuthState(ctx, a.ID, hoard.AuthExpired, "session revoked"))
		exp, _ := db.FindAccountByID(ctx, a.ID)
		if exp.LastSeenAt == nil || !exp.LastSeenAt.Equal(*auth.LastSeenAt) || exp.AuthError != "session revoked" {
			t.Fatalf("expired account = %+v", exp)
		}
		must(t, db.SetAccountAuthState(ctx, a.ID, hoard.AuthAwaitingCode, ""))
		again, _ := db.FindAccountByID(ctx, a.ID)
		if again.AuthState != hoard.AuthAwaitingCode {
			t.Fatalf("EXPIRED → AWAITING_CODE gave %s", again.AuthState)
		}
	})

	t.Run("invalid state", func(t *testing.T) {
		db := storetest.NewTx(t)
		a := mustAccount(t, db)
		err := savepoint(db, func(tx *store.DB) error { return tx.SetAccountAuthState(ctx, a.ID, "LOGGED_IN", "") })
		wantCode(t, err, hoard.EINVALID)
		got, _ := db.FindAccountByID(ctx, a.ID)
		if got.AuthState != hoard.AuthPending {
			t.Fatalf("state = %s after a rejected change", got.AuthState)
		}
	})

	t.Run("unknown account", func(t *testing.T) {
		db := storetest.NewTx(t)
		wantCode(t, db.SetAccountAuthState(ctx, -1, hoard.AuthPending, ""), hoard.ENOTFOUND)
	})
}

func TestSetAccountProfileAndActive(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	a := mustAccount(t, db)
	other := mustAccount(t, db)

	must(t, db.SetAccountProfile(ctx, a.ID, 424242, "Archivist", true))
	got, err := db.FindAccountByID(ctx, a.ID)
	must(t, err)
	if got.PlatformUserID != 424242 || got.DisplayName != "Archivist" || !got.IsPremium || got.LastSeenAt == nil {
		t.Fatalf("after profile = %+v", got)
	}
	if got.AuthState != hoard.AuthPending || got.Phone != a.Phone {
		t.Fatalf("profile changed other fields: %+v", got)
	}
	must(t, db.SetAccountProfile(ctx, a.ID, 424242, "Renamed", false))
	got, _ = db.FindAccountByID(ctx, a.ID)
	if got.DisplayName != "Renamed" || got.IsPremium {
		t.Fatalf("after second profile = %+v", got)
	}
	wantCode(t, db.SetAccountProfile(ctx, -1, 1, "x", false), hoard.ENOTFOUND)

	must(t, db.SetAccountActive(ctx, a.ID, false))
	got, _ = db.FindAccountByID(ctx, a.ID)
	if got.IsActive {
		t.Fatal("account still active")
	}
	must(t, db.SetAccountActive(ctx, a.ID, true))
	got, _ = db.FindAccountByID(ctx, a.ID)
	if !got.IsActive {
		t.Fatal("account not re-activated")
	}
	wantCode(t, db.SetAccountActive(ctx, -1, true), hoard.ENOTFOUND)

	must(t, db.SetAccountPremium(ctx, a.ID, true))
	got, _ = db.FindAccountByID(ctx, a.ID)
	if !got.IsPremium || got.DisplayName != "Renamed" {
		t.Fatalf("after Premium = %+v", got)
	}
	wantCode(t, db.SetAccountPremium(ctx, -1, true), hoard.ENOTFOUND)

	o, _ := db.FindAccountByID(ctx, other.ID)
	if o.DisplayName != "" || o.PlatformUserID != 0 || !o.IsActive {
		t.Fatalf("other account changed: %+v", o)
	}
}

func TestDeleteAccountCascades(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	a := mustAccount(t, db)
	b := mustAccount(t, db)
	ch := mustChannel(t, db)
	m := mustMap(t, db, a.ID, ch.ID)
	keep := mustMap(t, db, b.ID, ch.ID)
	_, err := db.UpsertTopic(ctx, m.ID, 3, "Topic", false)
	must(t, err)
	// A finished run that points at the map (not a RUNNING one: the
	// one-running index would make parallel tests wait on each other).
	var runID int64
	must(t, db.Tx().QueryRow(ctx, `INSERT INTO ingestion_runs (status, finished_at, current_activity, current_account_channel_map_id)
		VALUES ('COMPLETED', now(), 'scanning', $1) RETURNING id`, m.ID).Scan(&runID))

	must(t, db.DeleteAccount(ctx, a.ID))
	_, err = db.FindAccountByID(ctx, a.ID)
	wantCode(t, err, hoard.ENOTFOUND)
	_, err = db.FindChannelMap(ctx, m.ID)
	wantCode(t, err, hoard.ENOTFOUND)
	_, err = db.FindTopic(ctx, m.ID, 3)
	wantCode(t, err, hoard.ENOTFOUND)
	// The channel, the other account's map and the run's history stay.
	_, err = db.FindChannelByID(ctx, ch.ID)
	must(t, err)
	_, err = db.FindChannelMap(ctx, keep.ID)
	must(t, err)
	r, err := db.FindRun(ctx, runID)
	must(t, err)
	if r.CurrentAccountChannelMapID != 0 || r.CurrentActivity != "scanning" {
		t.Fatalf("run after account deletion = %+v", r)
	}

	wantCode(t, db.DeleteAccount(ctx, a.ID), hoard.ENOTFOUND)
}

func TestMessengerSessions(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	key := fmt.Sprintf("account:%d", seq.Add(1))

	data, err := db.LoadMessengerSession(ctx, key)
	if err != nil || data != nil {
		t.Fatalf("missing session = %v, %v; want nil, nil", data, err)
	}
	must(t, db.SaveMessengerSession(ctx, key, []byte{0, 1, 2, 0xff}))
	must(t, db.SaveMessengerSession(ctx, "bot", []byte("bot session")))
	data, err = db.LoadMessengerSession(ctx, key)
	must(t, err)
	if !bytes.Equal(data, []byte{0, 1, 2, 0xff}) {
		t.Fatalf("loaded %x", data)
	}
	must(t, db.SaveMessengerSession(ctx, key, []byte("second")))
	data, _ = db.LoadMessengerSession(ctx, key)
	if string(data) != "second" {
		t.Fatalf("after overwrite: %q", data)
	}
	must(t, db.SaveMessengerSession(ctx, key, []byte{}))
	data, err = db.LoadMessengerSession(ctx, key)
	if err != nil || data == nil || len(data) != 0 {
		t.Fatalf("empty session = %v, %v; want empty, not nil", data, err)
	}

	must(t, db.DeleteMessengerSession(ctx, key))
	data, err = db.LoadMessengerSession(ctx, key)
	if err != nil || data != nil {
		t.Fatalf("deleted session = %v, %v", data, err)
	}
	must(t, db.DeleteMessengerSession(ctx, key)) // absent is fine
	bot, _ := db.LoadMessengerSession(ctx, "bot")
	if string(bot) != "bot session" {
		t.Fatalf("other session = %q", bot)
	}
}
