package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

func TestCreateNotification(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	p := mustPackage(t, db)
	ch := mustChannel(t, db)

	n := &hoard.Notification{Type: hoard.NotifyHashMismatch, Severity: hoard.SeverityError, Title: "Hash differs",
		Message: "parts changed", PackageID: p.ID, Context: json.RawMessage(`{"expected":"ab","parts":[1,2],"nested":{"ok":true}}`)}
	created, err := db.CreateNotification(ctx, n)
	must(t, err)
	type note struct {
		Created, HasID, HasCreatedAt, IsRead, Dismissed, HasReadAt bool
		DedupKey                                                   string
		PackageID, ChannelID                                       int64
		Severity                                                   hoard.Severity
	}
	wantNote := note{Created: true, HasID: true, HasCreatedAt: true, DedupKey: fmt.Sprintf("HASH_MISMATCH:package:%d", p.ID), PackageID: p.ID,
		Severity: hoard.SeverityError}
	haveNote := note{created, n.ID != 0, !n.CreatedAt.IsZero(), n.IsRead, n.Dismissed, n.ReadAt != nil, n.DedupKey, n.PackageID, n.ChannelID, n.Severity}
	if diff := cmp.Diff(wantNote, haveNote); diff != "" {
		t.Fatalf("created notification (-want +got):\n%s", diff)
	}
	got, err := db.FindNotification(ctx, n.ID)
	must(t, err)
	var want, have any
	must(t, json.Unmarshal([]byte(`{"expected":"ab","parts":[1,2],"nested":{"ok":true}}`), &want))
	must(t, json.Unmarshal(got.Context, &have))
	if !reflect.DeepEqual(want, have) {
		t.Fatalf("context = %s", got.Context)
	}
	if got.Title != "Hash differs" || got.Message != "parts changed" || got.Type != hoard.NotifyHashMismatch {
		t.Fatalf("FindNotification = %+v", got)
	}
	_, err = db.FindNotification(ctx, -1)
	wantCode(t, err, hoard.ENOTFOUND)

	// Defaults: severity INFO, context {}, dedup key by channel or title.
	c := &hoard.Notification{Type: hoard.NotifyChannelAccessLost, Title: "Lost", ChannelID: ch.ID}
	created, err = db.CreateNotification(ctx, c)
	must(t, err)
	type channelNote struct {
		Created           bool
		DedupKey, Context string
		Severity          hoard.Severity
		ChannelID         int64
	}
	if diff := cmp.Diff(channelNote{true, fmt.Sprintf("CHANNEL_ACCESS_LOST:channel:%d", ch.ID), "{}", hoard.SeverityInfo, ch.ID},
		channelNote{created, c.DedupKey, string(c.Context), c.Severity, c.ChannelID}); diff != "" {
		t.Fatalf("channel notification (-want +got):\n%s", diff)
	}
	plain := mustNotification(t, db, func(n *hoard.Notification) { n.Type = hoard.NotifyOrphanedIndex; n.Title = "Orphans found" })
	if plain.DedupKey != "ORPHANED_INDEX:Orphans found" {
		t.Fatalf("title dedup key = %q", plain.DedupKey)
	}
	custom := mustNotification(t, db, func(n *hoard.Notification) { n.DedupKey = fmt.Sprintf("custom-key-%d", seq.Add(1)); n.PackageID = p.ID })
	if !strings.HasPrefix(custom.DedupKey, "custom-key-") {
		t.Fatalf("explicit dedup key replaced by %q", custom.DedupKey)
	}

	for name, bad := range map[string]*hoard.Notification{
		"invalid type":     {Type: "BOGUS", Title: "x"},
		"empty type":       {Title: "x"},
		"invalid severity": {Type: hoard.NotifyMissingPart, Severity: "FATAL", Title: "sev"},
		"unknown package":  {Type: hoard.NotifyMissingPart, Title: "x", PackageID: -1},
		"invalid context":  {Type: hoard.NotifyMissingPart, Title: "ctx", Context: json.RawMessage(`{not json`)},
	} {
		err := savepoint(db, func(tx *store.DB) error { _, err := tx.CreateNotification(ctx, bad); return err })
		if name == "invalid context" {
			if err == nil {
				t.Errorf("%s: accepted", name)
			}
			continue
		}
		if hoard.ErrorCode(err) != hoard.EINVALID {
			t.Errorf("%s: err = %v, want invalid", name, err)
		}
	}
}

