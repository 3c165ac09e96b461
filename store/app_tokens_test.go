package store_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// secretForm is the form of every app token's secret: the scheme and 32
// random bytes in lower-case base32 (52 characters).
var secretForm = regexp.MustCompile(`^hoard_[a-z2-7]{52}$`)

func TestAppTokens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewTx(t)
	owner := linkUser(t, db, "tokens-owner@example.com")
	other := linkUser(t, db, "tokens-other@example.com")

	tok, secret, err := db.CreateAppToken(ctx, owner.ID, "  backup script  ")
	must(t, err)
	if !secretForm.MatchString(secret) {
		t.Fatalf("secret %q is not of the form %s", secret, secretForm)
	}
	type token struct {
		Name, Prefix  string
		UserID        int64
		Used, Revoked bool
	}
	if diff := cmp.Diff(token{Name: "backup script", Prefix: secret[:12], UserID: owner.ID},
		token{tok.Name, tok.Prefix, tok.UserID, tok.LastUsedAt != nil, tok.RevokedAt != nil}); diff != "" {
		t.Fatalf("token (-want +got):\n%s", diff)
	}
	// Only the hash is stored: no column holds the secret.
	var hash []byte
	var row string
	must(t, db.Tx().QueryRow(ctx, `SELECT token_hash, t::text FROM app_tokens t WHERE id = $1`, tok.ID).Scan(&hash, &row))
	if sum := sha256.Sum256([]byte(secret)); !bytes.Equal(hash, sum[:]) {
		t.Errorf("token_hash is not the secret's SHA-256")
	}
	if strings.Contains(row, secret[12:]) {
		t.Errorf("the row holds the secret: %s", row)
	}
	_, secret2, err := db.CreateAppToken(ctx, owner.ID, "second")
	must(t, err)
	if secret2 == secret {
		t.Fatal("two tokens share a secret")
	}

	gotTok, gotUser, err := db.FindAppTokenUser(ctx, secret)
	must(t, err)
	if gotTok.ID != tok.ID || gotUser.ID != owner.ID || gotUser.Email != owner.Email || gotUser.Role != hoard.RoleUser {
		t.Fatalf("FindAppTokenUser = %+v, %+v", gotTok, gotUser)
	}
	for _, bad := range []string{"", "hoard_", secret[:len(secret)-1], secret + "a", strings.ToUpper(secret),
		secret[:len(secret)-1] + map[bool]string{true: "b", false: "a"}[secret[len(secret)-1] == 'a'], "bearer " + secret} {
		_, _, err := db.FindAppTokenUser(ctx, bad)
		wantCode(t, err, hoard.ENOTFOUND)
	}

	for _, tc := range []struct {
		name string
		want string
	}{
		{"", hoard.EINVALID},
		{"   ", hoard.EINVALID},
		{strings.Repeat("é", store.MaxAppTokenName), ""},
		{strings.Repeat("x", store.MaxAppTokenName+1), hoard.EINVALID},
	} {
		_, _, err := db.CreateAppToken(ctx, other.ID, tc.name)
		if got := hoard.ErrorCode(err); got != tc.want {
			t.Errorf("CreateAppToken(%q) = %v, want code %q", tc.name, err, tc.want)
		}
	}

	list, err := db.ListAppTokens(ctx, owner.ID)
	must(t, err)
	if len(list) != 2 || list[0].Name != "second" || list[1].ID != tok.ID {
		t.Fatalf("ListAppTokens = %+v", list)
	}

	// Another user cannot revoke the owner's token; the owner can, and it
	// stops working at once; revoking again changes nothing.
	wantCode(t, db.RevokeAppToken(ctx, tok.ID, other.ID), hoard.ENOTFOUND)
	wantCode(t, db.RevokeAppToken(ctx, 0, owner.ID), hoard.ENOTFOUND)
	must(t, db.RevokeAppToken(ctx, tok.ID, owner.ID))
	_, _, err = db.FindAppTokenUser(ctx, secret)
	wantCode(t, err, hoard.ENOTFOUND)
	var revokedAt time.Time
	must(t, db.Tx().QueryRow(ctx, `SELECT revoked_at FROM app_tokens WHERE id = $1`, tok.ID).Scan(&revokedAt))
	execTx(t, db, `UPDATE app_tokens SET revoked_at = revoked_at - interval '1 hour' WHERE id = $1`, tok.ID)
	must(t, db.RevokeAppToken(ctx, tok.ID, owner.ID))
	var again time.Time
	must(t, db.Tx().QueryRow(ctx, `SELECT revoked_at FROM app_tokens WHERE id = $1`, tok.ID).Scan(&again))
	if !again.Equal(revokedAt.Add(-time.Hour)) {
		t.Errorf("revoking again moved revoked_at: %v → %v", revokedAt.Add(-time.Hour), again)
	}
	list, err = db.ListAppTokens(ctx, owner.ID)
	must(t, err)
	if len(list) != 1 || list[0].Name != "second" {
		t.Fatalf("ListAppTokens after revoking = %+v", list)
	}
	// An administrator's revocation (owner 0) reaches anyone's token.
	must(t, db.RevokeAppToken(ctx, list[0].ID, 0))
	_, _, err = db.FindAppTokenUser(ctx, secret2)
	wantCode(t, err, hoard.ENOTFOUND)
}

func TestAppTokenLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewTx(t)
	u := linkUser(t, db, "tokens-limit@example.com")
	var first *hoard.AppToken
	for i := range store.MaxAppTokensPerUser {
		tok, _, err := db.CreateAppToken(ctx, u.ID, fmt.Sprintf("token %d", i))
		must(t, err)
		if first == nil {
			first = tok
		}
	}
	_, _, err := db.CreateAppToken(ctx, u.ID, "one too many")
	wantCode(t, err, hoard.ECONFLICT)
	if !strings.Contains(hoard.ErrorMessage(err), "revoke one first") {
		t.Errorf("message = %q", hoard.ErrorMessage(err))
	}
	// Revoked tokens do not count.
	must(t, db.RevokeAppToken(ctx, first.ID, u.ID))
	_, _, err = db.CreateAppToken(ctx, u.ID, "in its place")
	must(t, err)
	_, _, err = db.CreateAppToken(ctx, 999_999_999, "nobody's")
	wantCode(t, err, hoard.ENOTFOUND)
}

func TestAppTokenTouchAndCascade(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewTx(t)
	u := linkUser(t, db, "tokens-touch@example.com")
	tok, secret, err := db.CreateAppToken(ctx, u.ID, "touched")
	must(t, err)
	lastUsed := func() *time.Time {
		t.Helper()
		got, _, err := db.FindAppTokenUser(ctx, secret)
		must(t, err)
		return got.LastUsedAt
	}
	must(t, db.TouchAppToken(ctx, tok.ID))
	first := lastUsed()
	if first == nil {
		t.Fatal("a first use is not recorded")
	}
	// Within a minute of the last recorded use, nothing is written.
	execTx(t, db, `UPDATE app_tokens SET last_used_at = now() - interval '50 seconds' WHERE id = $1`, tok.ID)
	must(t, db.TouchAppToken(ctx, tok.ID))
	if got := lastUsed(); !got.Equal(first.Add(-50 * time.Second)) {
		t.Errorf("touched within a minute: last_used_at %v, want %v", got, first.Add(-50*time.Second))
	}
	execTx(t, db, `UPDATE app_tokens SET last_used_at = now() - interval '61 seconds' WHERE id = $1`, tok.ID)
	must(t, db.TouchAppToken(ctx, tok.ID))
	if got := lastUsed(); !got.Equal(*first) {
		t.Errorf("not touched after a minute: last_used_at %v, want %v", got, *first)
	}
	// A deleted user's tokens go with them.
	must(t, db.DeleteUser(ctx, u.ID))
	var n int
	must(t, db.Tx().QueryRow(ctx, `SELECT count(*) FROM app_tokens WHERE id = $1`, tok.ID).Scan(&n))
	if n != 0 {
		t.Errorf("a deleted user's token is left")
	}
	_, _, err = db.FindAppTokenUser(ctx, secret)
	wantCode(t, err, hoard.ENOTFOUND)
}

// TestThrottleLockForTokens: FindThrottleLock tells a locked key without
// counting an attempt.
func TestThrottleLockForTokens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewTx(t)
	key := store.ThrottleKey{Key: "ip:token-lock-test", Max: 2}
	free := store.ThrottleKey{Key: "ip:token-lock-free", Max: 2}
	check := func(want bool) {
		t.Helper()
		got, err := db.FindThrottleLock(ctx, []store.ThrottleKey{free, key})
		must(t, err)
		if got.Allowed != want || (!want && !got.RetryAt.After(time.Now())) {
			t.Fatalf("FindThrottleLock = %+v, want allowed %v", got, want)
		}
	}
	check(true)
	for range 3 {
		_, err := db.ReserveLoginAttempt(ctx, []store.ThrottleKey{key}, time.Minute, time.Hour)
		must(t, err)
	}
	check(false)
	var failures int
	must(t, db.Tx().QueryRow(ctx, `SELECT failures FROM auth_throttle WHERE key = $1`, key.Key).Scan(&failures))
	if failures != 3 {
		t.Errorf("failures = %d, want 3 (the check counts nothing)", failures)
	}
	execTx(t, db, `UPDATE auth_throttle SET locked_until = now() - interval '1 second' WHERE key = $1`, key.Key)
	check(true)
}

// Creating and revoking tokens in a loop keeps at most
// MaxAppTokensPerUser revoked rows of a user: the table cannot grow
// without bound.
func TestRevokedAppTokensAreBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewDB(t) // its own database: the table holds this user's rows alone
	u := linkUser(t, db, "tokens-churn@example.com")
	for i := range 3 * store.MaxAppTokensPerUser {
		tok, _, err := db.CreateAppToken(ctx, u.ID, fmt.Sprintf("token %d", i))
		must(t, err)
		must(t, db.RevokeAppToken(ctx, tok.ID, u.ID))
	}
	var rows int
	must(t, db.Pool().QueryRow(ctx, `SELECT count(*) FROM app_tokens WHERE user_id = $1`, u.ID).Scan(&rows))
	if rows > store.MaxAppTokensPerUser {
		t.Fatalf("%d token rows after %d created and revoked, want at most %d", rows, 3*store.MaxAppTokensPerUser, store.MaxAppTokensPerUser)
	}
}
