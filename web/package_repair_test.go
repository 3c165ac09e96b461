package web

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hoard/hoard"
)

// TestRepairIsOfferedWhereThereIsAProblem: an administrator sees Repair on
// a healthy package's page only behind a closed disclosure, and open when
// a live warning or error is about the package; other users never.
func TestRepairIsOfferedWhereThereIsAProblem(t *testing.T) {
	e := newEnv(t)
	pk := e.seedCatalog()
	admin, _ := e.user(hoard.RoleAdmin)
	user, _ := e.user(hoard.RoleUser)
	p := pk["Red Dragon Pack.zip"]
	type view struct{ Disclosure, Open, Button bool }
	look := func(who *hoard.User) view {
		_, body := e.do(nil, "GET", fmt.Sprintf("/packages/%d", p.ID), nil, e.session(who))
		return view{strings.Contains(body, `<details class="repair"`), strings.Contains(body, `<details class="repair" open>`),
			strings.Contains(body, fmt.Sprintf(`action="/packages/%d/repair"`, p.ID))}
	}
	if got, want := look(admin), (view{Disclosure: true, Button: true}); got != want {
		t.Fatalf("healthy package, administrator: %+v, want %+v", got, want)
	}
	if got, want := look(user), (view{}); got != want {
		t.Fatalf("user: %+v, want %+v", got, want)
	}
	if _, err := e.db.CreateNotification(context.Background(), &hoard.Notification{Type: hoard.NotifyMissingPart,
		Severity: hoard.SeverityError, Title: "Missing part", PackageID: p.ID}); err != nil {
		t.Fatal(err)
	}
	if got, want := look(admin), (view{Disclosure: true, Open: true, Button: true}); got != want {
		t.Fatalf("package with a problem, administrator: %+v, want %+v", got, want)
	}
}
