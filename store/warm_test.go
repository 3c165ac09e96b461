package store_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// TestWarmRunsOnEveryConnectionOnceMigrated checks Options.Warm: a
// connection opened before Migrate is warmed when Migrate has run, every
// connection opened after it before it serves anyone, each once, and what
// Warm writes is rolled back.
func TestWarmRunsOnEveryConnectionOnceMigrated(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var warmed []int32 // backend pids, in warming order
	warm := func(ctx context.Context, conn *store.DB) {
		var pid int32
		if conn.Tx() == nil {
			t.Errorf("Warm got a pool, want a transaction")
			return
		}
		if err := conn.Tx().QueryRow(ctx, `INSERT INTO leases (name, holder, expires_at)
			VALUES ('warm-' || pg_backend_pid(), 'warm', now()) RETURNING pg_backend_pid()`).Scan(&pid); err != nil {
			t.Errorf("Warm's statement: %v", err)
		}
		mu.Lock()
		warmed = append(warmed, pid)
		mu.Unlock()
	}
	db, err := store.Open(ctx, storetest.EmptyURL(t), store.Options{MaxConns: 3, Warm: warm})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var first int32
	if err := db.Pool().QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&first); err != nil {
		t.Fatal(err)
	}
	if len(warmed) != 0 {
		t.Fatalf("warmed %v before Migrate, want none (the schema is not there yet)", warmed)
	}
	if err := db.Migrate(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// Hold every connection of the pool: the two it opens now are warmed
	// before they are handed out.
	held := heldPIDs(t, db, 3)
	mu.Lock()
	got := slices.Clone(warmed)
	mu.Unlock()
	slices.Sort(got)
	slices.Sort(held)
	if !slices.Equal(got, held) || !slices.Contains(got, first) {
		t.Errorf("warmed connections %v, want each of the pool's connections %v once (the first, %d, among them)", got, held, first)
	}
	var left int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM leases WHERE holder = 'warm'`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d rows Warm wrote are left, want none (rolled back)", left)
	}
}

// heldPIDs acquires n connections of db's pool at once and returns their
// backend pids (released before it returns).
func heldPIDs(t *testing.T, db *store.DB, n int) []int32 {
	t.Helper()
	var pids []int32
	for range n {
		c, err := db.Pool().Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release()
		var pid int32
		if err := c.QueryRow(context.Background(), `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	return pids
}
