package store_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// uniqueEmail returns an address no other test uses: parallel test
// transactions share one unique index, so equal emails would make them wait
// on each other.
func uniqueEmail(prefix string) string {
	return fmt.Sprintf("%s%d@example.com", prefix, seq.Add(1))
}

// mustUser stores a user with a unique email and the given role.
func mustUser(t *testing.T, db *store.DB, role hoard.Role) *hoard.User {
	t.Helper()
	u, err := db.CreateUser(context.Background(), uniqueEmail("user"), "hash", role)
	if err != nil {
		t.Fatalf("CreateUser: %v", err)
	}
	return u
}

// mustInvite stores an invite code with a unique code.
func mustInvite(t *testing.T, db *store.DB, mutate ...func(*hoard.InviteCode)) *hoard.InviteCode {
	t.Helper()
	inv := &hoard.InviteCode{Code: fmt.Sprintf("invite-%08d", seq.Add(1))}
	for _, m := range mutate {
		m(inv)
	}
	if err := db.CreateInvite(context.Background(), inv); err != nil {
		t.Fatalf("CreateInvite: %v", err)
	}
	return inv
}

// txNow returns now() of db's transaction: the time every now() in the
// test's statements returns.
func txNow(t *testing.T, db *store.DB) time.Time {
	t.Helper()
	var now time.Time
	must(t, db.Tx().QueryRow(context.Background(), `SELECT now()`).Scan(&now))
	return now
}

func userIDs(users []hoard.User) []int64 {
	out := make([]int64, len(users))
	for i, u := range users {
		out[i] = u.ID
	}
	return out
}

func TestCreateAndFindUser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewTx(t)
	now := txNow(t, db)

	email := uniqueEmail("Mixed.Case")
	u, err := db.CreateUser(ctx, "  "+email+"\t", "argon2id$hash", hoard.RoleAdmin)
	must(t, err)
	if u.ID == 0 || !u.IsAdmin() {
		t.Fatalf("created user = %+v: want an id and an administrator", u)
	}
	want := hoard.User{ID: u.ID, Email: email, PasswordHash: "argon2id$hash", Role: hoard.RoleAdmin, CreatedAt: now, UpdatedAt: now}
	if diff := cmp.Diff(want, *u); diff != "" {
		t.Fatalf("created user (-want +got):\n%s", diff)
	}
	plain := mustUser(t, db, hoard.RoleUser)
	if plain.Role != hoard.RoleUser || plain.IsAdmin() {
		t.Fatalf("USER role stored as %q", plain.Role)
	}

	got, err := db.FindUserByID(ctx, u.ID)
	must(t, err)
	if *got != *u {
		t.Fatalf("FindUserByID = %+v, want %+v", got, u)
	}
	_, err = db.FindUserByID(ctx, -1)
	wantCode(t, err, hoard.ENOTFOUND)

	for _, lookup := range []string{email, strings.ToUpper(email), strings.ToLower(email), " " + strings.ToUpper(email) + " \n"} {
		got, err := db.FindUserByEmail(ctx, lookup)
		if err != nil || got.ID != u.ID {
			t.Errorf("FindUserByEmail(%q) = %+v, %v; want user %d", lookup, got, err, u.ID)
		}
	}
	_, err = db.FindUserByEmail(ctx, "nobody-"+email)
	wantCode(t, err, hoard.ENOTFOUND)

	// Uniqueness ignores letter case and surrounding space.
	for _, dup := range []string{email, strings.ToUpper(email), " " + strings.ToLower(email) + " "} {
		err = savepoint(db, func(tx *store.DB) error { _, err := tx.CreateUser(ctx, dup, "h", hoard.RoleUser); return err })
		wantCode(t, err, hoard.ECONFLICT)
	}
	for _, role := range []hoard.Role{"", "admin", "ROOT"} {
		err = savepoint(db, func(tx *store.DB) error {
			_, err := tx.CreateUser(ctx, uniqueEmail("role"), "h", role)
			return err
		})
		wantCode(t, err, hoard.EINVALID)
	}
	n, err := db.CountUsers(ctx)
	must(t, err)
	list, err := db.ListUsers(ctx)
	must(t, err)
	if int64(len(list)) != n || !slices.Contains(userIDs(list), u.ID) || !slices.Contains(userIDs(list), plain.ID) {
		t.Fatalf("refused users were stored: count %d, list %v", n, userIDs(list))
	}
}

func TestListAndCountUsers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewTx(t)
	n0, err := db.CountUsers(ctx)
	must(t, err)
	before, err := db.ListUsers(ctx)
	must(t, err)
	if int64(len(before)) != n0 {
		t.Fatalf("CountUsers = %d, ListUsers has %d", n0, len(before))
	}

	var want []int64
	for i := 0; i < 3; i++ {
		want = append(want, mustUser(t, db, hoard.RoleUser).ID)
		n, err := db.CountUsers(ctx)
		must(t, err)
		if n != n0+int64(i+1) {
			t.Fatalf("CountUsers after %d = %d, want %d", i+1, n, n0+int64(i+1))
		}
	}
	got, err := db.ListUsers(ctx)
	must(t, err)
	ids := userIDs(got)
	if len(ids) != len(before)+3 || !slices.Equal(ids[len(before):], want) || !slices.IsSorted(ids) {
		t.Fatalf("ListUsers = %v, want %v last, oldest first", ids, want)
	}
	for _, u := range got[len(before):] {
		if u.Email == "" || u.PasswordHash != "hash" || u.Role != hoard.RoleUser || u.CreatedAt.IsZero() {
			t.Fatalf("listed user = %+v", u)
		}
	}
}

