package web

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/hoard/hoard"
)

// TestRemoveAccount: an account whose login failed can be removed, with
// its stored session; a signed-in one cannot; the page offers Remove only
// where it works.
func TestRemoveAccount(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	admin, _ := e.user(hoard.RoleAdmin)
	c := e.session(admin)
	good := e.signedInAccount("+15550000001")
	bad, err := e.db.CreateAccount(ctx, "+15550000002")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.db.SetAccountAuthState(ctx, bad.ID, hoard.AuthFailed, "PHONE_NUMBER_INVALID"); err != nil {
		t.Fatal(err)
	}
	if err := e.db.SaveMessengerSession(ctx, fmt.Sprintf("account:%d", bad.ID), []byte("sealed")); err != nil {
		t.Fatal(err)
	}
	_, page := e.do(nil, "GET", "/admin/messenger", nil, c)
	if !strings.Contains(page, fmt.Sprintf(`action="/admin/messenger/accounts/%d/delete"`, bad.ID)) ||
		strings.Contains(page, fmt.Sprintf(`action="/admin/messenger/accounts/%d/delete"`, good.ID)) {
		t.Fatal("Remove is offered for the wrong accounts")
	}
	type outcome struct {
		Status  int
		Exists  bool
		Session bool
	}
	look := func(id int64, status int) outcome {
		_, err := e.db.FindAccountByID(ctx, id)
		session, _ := e.db.LoadMessengerSession(ctx, fmt.Sprintf("account:%d", id))
		return outcome{Status: status, Exists: err == nil, Session: session != nil}
	}
	resp, body := e.do(nil, "POST", fmt.Sprintf("/admin/messenger/accounts/%d/delete", good.ID), url.Values{}, c)
	if got, want := look(good.ID, resp.StatusCode), (outcome{409, true, false}); got != want || !strings.Contains(body, "cannot be removed") {
		t.Errorf("signed-in account: %+v, want %+v", got, want)
	}
	resp, _ = e.do(nil, "POST", fmt.Sprintf("/admin/messenger/accounts/%d/delete", bad.ID), url.Values{}, c)
	if got, want := look(bad.ID, resp.StatusCode), (outcome{303, false, false}); got != want {
		t.Errorf("failed account: %+v, want %+v", got, want)
	}
	if resp, _ := e.do(nil, "POST", fmt.Sprintf("/admin/messenger/accounts/%d/delete", bad.ID), url.Values{}, c); resp.StatusCode != 404 {
		t.Errorf("removing it again: %d, want 404", resp.StatusCode)
	}
}
