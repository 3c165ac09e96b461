// Package migrations holds hoard's schema as ordered, append-only tern SQL
// files embedded in the binary, and Migrate, which applies River's own
// migrations and then these under one PostgreSQL advisory lock so that several
// processes starting at once are safe.
//
// Never edit a migration that has landed: add a new file. tern renders every
// file as a Go text/template, so a literal double brace must be escaped.
package migrations

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/tern/v2/migrate"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

//go:embed *.sql
var files embed.FS

// versionTable is tern's one-row version table.
const versionTable = "public.hoard_schema_version"

// lockKey is the session advisory lock taken around both migrators. It differs
// from tern's own key (9628173550095224).
const lockKey int64 = 0x686f617264_0001 // "hoard" + 1

// Status describes the schema of a database.
type Status struct {
	Current int32 // applied hoard migration version
	Latest  int32 // newest version this binary ships
}

// UpToDate reports whether every migration this binary ships is applied.
// A database newer than the binary also counts as up to date.
func (s Status) UpToDate() bool { return s.Current >= s.Latest }

// Migrate applies River's migrations, then hoard's, holding an advisory lock
// on one connection for the whole run. It is idempotent. A database that is
// already newer than this binary is left alone (a rollback deploy keeps
// working) and logged.
func Migrate(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger) (err error) {
	if logger == nil {
		logger = slog.Default()
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: acquire connection: %w", err)
	}
	defer conn.Release()

	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", lockKey); err != nil {
		return fmt.Errorf("migrate: take advisory lock: %w", err)
	}
	defer func() {
		// Unlock on a fresh context: ctx may be cancelled by now, and a
		// lock left behind would block every later start until the
		// connection closes.
		if _, uerr := conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", lockKey); uerr != nil {
			err = errors.Join(err, fmt.Errorf("migrate: release advisory lock: %w", uerr))
		}
	}()

	rm, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: logger})
	if err != nil {
		return fmt.Errorf("migrate: river migrator: %w", err)
	}
	// River logs each version it applies.
	if _, err := rm.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate: river: %w", err)
	}

	tm, err := newMigrator(ctx, conn)
	if err != nil {
		return err
	}
	current, err := tm.GetCurrentVersion(ctx)
	if err != nil {
		return fmt.Errorf("migrate: read schema version: %w", err)
	}
	latest := int32(len(tm.Migrations))
	if current > latest {
		logger.Warn("database schema is newer than this binary; not migrating", "current", current, "latest", latest)
		return nil
	}
	tm.OnStart = func(seq int32, name, _, _ string) {
		logger.Info("applying migration", "version", seq, "name", name)
	}
	if err := tm.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate: hoard schema: %w", err)
	}
	return nil
}

// CurrentStatus reports the applied and the latest schema version.
func CurrentStatus(ctx context.Context, pool *pgxpool.Pool) (Status, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return Status{}, fmt.Errorf("migration status: acquire connection: %w", err)
	}
	defer conn.Release()
	// Read without creating the version table (NewMigrator creates it).
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", versionTable).Scan(&exists); err != nil {
		return Status{}, fmt.Errorf("migration status: %w", err)
	}
	st := Status{Latest: Latest()}
	if !exists {
		return st, nil
	}
	if err := conn.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM "+versionTable).Scan(&st.Current); err != nil {
		return Status{}, fmt.Errorf("migration status: %w", err)
	}
	return st, nil
}

// Latest returns the newest schema version this binary ships.
func Latest() int32 {
	entries, err := fs.Glob(files, "*.sql")
	if err != nil {
		panic(err) // the pattern is constant and valid
	}
	return int32(len(entries))
}

func newMigrator(ctx context.Context, conn *pgxpool.Conn) (*migrate.Migrator, error) {
	tm, err := migrate.NewMigrator(ctx, conn.Conn(), versionTable)
	if err != nil {
		return nil, fmt.Errorf("migrate: tern migrator: %w", err)
	}
	if err := tm.LoadMigrations(files); err != nil {
		return nil, fmt.Errorf("migrate: load migrations: %w", err)
	}
	return tm, nil
}
