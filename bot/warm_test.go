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
	left := map[string]int{}
	for _, table := range []string{"bot_handled_updates", "bot_search_pages", "rate_limits"} {
		if n := storetest.Count(t, db, table); n != 0 {
			left[table] = n
		}
	}
	if len(left) != 0 {
		t.Errorf("the warm-up left rows %v, want none", left)
	}
}
