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
		return view{strings.Contains(body, `<details class="repair" id="repair"`), strings.Contains(body, `<details class="repair" id="repair" open>`),
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

// TestUploadPageLinksItsGroup: the page of an upload whose files formed a
// group links the group (its packages link their pages).
func TestUploadPageLinksItsGroup(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pk := e.seedCatalog()
	owner, _ := e.user(hoard.RoleUser)
	up, err := e.db.CreateManualUpload(ctx, owner.ID, "Dragon Lair")
	if err != nil {
		t.Fatal(err)
	}
	f, err := e.db.AddManualUploadFile(ctx, up.ID, "Red Dragon Pack.zip", fmt.Sprintf("%d/0", up.ID), 10)
	if err != nil {
		t.Fatal(err)
	}
	p := pk["Red Dragon Pack.zip"]
	if err := e.db.SetManualUploadFileStatus(ctx, f.ID, hoard.UploadCompleted, "", "", p.ID); err != nil {
		t.Fatal(err)
	}
	page := fmt.Sprintf("/uploads/%d", up.ID)
	if _, body := e.do(nil, "GET", page, nil, e.session(owner)); strings.Contains(body, "data-upload-group") ||
		!strings.Contains(body, fmt.Sprintf(`<a href="/packages/%d">Red Dragon Pack.zip</a>`, p.ID)) {
		t.Fatalf("before grouping:\n%s", body)
	}
	g, err := e.db.CreateManualGroup(ctx, "Dragon Lair", []int64{p.ID, pk["Knight Helmet.rar"].ID})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.db.SetManualUploadGroup(ctx, up.ID, g.ID); err != nil {
		t.Fatal(err)
	}
	if _, body := e.do(nil, "GET", page, nil, e.session(owner)); !strings.Contains(body, fmt.Sprintf(`<a href="/groups/%d">Dragon Lair</a>`, g.ID)) {
		t.Fatalf("after grouping, no link to the group:\n%s", body)
	}
}
