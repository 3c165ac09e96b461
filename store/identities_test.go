package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// identity returns a provider account no other test uses.
func identity(provider string) hoard.Identity {
	n := seq.Add(1)
	return hoard.Identity{Provider: provider, Issuer: "https://idp.example/" + provider, Subject: fmt.Sprintf("subject-%d", n),
		Email: fmt.Sprintf("person%d@idp.example", n)}
}

func mustFlow(t *testing.T, db *store.DB, mutate ...func(*store.SignInFlow)) *store.SignInFlow {
	t.Helper()
	f := &store.SignInFlow{ID: fmt.Sprintf("flow-%d", seq.Add(1)), Provider: "oidc", Verifier: strings.Repeat("v", 43),
		Nonce: strings.Repeat("n", 22), NextPath: "/packages/1", ExpiresAt: time.Now().Add(10 * time.Minute)}
	for _, m := range mutate {
		m(f)
	}
	must(t, db.CreateSignInFlow(context.Background(), f))
	return f
}

func TestSignInFlowIsTakenOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewTx(t)
	user := mustUser(t, db, hoard.RoleUser)
	live := mustFlow(t, db, func(f *store.SignInFlow) {
		f.InviteCode, f.LinkUserID, f.PasswordConfirmed = "invite-1", user.ID, true
	})
	expired := mustFlow(t, db, func(f *store.SignInFlow) { f.ExpiresAt = time.Now().Add(-time.Second) })

	got, err := db.TakeSignInFlow(ctx, live.ID)
	must(t, err)
	got.CreatedAt, got.ExpiresAt = live.CreatedAt, live.ExpiresAt // compared apart: the database rounds to microseconds
	if *got != *live {
		t.Fatalf("TakeSignInFlow = %+v, want %+v", got, live)
	}
	for _, id := range []string{live.ID, expired.ID, "unknown"} {
		_, err := db.TakeSignInFlow(ctx, id)
		wantCode(t, err, hoard.ENOTFOUND)
	}
}

func TestSignInFlowRefusesBadValues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewTx(t)
	for _, tc := range []struct {
		name   string
		mutate func(*store.SignInFlow)
	}{
		{"short verifier", func(f *store.SignInFlow) { f.Verifier = "v" }},
		{"short nonce", func(f *store.SignInFlow) { f.Nonce = "n" }},
		{"long invite code", func(f *store.SignInFlow) { f.InviteCode = strings.Repeat("c", 65) }},
		{"unknown user", func(f *store.SignInFlow) { f.LinkUserID = -1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &store.SignInFlow{ID: fmt.Sprintf("bad-%d", seq.Add(1)), Provider: "oidc", Verifier: strings.Repeat("v", 43),
				Nonce: strings.Repeat("n", 22), ExpiresAt: time.Now().Add(time.Minute)}
			tc.mutate(f)
			err := savepoint(db, func(tx *store.DB) error { return tx.CreateSignInFlow(ctx, f) })
			wantCode(t, err, hoard.EINVALID)
		})
	}
}

