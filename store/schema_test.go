package store_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/migrations"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// noPool is the message of the error pool-only operations return on a DB
// bound to a transaction.
const noPool = "needs a pool, not a transaction"

// logBuffer collects log lines; safe for concurrent writers.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestSchemaStatus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("pool", func(t *testing.T) {
		t.Parallel()
		db := storetest.NewDB(t)
		st, err := db.SchemaStatus(ctx)
		must(t, err)
		if st.Latest != migrations.Latest() || st.Latest == 0 || st.Current != st.Latest || !st.UpToDate() {
			t.Fatalf("SchemaStatus = %+v, want current = latest = %d", st, migrations.Latest())
		}
	})

	t.Run("transaction", func(t *testing.T) {
		t.Parallel()
		db := storetest.NewTx(t)
		st, err := db.SchemaStatus(ctx)
		if err == nil || !strings.Contains(err.Error(), noPool) {
			t.Fatalf("SchemaStatus on a transaction = %+v, %v; want the no-pool error", st, err)
		}
		if st != (migrations.Status{}) {
			t.Fatalf("SchemaStatus on a transaction returned %+v", st)
		}
	})
}

func TestMigrate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := store.Open(ctx, storetest.EmptyURL(t), store.Options{})
	must(t, err)
	t.Cleanup(db.Close)

	st, err := db.SchemaStatus(ctx)
	must(t, err)
	if st.Current != 0 || st.Latest != migrations.Latest() || st.UpToDate() {
		t.Fatalf("empty database status = %+v", st)
	}
	exists := func(table string) bool {
		t.Helper()
		var ok bool
		must(t, db.Pool().QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, table).Scan(&ok))
		return ok
	}
	if exists("public.users") || exists("public.river_job") {
		t.Fatal("the empty database already has tables")
	}

	var first logBuffer
	must(t, db.Migrate(ctx, slog.New(slog.NewTextHandler(&first, nil))))
	if got := strings.Count(first.String(), "applying migration"); got != int(migrations.Latest()) {
		t.Fatalf("first Migrate applied %d migrations, want %d:\n%s", got, migrations.Latest(), first.String())
	}
	st, err = db.SchemaStatus(ctx)
	must(t, err)
	if st.Current != migrations.Latest() || !st.UpToDate() {
		t.Fatalf("status after Migrate = %+v", st)
	}
	for _, table := range []string{"public.users", "public.invite_codes", "public.sessions", "public.auth_throttle", "public.river_job"} {
		if !exists(table) {
			t.Fatalf("table %s missing after Migrate", table)
		}
	}
	u, err := db.CreateUser(ctx, "first@example.com", "h", hoard.RoleAdmin)
	must(t, err)

	var second logBuffer
	must(t, db.Migrate(ctx, slog.New(slog.NewTextHandler(&second, nil))))
	if strings.Contains(second.String(), "applying migration") {
		t.Fatalf("second Migrate applied migrations:\n%s", second.String())
	}
	st2, err := db.SchemaStatus(ctx)
	must(t, err)
	if st2 != st {
		t.Fatalf("status after the second Migrate = %+v, want %+v", st2, st)
	}
	if n, err := db.CountUsers(ctx); err != nil || n != 1 {
		t.Fatalf("users after the second Migrate = %d, %v", n, err)
	}
	if got, err := db.FindUserByID(ctx, u.ID); err != nil || got.Email != u.Email {
		t.Fatalf("user after the second Migrate = %+v, %v", got, err)
	}
}

func TestMigrateNeedsPool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewTx(t)
	err := db.Migrate(ctx, slog.New(slog.NewTextHandler(&logBuffer{}, nil)))
	if err == nil || !strings.Contains(err.Error(), noPool) {
		t.Fatalf("Migrate on a transaction = %v, want the no-pool error", err)
	}
	// The transaction is untouched and still usable.
	must(t, db.Ping(ctx))
}