func TestCreateNotificationDedup(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	p := mustPackage(t, db)
	first := mustNotification(t, db, func(n *hoard.Notification) { n.Type = hoard.NotifyMissingPart; n.PackageID = p.ID })

	dup := &hoard.Notification{Type: hoard.NotifyMissingPart, Title: "again", PackageID: p.ID}
	created, err := db.CreateNotification(ctx, dup)
	must(t, err)
	if created || dup.ID != 0 {
		t.Fatalf("duplicate while live: created = %v, id = %d", created, dup.ID)
	}
	var rows int
	must(t, db.Tx().QueryRow(ctx, `SELECT count(*) FROM system_notifications WHERE dedup_key = $1`, first.DedupKey).Scan(&rows))
	if rows != 1 {
		t.Fatalf("%d rows with the key, want 1", rows)
	}
	// Reading does not end the dedup window; dismissing does.
	must(t, db.MarkNotificationRead(ctx, first.ID))
	created, err = db.CreateNotification(ctx, &hoard.Notification{Type: hoard.NotifyMissingPart, Title: "read", PackageID: p.ID})
	must(t, err)
	if created {
		t.Fatal("a read notification did not deduplicate")
	}
	// Another type for the same package is another problem.
	created, err = db.CreateNotification(ctx, &hoard.Notification{Type: hoard.NotifyHashMismatch, Title: "other", PackageID: p.ID})
	must(t, err)
	if !created {
		t.Fatal("another type was deduplicated")
	}

	must(t, db.DismissNotification(ctx, first.ID))
	again := &hoard.Notification{Type: hoard.NotifyMissingPart, Title: "back", PackageID: p.ID}
	created, err = db.CreateNotification(ctx, again)
	must(t, err)
	if !created || again.ID == first.ID || again.Title != "back" {
		t.Fatalf("after dismiss: created = %v, %+v", created, again)
	}
	old, err := db.FindNotification(ctx, first.ID)
	must(t, err)
	if !old.Dismissed || old.DismissedAt == nil {
		t.Fatalf("dismissed notification = %+v", old)
	}
}

func TestListAndCountNotifications(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	var ns []*hoard.Notification
	for i := 0; i < 5; i++ {
		ns = append(ns, mustNotification(t, db))
	}
	must(t, db.DismissNotification(ctx, ns[2].ID))
	must(t, db.MarkNotificationRead(ctx, ns[0].ID))

	idsOf := func(list []hoard.Notification) []int64 {
		var out []int64
		for _, n := range list {
			out = append(out, n.ID)
		}
		return out
	}
	tests := []struct {
		name     string
		beforeID int64
		limit    int
		want     []int64
	}{
		{"live, newest first", 0, 30, []int64{ns[4].ID, ns[3].ID, ns[1].ID, ns[0].ID}},
		{"first page", 0, 2, []int64{ns[4].ID, ns[3].ID}},
		{"next page skips dismissed", ns[3].ID, 2, []int64{ns[1].ID, ns[0].ID}},
		{"past the end", ns[0].ID, 2, nil},
		{"default limit", 0, 0, []int64{ns[4].ID, ns[3].ID, ns[1].ID, ns[0].ID}},
		{"limit too large", 0, 201, []int64{ns[4].ID, ns[3].ID, ns[1].ID, ns[0].ID}},
	}
	for _, tt := range tests {
		got, err := db.ListNotifications(ctx, tt.beforeID, tt.limit)
		must(t, err)
		if ids := idsOf(got); !slices.Equal(ids, tt.want) {
			t.Errorf("%s: ids = %v, want %v", tt.name, ids, tt.want)
		}
	}

	unread := func() int64 {
		t.Helper()
		n, err := db.CountUnreadNotifications(ctx)
		must(t, err)
		return n
	}
	if n := unread(); n != 3 { // 5 - dismissed - read
		t.Fatalf("unread = %d, want 3", n)
	}
	must(t, db.MarkNotificationRead(ctx, ns[1].ID))
	must(t, db.MarkNotificationRead(ctx, ns[1].ID)) // twice is fine
	got, _ := db.FindNotification(ctx, ns[1].ID)
	if !got.IsRead || got.ReadAt == nil {
		t.Fatalf("read notification = %+v", got)
	}
	wantCode(t, db.MarkNotificationRead(ctx, -1), hoard.ENOTFOUND)
	if n := unread(); n != 2 {
		t.Fatalf("unread = %d, want 2", n)
	}

	marked, err := db.MarkAllNotificationsRead(ctx)
	must(t, err)
	if marked != 2 || unread() != 0 {
		t.Fatalf("MarkAllNotificationsRead marked %d, unread now %d", marked, unread())
	}
	dismissed, _ := db.FindNotification(ctx, ns[2].ID)
	if dismissed.IsRead {
		t.Fatal("MarkAllNotificationsRead touched a dismissed notification")
	}
	marked, err = db.MarkAllNotificationsRead(ctx)
	must(t, err)
	if marked != 0 {
		t.Fatalf("second MarkAllNotificationsRead marked %d", marked)
	}

	mustNotification(t, db)
	if n := unread(); n != 1 {
		t.Fatalf("unread after a new one = %d", n)
	}
}