func TestRegisterWithIdentity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewTx(t)
	taken := mustUser(t, db, hoard.RoleUser)
	linked := identity("oidc")
	_, err := db.LinkIdentity(ctx, taken.ID, linked)
	must(t, err)

	type want struct {
		code      string // error code; "" = registered
		message   string // part of the error's message
		inviteUse int    // the invite's use count afterwards
	}
	tests := []struct {
		name   string
		invite func(*hoard.InviteCode) // nil: no invite
		mutate func(*store.IdentityUser)
		want   want
	}{
		{"with an invite", func(*hoard.InviteCode) {}, nil, want{inviteUse: 1}},
		{"without an invite", nil, nil, want{}},
		{"as mapped to ADMIN", nil, func(u *store.IdentityUser) { u.Role = hoard.RoleAdmin }, want{}},
		{"invite used up", func(i *hoard.InviteCode) { i.Note = "used up" }, nil,
			want{code: hoard.EINVALID, message: "used up", inviteUse: 1}},
		{"invite expired", func(i *hoard.InviteCode) { i.ExpiresAt = ptr(time.Now().Add(-time.Minute)) }, nil,
			want{code: hoard.EINVALID, message: "expired"}},
		{"invite of an administrator", func(i *hoard.InviteCode) { i.Role = hoard.RoleAdmin }, nil,
			want{code: hoard.EINVALID, message: "administrator"}},
		{"unknown invite", nil, func(u *store.IdentityUser) { u.InviteCode = "no-such-code" }, want{code: hoard.EINVALID, message: "not valid"}},
		{"email taken", func(*hoard.InviteCode) {}, func(u *store.IdentityUser) { u.Email = strings.ToUpper(taken.Email) },
			want{code: hoard.ECONFLICT, message: "already exists"}},
		{"account linked to someone", func(*hoard.InviteCode) {}, func(u *store.IdentityUser) { u.Identity = linked },
			want{code: hoard.ECONFLICT, message: "another hoard user"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nu := store.IdentityUser{Email: uniqueEmail("sso"), Role: hoard.RoleUser, Identity: identity("oidc")}
			var inv *hoard.InviteCode
			if tc.invite != nil {
				inv = mustInvite(t, db, tc.invite)
				nu.InviteCode = inv.Code
				if inv.Note == "used up" {
					_, err := db.Tx().Exec(ctx, `UPDATE invite_codes SET use_count = max_uses WHERE id = $1`, inv.ID)
					must(t, err)
				}
			}
			if tc.mutate != nil {
				tc.mutate(&nu)
			}
			before, err := db.CountUsers(ctx)
			must(t, err)
			var user *hoard.User
			err = savepoint(db, func(tx *store.DB) error { user, err = tx.RegisterWithIdentity(ctx, nu); return err })
			got := want{code: hoard.ErrorCode(err), message: tc.want.message}
			if err != nil && !strings.Contains(hoard.ErrorMessage(err), tc.want.message) {
				got.message = hoard.ErrorMessage(err)
			}
			if inv != nil {
				after, err := db.FindInviteByCode(ctx, inv.Code)
				must(t, err)
				got.inviteUse = after.UseCount
			}
			if got != tc.want {
				t.Fatalf("RegisterWithIdentity = %+v (%v), want %+v", got, err, tc.want)
			}
			if err != nil {
				if after, _ := db.CountUsers(ctx); after != before {
					t.Fatalf("a refused sign-up stored a user: %d users, were %d", after, before)
				}
				return
			}
			inviteID := int64(0)
			if inv != nil {
				inviteID = inv.ID
			}
			if user.Email != nu.Email || user.Role != nu.Role || user.HasPassword() || user.InviteCodeID != inviteID {
				t.Fatalf("registered user = %+v", user)
			}
			found, id, err := db.FindUserByIdentity(ctx, nu.Identity.Issuer, nu.Identity.Subject)
			must(t, err)
			if found.ID != user.ID || id.UserID != user.ID || id.Provider != "oidc" || id.Email != nu.Identity.Email {
				t.Fatalf("FindUserByIdentity = %+v, %+v", found, id)
			}
		})
	}
}

func TestLinkAndUnlinkIdentities(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewTx(t)
	alice := mustUser(t, db, hoard.RoleUser)
	bob := mustUser(t, db, hoard.RoleUser)
	aliceOIDC := identity("oidc")
	first, err := db.LinkIdentity(ctx, alice.ID, aliceOIDC)
	must(t, err)

	for _, tc := range []struct {
		name    string
		user    int64
		id      hoard.Identity
		message string
	}{
		{"the same account to another user", bob.ID, aliceOIDC, "another hoard user"},
		{"a second account of one provider", alice.ID, identity("oidc"), "unlink it first"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := savepoint(db, func(tx *store.DB) error { _, err := tx.LinkIdentity(ctx, tc.user, tc.id); return err })
			wantCode(t, err, hoard.ECONFLICT)
			if !strings.Contains(hoard.ErrorMessage(err), tc.message) {
				t.Fatalf("message %q lacks %q", hoard.ErrorMessage(err), tc.message)
			}
		})
	}
	again, err := db.LinkIdentity(ctx, alice.ID, aliceOIDC)
	must(t, err)
	a, f := *again, *first
	a.LastUsedAt, f.LastUsedAt = nil, nil
	if a != f || !again.LastUsedAt.Equal(*first.LastUsedAt) {
		t.Fatalf("linking the own account again = %+v, want %+v", again, first)
	}
	second, err := db.LinkIdentity(ctx, alice.ID, identity("github"))
	must(t, err)
	must(t, db.RecordIdentityUse(ctx, first.ID, "new@idp.example"))
	list, err := db.ListIdentities(ctx, alice.ID)
	must(t, err)
	type identity struct {
		ID    int64
		Email string
		Used  bool
	}
	var got []identity
	for _, i := range list {
		got = append(got, identity{i.ID, i.Email, i.LastUsedAt != nil})
	}
	if len(list) == 2 {
		got[1].Email, got[1].Used = "", false // the second's are its own
	}
	if diff := cmp.Diff([]identity{{first.ID, "new@idp.example", true}, {ID: second.ID}}, got); diff != "" {
		t.Fatalf("ListIdentities (-want +got):\n%s", diff)
	}

	// A user without a password keeps their last account.
	must(t, savepoint(db, func(tx *store.DB) error {
		_, err := tx.Tx().Exec(ctx, `UPDATE users SET password_hash = '' WHERE id = $1`, alice.ID)
		return err
	}))
	steps := []struct {
		provider string
		code     string
	}{
		{"oidc", ""},
		{"oidc", hoard.ENOTFOUND},
		{"github", hoard.ECONFLICT},
	}
	for _, st := range steps {
		err := savepoint(db, func(tx *store.DB) error { return tx.UnlinkIdentity(ctx, alice.ID, st.provider) })
		if hoard.ErrorCode(err) != st.code || (err != nil && st.code == "") {
			t.Fatalf("UnlinkIdentity(%s) = %v, want code %q", st.provider, err, st.code)
		}
	}
	if list, _ := db.ListIdentities(ctx, alice.ID); len(list) != 1 || list[0].Provider != "github" {
		t.Fatalf("identities left = %+v", list)
	}
	// With a password, the last account may go.
	must(t, db.SetUserPasswordIfNone(ctx, alice.ID, "argon2id$hash"))
	wantCode(t, db.SetUserPasswordIfNone(ctx, alice.ID, "another"), hoard.ECONFLICT)
	must(t, db.UnlinkIdentity(ctx, alice.ID, "github"))
}

