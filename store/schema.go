package store

import (
	"context"
	"log/slog"

	"github.com/hoard/hoard/migrations"
)

// SchemaStatus reports the applied and the latest schema version (for
// readiness checks).
func (db *DB) SchemaStatus(ctx context.Context) (migrations.Status, error) {
	if db.pool == nil {
		return migrations.Status{}, errNoPool
	}
	return migrations.CurrentStatus(ctx, db.pool)
}

// Migrate applies every pending migration (River's and hoard's), and
// then starts warming connections (Options.Warm).
func (db *DB) Migrate(ctx context.Context, logger *slog.Logger) error {
	if db.pool == nil {
		return errNoPool
	}
	if err := migrations.Migrate(ctx, db.pool, logger); err != nil {
		return err
	}
	db.startWarming(ctx)
	return nil
}
