package migrations

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// MigrateTo applies River's migrations and hoard's up to version target,
// for the tests of a migration's data: rows written in the schema before
// it, then Migrate.
func MigrateTo(ctx context.Context, pool *pgxpool.Pool, target int32) error {
	rm, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return fmt.Errorf("migrate to %d: %w", target, err)
	}
	if _, err := rm.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate to %d: river: %w", target, err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate to %d: %w", target, err)
	}
	defer conn.Release()
	tm, err := newMigrator(ctx, conn)
	if err != nil {
		return err
	}
	if err := tm.MigrateTo(ctx, target); err != nil {
		return fmt.Errorf("migrate to %d: %w", target, err)
	}
	return nil
}
