package bot_test

import (
	"context"
	"testing"

	"github.com/hoard/hoard/bot"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// TestWarmConnectionRunsAnAnswersStatements checks that the warm-up of a
// bot process's connections runs every statement without an error and
// leaves no row behind.
func TestWarmConnectionRunsAnAnswersStatements(t *testing.T) {
	ctx := context.Background()
	errs := make(chan error, 10)
	db, err := store.Open(ctx, storetest.URL(t), store.Options{Warm: func(ctx context.Context, conn *store.DB) {
		errs <- bot.WarmConnection(ctx, conn)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		if err != nil {
			t.Fatalf("WarmConnection: %v", err)
		}
	default:
		t.Fatal("no connection was warmed")
	}
	var left int
	if err := db.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM bot_handled_updates) + (SELECT count(*) FROM bot_search_pages)
		+ (SELECT count(*) FROM rate_limits)`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("the warm-up left %d rows, want none", left)
	}
}