func TestUpdateUser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewTx(t)
	u := mustUser(t, db, hoard.RoleUser)
	other := mustUser(t, db, hoard.RoleUser)
	// Move the stamps back so that updates show.
	_, err := db.Tx().Exec(ctx, `UPDATE users SET updated_at = now() - interval '1 day' WHERE id = $1`, u.ID)
	must(t, err)
	now := txNow(t, db)

	must(t, db.SetUserPassword(ctx, u.ID, "new-hash"))
	got, err := db.FindUserByID(ctx, u.ID)
	must(t, err)
	if got.PasswordHash != "new-hash" || !got.UpdatedAt.Equal(now) || got.Role != hoard.RoleUser {
		t.Fatalf("after SetUserPassword: %+v", got)
	}

	_, err = db.Tx().Exec(ctx, `UPDATE users SET updated_at = now() - interval '1 day' WHERE id = $1`, u.ID)
	must(t, err)
	must(t, db.SetUserRole(ctx, u.ID, hoard.RoleAdmin))
	got, _ = db.FindUserByID(ctx, u.ID)
	if got.Role != hoard.RoleAdmin || !got.UpdatedAt.Equal(now) || got.PasswordHash != "new-hash" {
		t.Fatalf("after SetUserRole(ADMIN): %+v", got)
	}
	must(t, db.SetUserRole(ctx, u.ID, hoard.RoleUser))
	got, _ = db.FindUserByID(ctx, u.ID)
	if got.Role != hoard.RoleUser {
		t.Fatalf("after SetUserRole(USER): role %q", got.Role)
	}
	err = savepoint(db, func(tx *store.DB) error { return tx.SetUserRole(ctx, u.ID, "SUPERUSER") })
	wantCode(t, err, hoard.EINVALID)

	if got.LastLoginAt != nil {
		t.Fatalf("new user has a last sign-in: %v", got.LastLoginAt)
	}
	must(t, db.RecordLogin(ctx, u.ID))
	got, _ = db.FindUserByID(ctx, u.ID)
	if got.LastLoginAt == nil || !got.LastLoginAt.Equal(now) {
		t.Fatalf("after RecordLogin: last_login_at = %v, want %v", got.LastLoginAt, now)
	}

	// The other user was not touched.
	o, _ := db.FindUserByID(ctx, other.ID)
	if o.PasswordHash != "hash" || o.Role != hoard.RoleUser || o.LastLoginAt != nil {
		t.Fatalf("other user changed: %+v", o)
	}

	wantCode(t, db.SetUserPassword(ctx, -1, "x"), hoard.ENOTFOUND)
	wantCode(t, db.SetUserRole(ctx, -1, hoard.RoleAdmin), hoard.ENOTFOUND)
	wantCode(t, db.RecordLogin(ctx, -1), hoard.ENOTFOUND)
}

func TestDeleteUser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewTx(t)
	u := mustUser(t, db, hoard.RoleAdmin)
	keep := mustUser(t, db, hoard.RoleUser)
	exp := time.Now().Add(time.Hour)
	n := seq.Add(1)
	del1, del2, keep1 := fmt.Sprintf("del-1-%d", n), fmt.Sprintf("del-2-%d", n), fmt.Sprintf("keep-1-%d", n)
	for _, s := range []*hoard.Session{{ID: del1, UserID: u.ID}, {ID: del2, UserID: u.ID}, {ID: keep1, UserID: keep.ID}} {
		s.ExpiresAt = exp
		must(t, db.CreateSession(ctx, s))
	}
	_, err := db.Tx().Exec(ctx, `INSERT INTO messenger_link_codes (code_hash, user_id, expires_at) VALUES ($2, $1, now() + interval '1 hour')`, u.ID, fmt.Sprintf("del-code-%d", n))
	must(t, err)
	// An invite the user made outlives them.
	inv := mustInvite(t, db, func(i *hoard.InviteCode) { i.CreatedBy = u.ID })
	if inv.CreatedBy != u.ID {
		t.Fatalf("invite created_by = %d, want %d", inv.CreatedBy, u.ID)
	}

	must(t, db.DeleteUser(ctx, u.ID))
	_, err = db.FindUserByID(ctx, u.ID)
	wantCode(t, err, hoard.ENOTFOUND)
	wantCode(t, db.DeleteUser(ctx, u.ID), hoard.ENOTFOUND)
	wantCode(t, db.DeleteUser(ctx, -1), hoard.ENOTFOUND)

	var sessions, codes int
	must(t, db.Tx().QueryRow(ctx, `SELECT count(*) FROM sessions WHERE user_id = $1`, u.ID).Scan(&sessions))
	must(t, db.Tx().QueryRow(ctx, `SELECT count(*) FROM messenger_link_codes WHERE user_id = $1`, u.ID).Scan(&codes))
	if sessions != 0 || codes != 0 {
		t.Fatalf("after DeleteUser: %d sessions, %d link codes left", sessions, codes)
	}
	_, _, err = db.FindSessionUser(ctx, del1)
	wantCode(t, err, hoard.ENOTFOUND)
	if _, ku, err := db.FindSessionUser(ctx, keep1); err != nil || ku.ID != keep.ID {
		t.Fatalf("other user's session = %v, %v", ku, err)
	}
	got, err := db.FindInviteByCode(ctx, inv.Code)
	must(t, err)
	if got.CreatedBy != 0 {
		t.Fatalf("invite created_by after its creator was deleted = %d, want 0", got.CreatedBy)
	}
}

