package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// TestStatementTimeout: a context's statement timeout reaches PostgreSQL on
// whichever connection serves it, stops a statement that runs too long
// (IsStatementTimeout), and leaves with it: the next context without one —
// the worker's — gets the server's default on the very same connection.
func TestStatementTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := store.Open(ctx, storetest.URL(t), store.Options{MaxConns: 1}) // one connection: every query shares it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	web := store.WithStatementTimeout(ctx, 150*time.Millisecond)
	setting := func(ctx context.Context) string {
		t.Helper()
		var v string
		must(t, db.Pool().QueryRow(ctx, `SHOW statement_timeout`).Scan(&v))
		return v
	}
	// The table is built before any step runs: the worker's setting is
	// the connection's own, before the web's queries change it.
	type step struct {
		name string
		ctx  context.Context
		want string
	}
	for _, s := range []step{
		{"worker", ctx, setting(ctx)},
		{"web", web, "150ms"},
		{"web again", web, "150ms"},
		{"worker after web", ctx, setting(ctx)},
		{"another timeout", store.WithStatementTimeout(ctx, 2*time.Second), "2s"},
		{"none asked", store.WithStatementTimeout(ctx, 0), setting(ctx)},
	} {
		if got := setting(s.ctx); got != s.want {
			t.Errorf("%s: statement_timeout = %q, want %q", s.name, got, s.want)
		}
	}

	_, err = db.Pool().Exec(web, `SELECT pg_sleep(30)`)
	if !store.IsStatementTimeout(err) {
		t.Fatalf("a 30 s statement under a 150 ms timeout: %v", err)
	}
	// A transaction begun with the context carries its timeout too.
	err = db.InTx(web, func(tx *store.DB) error {
		_, err := tx.Tx().Exec(web, `SELECT pg_sleep(30)`)
		return err
	})
	if !store.IsStatementTimeout(err) {
		t.Fatalf("in a transaction: %v", err)
	}
	// The worker's statements are not bounded by the web's.
	if _, err := db.Pool().Exec(ctx, `SELECT pg_sleep(0.3)`); err != nil {
		t.Fatalf("a 300 ms statement without a timeout: %v", err)
	}
	if store.IsStatementTimeout(context.DeadlineExceeded) || store.IsStatementTimeout(nil) {
		t.Fatal("IsStatementTimeout of other errors")
	}
}