func TestDismissNotifications(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	a, b, c := mustNotification(t, db), mustNotification(t, db), mustNotification(t, db)

	must(t, db.DismissNotification(ctx, a.ID))
	wantCode(t, db.DismissNotification(ctx, a.ID), hoard.ENOTFOUND)
	wantCode(t, db.DismissNotification(ctx, -1), hoard.ENOTFOUND)
	got, err := db.FindNotification(ctx, a.ID)
	must(t, err)
	if !got.Dismissed || got.DismissedAt == nil {
		t.Fatalf("dismissed = %+v", got)
	}

	n, err := db.DismissAllNotifications(ctx)
	must(t, err)
	if n != 2 {
		t.Fatalf("DismissAllNotifications = %d, want 2", n)
	}
	for _, id := range []int64{b.ID, c.ID} {
		got, _ := db.FindNotification(ctx, id)
		if !got.Dismissed {
			t.Fatalf("notification %d not dismissed", id)
		}
	}
	live, err := db.ListNotifications(ctx, 0, 30)
	must(t, err)
	if len(live) != 0 {
		t.Fatalf("%d live after dismiss all", len(live))
	}
	n, err = db.DismissAllNotifications(ctx)
	must(t, err)
	if n != 0 {
		t.Fatalf("second DismissAllNotifications = %d", n)
	}
}

func TestResolvePackageNotifications(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	p, other := mustPackage(t, db), mustPackage(t, db)
	mine1 := mustNotification(t, db, func(n *hoard.Notification) { n.Type = hoard.NotifyMissingPart; n.PackageID = p.ID })
	mine2 := mustNotification(t, db, func(n *hoard.Notification) { n.Type = hoard.NotifyHashMismatch; n.PackageID = p.ID })
	gone := mustNotification(t, db, func(n *hoard.Notification) { n.Type = hoard.NotifyUploadFailed; n.PackageID = p.ID })
	must(t, db.DismissNotification(ctx, gone.ID))
	theirs := mustNotification(t, db, func(n *hoard.Notification) { n.Type = hoard.NotifyMissingPart; n.PackageID = other.ID })
	global := mustNotification(t, db)

	must(t, db.ResolvePackageNotifications(ctx, p.ID))
	for _, tt := range []struct {
		id       int64
		wantRead bool
	}{{mine1.ID, true}, {mine2.ID, true}, {gone.ID, false}, {theirs.ID, false}, {global.ID, false}} {
		got, err := db.FindNotification(ctx, tt.id)
		must(t, err)
		if got.IsRead != tt.wantRead || (got.ReadAt != nil) != tt.wantRead {
			t.Errorf("notification %d: read = %v (%v), want %v", tt.id, got.IsRead, got.ReadAt, tt.wantRead)
		}
	}
	must(t, db.ResolvePackageNotifications(ctx, -1)) // nothing to resolve
}

func TestCreateNotificationOnce(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	n := &hoard.Notification{Type: hoard.NotifyMissingPart, Title: "x", DedupKey: "once-key"}
	created, err := db.CreateNotificationOnce(ctx, n)
	must(t, err)
	if !created {
		t.Fatal("first notification not created")
	}
	must(t, db.DismissNotification(ctx, n.ID))
	again, err := db.CreateNotificationOnce(ctx, &hoard.Notification{Type: hoard.NotifyMissingPart, Title: "x", DedupKey: "once-key"})
	must(t, err)
	if again {
		t.Fatal("a dismissed problem was notified again")
	}
	plain, err := db.CreateNotification(ctx, &hoard.Notification{Type: hoard.NotifyMissingPart, Title: "x", DedupKey: "once-key"})
	must(t, err)
	if !plain {
		t.Fatal("CreateNotification must still create after dismissal")
	}
}