func TestInviteRefusal(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { v := now.Add(d); return &v }
	for _, tt := range []struct {
		name string
		inv  *hoard.InviteCode
		msg  string // "" = usable
	}{
		{"nil", nil, "This invite code is not valid."},
		{"expired an hour ago", &hoard.InviteCode{MaxUses: 1, ExpiresAt: at(-time.Hour)}, "This invite code has expired."},
		{"expires right now", &hoard.InviteCode{MaxUses: 1, ExpiresAt: at(0)}, "This invite code has expired."},
		{"used up", &hoard.InviteCode{MaxUses: 3, UseCount: 3}, "This invite code has been used up."},
		{"over used", &hoard.InviteCode{MaxUses: 1, UseCount: 2, ExpiresAt: at(time.Hour)}, "This invite code has been used up."},
		{"usable, no expiry", &hoard.InviteCode{MaxUses: 1}, ""},
		{"usable, last use", &hoard.InviteCode{MaxUses: 5, UseCount: 4, ExpiresAt: at(time.Nanosecond)}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := store.InviteRefusal(tt.inv, now)
			if tt.msg == "" {
				if err != nil {
					t.Fatalf("InviteRefusal = %v, want nil", err)
				}
			} else {
				wantCode(t, err, hoard.EINVALID)
				if got := hoard.ErrorMessage(err); got != tt.msg {
					t.Fatalf("message = %q, want %q", got, tt.msg)
				}
			}
			if tt.inv != nil && tt.inv.Usable(now) != (err == nil) {
				t.Fatalf("InviteRefusal = %v but Usable = %v", err, tt.inv.Usable(now))
			}
		})
	}
}

