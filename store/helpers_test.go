package store_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

var seq atomic.Int64

// mustChannel stores a source channel with a unique platform id.
func mustChannel(t *testing.T, db *store.DB, mutate ...func(*hoard.Channel)) *hoard.Channel {
	t.Helper()
	n := seq.Add(1)
	c := &hoard.Channel{PlatformID: 1_000_000 + n, Title: fmt.Sprintf("Channel %d", n), Kind: hoard.ChannelSource}
	for _, m := range mutate {
		m(c)
	}
	if err := db.UpsertChannel(context.Background(), c); err != nil {
		t.Fatalf("UpsertChannel: %v", err)
	}
	return c
}

// mustPackage stores a package with a unique name and hash.
func mustPackage(t *testing.T, db *store.DB, mutate ...func(*hoard.Package)) *hoard.Package {
	t.Helper()
	n := seq.Add(1)
	p := &hoard.Package{
		FileName:    fmt.Sprintf("Pack %d.zip", n),
		FileSize:    1000 + n,
		ArchiveType: hoard.ArchiveZIP,
		ContentHash: fmt.Sprintf("%064x", n),
	}
	for _, m := range mutate {
		m(p)
	}
	if err := db.CreatePackage(context.Background(), p); err != nil {
		t.Fatalf("CreatePackage: %v", err)
	}
	return p
}

func mustAccount(t *testing.T, db *store.DB) *hoard.Account {
	t.Helper()
	a, err := db.CreateAccount(context.Background(), fmt.Sprintf("+1555%07d", seq.Add(1)))
	if err != nil {
		t.Fatalf("CreateAccount: %v", err)
	}
	return a
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := hoard.ErrorCode(err); got != code {
		t.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}

// execTx runs a statement in the test's transaction, failing the test
// on an error.
func execTx(t *testing.T, db *store.DB, sql string, args ...any) {
	t.Helper()
	_, err := db.Tx().Exec(context.Background(), sql, args...)
	must(t, err)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

type storeCursor = store.PackageCursor

func storeTagEdit(set, add, remove []string) store.TagEdit {
	return store.TagEdit{Set: set, Add: add, Remove: remove}
}

func storeFilter(channelID int64) store.PackageFilter {
	return store.PackageFilter{ChannelID: channelID}
}

func storeFilterType(channelID int64, t hoard.ArchiveType) store.PackageFilter {
	return store.PackageFilter{ChannelID: channelID, ArchiveType: t}
}

func storeFilterCreator(channelID int64, c string) store.PackageFilter {
	return store.PackageFilter{ChannelID: channelID, Creator: c}
}

func storeFilterTags(channelID int64, tags ...string) store.PackageFilter {
	return store.PackageFilter{ChannelID: channelID, Tags: tags}
}

func storeFilterGroup(groupID int64) store.PackageFilter {
	return store.PackageFilter{GroupID: groupID}
}

func count(items []hoard.Package, _ *store.PackageCursor, err error) (int, error) {
	return len(items), err
}

func ids(items []hoard.Package) []int64 {
	out := make([]int64, len(items))
	for i, p := range items {
		out[i] = p.ID
	}
	return out
}

// savepoint runs fn in a savepoint of db (InTx on a transaction-bound DB) and
// returns its error: a statement that fails in PostgreSQL aborts only the
// savepoint, so the test's transaction stays usable.
func savepoint(db *store.DB, fn func(tx *store.DB) error) error {
	return db.InTx(context.Background(), fn)
}

// activeSource makes mustChannel store an active source channel.
func activeSource(c *hoard.Channel) { c.IsActive = true }

// mustMap links an account to a channel as a READER with a unique hash.
func mustMap(t *testing.T, db *store.DB, accountID, channelID int64) *hoard.ChannelMap {
	t.Helper()
	m, err := db.UpsertChannelMap(context.Background(), accountID, channelID, 7_000+seq.Add(1), hoard.MapReader)
	if err != nil {
		t.Fatalf("UpsertChannelMap: %v", err)
	}
	return m
}

// mustNotification stores a notification with a unique title (and so a
// unique default dedup key).
func mustNotification(t *testing.T, db *store.DB, mutate ...func(*hoard.Notification)) *hoard.Notification {
	t.Helper()
	n := &hoard.Notification{Type: hoard.NotifyDownloadFailed, Title: fmt.Sprintf("Problem %d", seq.Add(1))}
	for _, m := range mutate {
		m(n)
	}
	created, err := db.CreateNotification(context.Background(), n)
	if err != nil || !created {
		t.Fatalf("CreateNotification = %v, %v", created, err)
	}
	return n
}

// ptr returns a pointer to v (optional fields of settings structs).
func ptr[T any](v T) *T { return &v }

// crc returns a pointer to a CRC-32 value.
func crc(v uint32) *uint32 { return &v }