// TestConcurrentUnlinksKeepAWayIn: two unlinks of a password-less user's two
// accounts at once leave one of them.
func TestConcurrentUnlinksKeepAWayIn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewDB(t)
	user, err := db.CreateUser(ctx, uniqueEmail("unlink"), "", hoard.RoleUser)
	must(t, err)
	for _, p := range []string{"oidc", "github"} {
		_, err := db.LinkIdentity(ctx, user.ID, identity(p))
		must(t, err)
	}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, p := range []string{"oidc", "github"} {
		wg.Go(func() { errs[i] = db.UnlinkIdentity(ctx, user.ID, p) })
	}
	wg.Wait()
	list, err := db.ListIdentities(ctx, user.ID)
	must(t, err)
	codes := []string{hoard.ErrorCode(errs[0]), hoard.ErrorCode(errs[1])}
	if len(list) != 1 || (codes[0] == "") == (codes[1] == "") || codes[0]+codes[1] != hoard.ECONFLICT {
		t.Fatalf("unlinks answered %v; identities left %+v", errs, list)
	}
}

func TestSetRoleFromProviderKeepsAnAdministrator(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewDB(t)
	a := mustUser(t, db, hoard.RoleAdmin)
	b := mustUser(t, db, hoard.RoleUser)
	steps := []struct {
		user int64
		role hoard.Role
		want hoard.Role
	}{
		{b.ID, hoard.RoleAdmin, hoard.RoleAdmin}, // promoted
		{a.ID, hoard.RoleUser, hoard.RoleUser},   // b is an administrator still
		{b.ID, hoard.RoleUser, hoard.RoleAdmin},  // the last one stays
		{a.ID, hoard.RoleAdmin, hoard.RoleAdmin},
	}
	for i, st := range steps {
		got, err := db.SetRoleFromProvider(ctx, st.user, st.role)
		must(t, err)
		if got != st.want {
			t.Fatalf("step %d: SetRoleFromProvider(%d, %s) = %s, want %s", i, st.user, st.role, got, st.want)
		}
	}
	// Both demoted at once: one stays.
	var wg sync.WaitGroup
	for _, id := range []int64{a.ID, b.ID} {
		wg.Go(func() {
			if _, err := db.SetRoleFromProvider(ctx, id, hoard.RoleUser); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	users, err := db.ListUsers(ctx)
	must(t, err)
	admins := 0
	for _, u := range users {
		if u.IsAdmin() {
			admins++
		}
	}
	if admins != 1 {
		t.Fatalf("%d administrators after two demotions at once, want 1", admins)
	}
	_, err = db.SetRoleFromProvider(ctx, -1, hoard.RoleUser)
	wantCode(t, err, hoard.ENOTFOUND)
}