func TestRegisterWithInvite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	// state returns the number of users and the code's use count.
	state := func(t *testing.T, db *store.DB, code string) (int64, int) {
		t.Helper()
		n, err := db.CountUsers(ctx)
		must(t, err)
		inv, err := db.FindInviteByCode(ctx, code)
		if hoard.ErrorCode(err) == hoard.ENOTFOUND {
			return n, -1
		}
		must(t, err)
		return n, inv.UseCount
	}

	t.Run("role, use count and invite recorded", func(t *testing.T) {
		t.Parallel()
		db := storetest.NewTx(t)
		inv := mustInvite(t, db, func(i *hoard.InviteCode) { i.Role = hoard.RoleAdmin; i.MaxUses = 2 })
		email := uniqueEmail("Reg")
		u, err := db.RegisterWithInvite(ctx, " "+inv.Code+" ", " "+email+" ", "reg-hash")
		must(t, err)
		type registered struct {
			HasID               bool
			Email, PasswordHash string
			Role                hoard.Role
			InviteCodeID        int64
		}
		if diff := cmp.Diff(registered{true, email, "reg-hash", hoard.RoleAdmin, inv.ID},
			registered{u.ID != 0, u.Email, u.PasswordHash, u.Role, u.InviteCodeID}); diff != "" {
			t.Fatalf("registered user (-want +got):\n%s", diff)
		}
		stored, err := db.FindUserByEmail(ctx, email)
		must(t, err)
		if *stored != *u {
			t.Fatalf("stored user = %+v, want %+v", stored, u)
		}
		if _, uses := state(t, db, inv.Code); uses != 1 {
			t.Fatalf("use_count = %d, want 1", uses)
		}

		user := mustInvite(t, db) // default role USER
		u2, err := db.RegisterWithInvite(ctx, user.Code, uniqueEmail("reg"), "h")
		must(t, err)
		if u2.Role != hoard.RoleUser || u2.InviteCodeID != user.ID {
			t.Fatalf("user registered with a USER code = %+v", u2)
		}
		// The ADMIN code still has one use; the other code is used up.
		_, err = db.RegisterWithInvite(ctx, inv.Code, uniqueEmail("reg"), "h")
		must(t, err)
		if _, uses := state(t, db, inv.Code); uses != 2 {
			t.Fatalf("use_count = %d, want 2", uses)
		}
	})

	t.Run("refused codes write nothing", func(t *testing.T) {
		t.Parallel()
		db := storetest.NewTx(t)
		expired := mustInvite(t, db, func(i *hoard.InviteCode) { i.ExpiresAt = ptr(time.Now().Add(-time.Minute)) })
		usedUp := mustInvite(t, db)
		_, err := db.RegisterWithInvite(ctx, usedUp.Code, uniqueEmail("first"), "h")
		must(t, err)
		for _, tt := range []struct {
			name, code, msg string
			uses            int
		}{
			{"unknown", "no-such-code-" + fmt.Sprint(seq.Add(1)), "This invite code is not valid.", -1},
			{"empty", "  ", "This invite code is not valid.", -1},
			{"expired", expired.Code, "This invite code has expired.", 0},
			{"used up", usedUp.Code, "This invite code has been used up.", 1},
		} {
			t.Run(tt.name, func(t *testing.T) {
				users0, _ := state(t, db, tt.code)
				email := uniqueEmail("refused")
				u, err := db.RegisterWithInvite(ctx, tt.code, email, "h")
				if u != nil {
					t.Fatalf("refused registration returned a user: %+v", u)
				}
				wantCode(t, err, hoard.EINVALID)
				if got := hoard.ErrorMessage(err); got != tt.msg {
					t.Fatalf("message = %q, want %q", got, tt.msg)
				}
				users, uses := state(t, db, tt.code)
				if users != users0 || uses != tt.uses {
					t.Fatalf("after refusal: %d users (was %d), use_count %d (want %d)", users, users0, uses, tt.uses)
				}
				_, err = db.FindUserByEmail(ctx, email)
				wantCode(t, err, hoard.ENOTFOUND)
			})
		}
	})

	t.Run("duplicate email does not count the use", func(t *testing.T) {
		t.Parallel()
		db := storetest.NewTx(t)
		existing := mustUser(t, db, hoard.RoleUser)
		inv := mustInvite(t, db, func(i *hoard.InviteCode) { i.MaxUses = 5; i.Role = hoard.RoleAdmin })
		users0, _ := state(t, db, inv.Code)
		u, err := db.RegisterWithInvite(ctx, inv.Code, strings.ToUpper(existing.Email), "h")
		if u != nil {
			t.Fatalf("duplicate registration returned a user: %+v", u)
		}
		wantCode(t, err, hoard.ECONFLICT)
		if got := hoard.ErrorMessage(err); got != "An account with this email already exists." {
			t.Fatalf("message = %q", got)
		}
		users, uses := state(t, db, inv.Code)
		if users != users0 || uses != 0 {
			t.Fatalf("after a duplicate: %d users (was %d), use_count %d, want 0", users, users0, uses)
		}
		got, _ := db.FindUserByID(ctx, existing.ID)
		if got.Role != hoard.RoleUser || got.InviteCodeID != 0 {
			t.Fatalf("existing user changed: %+v", got)
		}
	})
}

// TestRegisterWithInviteConcurrent races registrations on committed rows:
// the invite's row lock must keep the uses at the code's maximum.
func TestRegisterWithInviteConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewDB(t)
	inv := mustInvite(t, db, func(i *hoard.InviteCode) { i.MaxUses = 3 })

	const n = 20
	var wg sync.WaitGroup
	users := make([]*hoard.User, n)
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			users[i], errs[i] = db.RegisterWithInvite(ctx, inv.Code, fmt.Sprintf("racer%d@example.com", i), "h")
		}()
	}
	wg.Wait()
	var won []string
	for i := range n {
		switch {
		case errs[i] == nil:
			if users[i] == nil || users[i].InviteCodeID != inv.ID {
				t.Errorf("winner %d = %+v", i, users[i])
				continue
			}
			won = append(won, users[i].Email)
		case hoard.ErrorMessage(errs[i]) != "This invite code has been used up.":
			t.Errorf("racer %d: %v", i, errs[i])
		}
	}
	if len(won) != 3 {
		t.Fatalf("%d registrations won, want 3", len(won))
	}
	count, err := db.CountUsers(ctx)
	must(t, err)
	got, err := db.FindInviteByCode(ctx, inv.Code)
	must(t, err)
	if count != 3 || got.UseCount != 3 {
		t.Fatalf("after the race: %d users, use_count %d; want 3 and 3", count, got.UseCount)
	}
	list, err := db.ListInvites(ctx)
	must(t, err)
	slices.Sort(won)
	if len(list) != 1 || !slices.Equal(slices.Sorted(slices.Values(list[0].UsedBy)), won) {
		t.Fatalf("ListInvites = %+v, want UsedBy %v", list, won)
	}

	// One email, many codes' worth of uses: exactly one account.
	wide := mustInvite(t, db, func(i *hoard.InviteCode) { i.MaxUses = 10 })
	for i := 0; i < 5; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = db.RegisterWithInvite(ctx, wide.Code, "Same@Example.com", "h")
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs[:5] {
		if err == nil {
			ok++
		} else if hoard.ErrorCode(err) != hoard.ECONFLICT {
			t.Errorf("same-email racer: %v", err)
		}
	}
	got, _ = db.FindInviteByCode(ctx, wide.Code)
	if ok != 1 || got.UseCount != 1 {
		t.Fatalf("same email: %d registrations, use_count %d; want 1 and 1", ok, got.UseCount)
	}
}

func TestCreateAndFindInvite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewTx(t)
	now := txNow(t, db)

	inv := &hoard.InviteCode{Code: fmt.Sprintf("default-%d", seq.Add(1))}
	must(t, db.CreateInvite(ctx, inv))
	if inv.ID == 0 {
		t.Fatalf("invite with defaults has no id: %+v", inv)
	}
	if diff := cmp.Diff(hoard.InviteCode{ID: inv.ID, Code: inv.Code, Role: hoard.RoleUser, MaxUses: 1, CreatedAt: now}, *inv,
		cmpopts.IgnoreFields(hoard.InviteCode{}, "UsedBy")); diff != "" {
		t.Fatalf("invite with defaults (-want +got):\n%s", diff)
	}

	admin := mustUser(t, db, hoard.RoleAdmin)
	exp := time.Now().Add(48 * time.Hour).Truncate(time.Microsecond)
	full := &hoard.InviteCode{Code: fmt.Sprintf("full-%d", seq.Add(1)), Role: hoard.RoleAdmin, MaxUses: 7,
		ExpiresAt: &exp, Note: "for the team", CreatedBy: admin.ID}
	must(t, db.CreateInvite(ctx, full))
	if full.ID == 0 {
		t.Fatalf("invite has no id: %+v", full)
	}
	if diff := cmp.Diff(hoard.InviteCode{ID: full.ID, Code: full.Code, Role: hoard.RoleAdmin, MaxUses: 7, ExpiresAt: &exp, Note: "for the team",
		CreatedBy: admin.ID}, *full, cmpopts.IgnoreFields(hoard.InviteCode{}, "CreatedAt", "UsedBy")); diff != "" {
		t.Fatalf("invite (-want +got):\n%s", diff)
	}

	for _, code := range []string{full.Code, " " + full.Code + " "} {
		got, err := db.FindInviteByCode(ctx, code)
		must(t, err)
		if diff := cmp.Diff(*full, *got, cmpopts.IgnoreFields(hoard.InviteCode{}, "UseCount", "Code", "UsedBy")); diff != "" || got.MaxUses != 7 || got.CreatedBy != admin.ID {
			t.Fatalf("FindInviteByCode(%q) (-want +got):\n%s", code, diff)
		}
	}
	_, err := db.FindInviteByCode(ctx, "missing-"+full.Code)
	wantCode(t, err, hoard.ENOTFOUND)
	// Codes are case-sensitive secrets.
	_, err = db.FindInviteByCode(ctx, strings.ToUpper(full.Code))
	wantCode(t, err, hoard.ENOTFOUND)

	for _, tt := range []struct {
		name string
		inv  hoard.InviteCode
		code string
	}{
		{"duplicate code", hoard.InviteCode{Code: full.Code}, hoard.ECONFLICT},
		{"negative max uses", hoard.InviteCode{Code: fmt.Sprintf("neg-%d", seq.Add(1)), MaxUses: -1}, hoard.EINVALID},
		{"bad role", hoard.InviteCode{Code: fmt.Sprintf("role-%d", seq.Add(1)), Role: "OWNER"}, hoard.EINVALID},
		{"short code", hoard.InviteCode{Code: "abc"}, hoard.EINVALID},
		{"unknown creator", hoard.InviteCode{Code: fmt.Sprintf("who-%d", seq.Add(1)), CreatedBy: -5}, hoard.EINVALID},
	} {
		t.Run(tt.name, func(t *testing.T) {
			inv := tt.inv
			err := savepoint(db, func(tx *store.DB) error { return tx.CreateInvite(ctx, &inv) })
			wantCode(t, err, tt.code)
			if inv.ID != 0 {
				t.Fatalf("refused invite got an id: %+v", inv)
			}
		})
	}
}

func TestListInvites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewTx(t)
	list, err := db.ListInvites(ctx)
	must(t, err)
	n0 := len(list)

	a := mustInvite(t, db, func(i *hoard.InviteCode) { i.MaxUses = 3 })
	b := mustInvite(t, db)
	c := mustInvite(t, db)
	var emails []string
	for i := 0; i < 2; i++ {
		u, err := db.RegisterWithInvite(ctx, a.Code, uniqueEmail("listed"), "h")
		must(t, err)
		emails = append(emails, u.Email)
	}
	mustUser(t, db, hoard.RoleUser) // registered without a code

	// One transaction, one now(): newest by id.
	list, err = db.ListInvites(ctx)
	must(t, err)
	if len(list) != n0+3 {
		t.Fatalf("ListInvites has %d invites, want %d", len(list), n0+3)
	}
	var got []int64
	for _, inv := range list[:3] {
		got = append(got, inv.ID)
	}
	if !slices.Equal(got, []int64{c.ID, b.ID, a.ID}) {
		t.Fatalf("ListInvites order = %v, want %v", got, []int64{c.ID, b.ID, a.ID})
	}
	la := list[2]
	want := hoard.InviteCode{ID: la.ID, Code: a.Code, Role: hoard.RoleUser, MaxUses: 3, UseCount: 2, ExpiresAt: la.ExpiresAt, Note: la.Note,
		CreatedBy: la.CreatedBy, CreatedAt: la.CreatedAt, UsedBy: emails}
	if diff := cmp.Diff(want, la); diff != "" {
		t.Fatalf("listed invite (-want +got):\n%s", diff)
	}
	if list[0].UsedBy == nil || len(list[0].UsedBy) != 0 {
		t.Fatalf("unused invite UsedBy = %#v, want empty", list[0].UsedBy)
	}

	// An older invite lists after newer ones whatever its id.
	_, err = db.Tx().Exec(ctx, `UPDATE invite_codes SET created_at = now() - interval '1 hour' WHERE id = $1`, c.ID)
	must(t, err)
	_, err = db.Tx().Exec(ctx, `UPDATE invite_codes SET created_at = now() + interval '1 hour' WHERE id = $1`, a.ID)
	must(t, err)
	list, err = db.ListInvites(ctx)
	must(t, err)
	at := func(id int64) int { return slices.IndexFunc(list, func(i hoard.InviteCode) bool { return i.ID == id }) }
	if at(a.ID) != 0 || at(b.ID) < 1 || at(c.ID) < at(b.ID) {
		t.Fatalf("ListInvites order after re-dating: a at %d (want 0), b at %d, c at %d (want after b)", at(a.ID), at(b.ID), at(c.ID))
	}
}

func TestDeleteInvite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewTx(t)
	inv := mustInvite(t, db, func(i *hoard.InviteCode) { i.MaxUses = 2 })
	other := mustInvite(t, db)
	u, err := db.RegisterWithInvite(ctx, inv.Code, uniqueEmail("kept"), "h")
	must(t, err)
	o, err := db.RegisterWithInvite(ctx, other.Code, uniqueEmail("other"), "h")
	must(t, err)

	must(t, db.DeleteInvite(ctx, inv.ID))
	_, err = db.FindInviteByCode(ctx, inv.Code)
	wantCode(t, err, hoard.ENOTFOUND)
	wantCode(t, db.DeleteInvite(ctx, inv.ID), hoard.ENOTFOUND)
	wantCode(t, db.DeleteInvite(ctx, -1), hoard.ENOTFOUND)

	got, err := db.FindUserByID(ctx, u.ID)
	must(t, err)
	if got.InviteCodeID != 0 || got.Email != u.Email {
		t.Fatalf("user after their invite was deleted = %+v", got)
	}
	var isNull bool
	must(t, db.Tx().QueryRow(ctx, `SELECT invite_code_id IS NULL FROM users WHERE id = $1`, u.ID).Scan(&isNull))
	if !isNull {
		t.Fatal("invite_code_id is not NULL after DeleteInvite")
	}
	got, _ = db.FindUserByID(ctx, o.ID)
	if got.InviteCodeID != other.ID {
		t.Fatalf("other user's invite = %d, want %d", got.InviteCodeID, other.ID)
	}
	if _, err := db.FindInviteByCode(ctx, other.Code); err != nil {
		t.Fatalf("other invite: %v", err)
	}
}

func TestSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewTx(t)
	now := txNow(t, db)
	u := mustUser(t, db, hoard.RoleAdmin)
	v := mustUser(t, db, hoard.RoleUser)
	exp := time.Now().Add(24 * time.Hour).Truncate(time.Microsecond)

	s := &hoard.Session{ID: fmt.Sprintf("sess-%d", seq.Add(1)), UserID: u.ID, ExpiresAt: exp, UserAgent: "Firefox", RemoteAddr: "192.0.2.7"}
	must(t, db.CreateSession(ctx, s))
	if !s.CreatedAt.Equal(now) || !s.LastSeenAt.Equal(now) {
		t.Fatalf("created session stamps = %v, %v; want %v", s.CreatedAt, s.LastSeenAt, now)
	}
	gs, gu, err := db.FindSessionUser(ctx, s.ID)
	must(t, err)
	want := hoard.Session{ID: s.ID, UserID: u.ID, ExpiresAt: exp, UserAgent: "Firefox", RemoteAddr: "192.0.2.7", CreatedAt: now, LastSeenAt: now}
	if diff := cmp.Diff(want, *gs); diff != "" {
		t.Fatalf("FindSessionUser session (-want +got):\n%s", diff)
	}
	if gu == nil || gu.ID != u.ID || gu.Email != u.Email || gu.Role != hoard.RoleAdmin {
		t.Fatalf("FindSessionUser user = %+v, want %+v", gu, u)
	}

	err = savepoint(db, func(tx *store.DB) error {
		return tx.CreateSession(ctx, &hoard.Session{ID: s.ID, UserID: v.ID, ExpiresAt: exp})
	})
	wantCode(t, err, hoard.ECONFLICT)
	err = savepoint(db, func(tx *store.DB) error {
		return tx.CreateSession(ctx, &hoard.Session{ID: "orphan", UserID: -1, ExpiresAt: exp})
	})
	wantCode(t, err, hoard.EINVALID)

	expired := &hoard.Session{ID: fmt.Sprintf("old-%d", seq.Add(1)), UserID: u.ID, ExpiresAt: now.Add(-time.Second)}
	must(t, db.CreateSession(ctx, expired))
	_, _, err = db.FindSessionUser(ctx, expired.ID)
	wantCode(t, err, hoard.ENOTFOUND)
	atNow := &hoard.Session{ID: fmt.Sprintf("now-%d", seq.Add(1)), UserID: u.ID, ExpiresAt: now}
	must(t, db.CreateSession(ctx, atNow))
	_, _, err = db.FindSessionUser(ctx, atNow.ID)
	wantCode(t, err, hoard.ENOTFOUND)
	_, _, err = db.FindSessionUser(ctx, "no-such-session")
	wantCode(t, err, hoard.ENOTFOUND)

	t.Run("touch", func(t *testing.T) {
		_, err := db.Tx().Exec(ctx, `UPDATE sessions SET last_seen_at = now() - interval '1 day' WHERE id = $1`, s.ID)
		must(t, err)
		later := exp.Add(time.Hour)
		must(t, db.TouchSession(ctx, s.ID, later))
		gs, _, err := db.FindSessionUser(ctx, s.ID)
		must(t, err)
		if !gs.ExpiresAt.Equal(later) || !gs.LastSeenAt.Equal(now) {
			t.Fatalf("after touch forward: expires %v (want %v), last seen %v (want %v)", gs.ExpiresAt, later, gs.LastSeenAt, now)
		}
		_, err = db.Tx().Exec(ctx, `UPDATE sessions SET last_seen_at = now() - interval '1 day' WHERE id = $1`, s.ID)
		must(t, err)
		must(t, db.TouchSession(ctx, s.ID, exp.Add(-time.Hour))) // never back
		gs, _, err = db.FindSessionUser(ctx, s.ID)
		must(t, err)
		if !gs.ExpiresAt.Equal(later) || !gs.LastSeenAt.Equal(now) {
			t.Fatalf("after touch backward: expires %v (want %v), last seen %v (want %v)", gs.ExpiresAt, later, gs.LastSeenAt, now)
		}
	})

	t.Run("delete", func(t *testing.T) {
		ids := make([]string, 3)
		for i := range ids {
			ids[i] = fmt.Sprintf("u-%d-%d", i, seq.Add(1))
			must(t, db.CreateSession(ctx, &hoard.Session{ID: ids[i], UserID: v.ID, ExpiresAt: exp}))
		}
		live := func(id string) bool {
			t.Helper()
			_, _, err := db.FindSessionUser(ctx, id)
			if err != nil && hoard.ErrorCode(err) != hoard.ENOTFOUND {
				t.Fatal(err)
			}
			return err == nil
		}

		must(t, db.DeleteSession(ctx, ids[0]))
		if live(ids[0]) || !live(ids[1]) || !live(ids[2]) || !live(s.ID) {
			t.Fatal("DeleteSession removed the wrong sessions")
		}
		must(t, db.DeleteSession(ctx, ids[0]))          // already gone
		must(t, db.DeleteSession(ctx, "never-existed")) // unknown

		must(t, db.CreateSession(ctx, &hoard.Session{ID: ids[0], UserID: v.ID, ExpiresAt: exp}))
		must(t, db.DeleteUserSessions(ctx, v.ID, ids[1]))
		if live(ids[0]) || !live(ids[1]) || live(ids[2]) {
			t.Fatal("DeleteUserSessions did not keep exactly keepID")
		}
		if !live(s.ID) {
			t.Fatal("DeleteUserSessions removed another user's session")
		}
		must(t, db.DeleteUserSessions(ctx, v.ID, ""))
		if live(ids[1]) {
			t.Fatal(`DeleteUserSessions(…, "") kept a session`)
		}
		if !live(s.ID) {
			t.Fatal("DeleteUserSessions removed another user's session")
		}
		must(t, db.DeleteUserSessions(ctx, -1, ""))
	})
}

func TestThrottle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const window, lockFor = 15 * time.Minute, 10 * time.Minute
	keyNames := func(prefix string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%s%d-%d", prefix, i, seq.Add(1))
		}
		return out
	}
	reserve := func(t *testing.T, db *store.DB, keys ...store.ThrottleKey) store.Throttle {
		t.Helper()
		got, err := db.ReserveLoginAttempt(ctx, keys, window, lockFor)
		must(t, err)
		return got
	}

	t.Run("count, lock, lock ends", func(t *testing.T) {
		t.Parallel()
		db := storetest.NewTx(t)
		now := txNow(t, db)
		names := keyNames("account:count", 2)
		key, other := store.ThrottleKey{Key: names[0], Max: 3}, store.ThrottleKey{Key: names[1], Max: 3}
		locked := store.Throttle{RetryAt: now.Add(lockFor)}
		for i, want := range []store.Throttle{{Allowed: true}, {Allowed: true}, {Allowed: true}, locked, locked} {
			if got := reserve(t, db, key); got != want {
				t.Fatalf("attempt %d = %+v, want %+v", i+1, got, want)
			}
		}
		if got := reserve(t, db, other); got != (store.Throttle{Allowed: true}) {
			t.Fatalf("another key = %+v: keys share counts", got)
		}
		// A lock counts nothing more; once it has ended a new count starts.
		var failures int
		must(t, db.Tx().QueryRow(ctx, `SELECT failures FROM auth_throttle WHERE key = $1`, key.Key).Scan(&failures))
		if failures != 4 {
			t.Fatalf("failures under the lock = %d, want 4 (attempts while locked are not counted)", failures)
		}
		_, err := db.Tx().Exec(ctx, `UPDATE auth_throttle SET locked_until = now() - interval '1 second' WHERE key = $1`, key.Key)
		must(t, err)
		for i, want := range []store.Throttle{{Allowed: true}, {Allowed: true}, {Allowed: true}, locked} {
			if got := reserve(t, db, key); got != want {
				t.Fatalf("attempt %d after the lock = %+v, want %+v", i+1, got, want)
			}
		}
	})

	t.Run("window", func(t *testing.T) {
		t.Parallel()
		db := storetest.NewTx(t)
		key := store.ThrottleKey{Key: keyNames("account:window", 1)[0], Max: 2}
		reserve(t, db, key)
		reserve(t, db, key)
		// Still inside the window: the third attempt locks.
		_, err := db.Tx().Exec(ctx, `UPDATE auth_throttle SET window_started = now() - $2::interval + interval '1 second' WHERE key = $1`,
			key.Key, window)
		must(t, err)
		if got := reserve(t, db, key); got.Allowed {
			t.Fatal("third attempt inside the window was allowed")
		}
		// Past the window (and its lock): a new count of one.
		_, err = db.Tx().Exec(ctx, `UPDATE auth_throttle SET window_started = now() - interval '2 hours', locked_until = NULL,
			failures = 2 WHERE key = $1`, key.Key)
		must(t, err)
		if got := reserve(t, db, key); !got.Allowed {
			t.Fatalf("attempt after the window = %+v", got)
		}
		var failures int
		var started, now time.Time
		must(t, db.Tx().QueryRow(ctx, `SELECT failures, window_started, now() FROM auth_throttle WHERE key = $1`, key.Key).
			Scan(&failures, &started, &now))
		if failures != 1 || !started.Equal(now) {
			t.Fatalf("after the window: %d failures since %v, want 1 since %v", failures, started, now)
		}
	})

	t.Run("every key must allow; refund", func(t *testing.T) {
		t.Parallel()
		db := storetest.NewTx(t)
		names := keyNames("k", 2)
		account, address := store.ThrottleKey{Key: names[0], Max: 1}, store.ThrottleKey{Key: names[1], Max: 10}
		if got := reserve(t, db, account, address); !got.Allowed {
			t.Fatalf("first attempt = %+v", got)
		}
		must(t, db.RefundLoginAttempt(ctx, []store.ThrottleKey{account, address}))
		if got := reserve(t, db, account, address); !got.Allowed {
			t.Fatalf("attempt after a refund = %+v", got)
		}
		// The account key is spent: refused, though the address allows more.
		if got := reserve(t, db, account, address); got.Allowed {
			t.Fatal("allowed past the account key's maximum")
		}
		counts := map[string]int{}
		rows, err := db.Tx().Query(ctx, `SELECT key, failures FROM auth_throttle WHERE key = ANY($1)`, names)
		must(t, err)
		for rows.Next() {
			var k string
			var n int
			must(t, rows.Scan(&k, &n))
			counts[k] = n
		}
		if want := map[string]int{account.Key: 2, address.Key: 2}; !maps.Equal(counts, want) {
			t.Fatalf("counts = %v, want %v", counts, want)
		}
		must(t, db.ClearThrottle(ctx, account.Key))
		if got := reserve(t, db, account); !got.Allowed {
			t.Fatalf("attempt after ClearThrottle = %+v", got)
		}
	})
}

// TestThrottleRace: 40 attempts at once against keys that allow 5 — exactly
// 5 are allowed, on a real database with concurrent transactions.
func TestThrottleRace(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	ctx := context.Background()
	keys := []store.ThrottleKey{{Key: "account:race@example.com from 192.0.2.1", Max: 5}, {Key: "ip:192.0.2.1", Max: 20}}
	var allowed atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, 40)
	for range 40 {
		wg.Go(func() {
			<-start
			got, err := db.ReserveLoginAttempt(ctx, keys, 15*time.Minute, 15*time.Minute)
			if err != nil {
				errs <- err
			}
			if got.Allowed {
				allowed.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := allowed.Load(); n != 5 {
		t.Fatalf("%d of 40 concurrent attempts allowed, want exactly 5", n)
	}
}
