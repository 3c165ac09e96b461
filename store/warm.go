package store

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// warmTimeout bounds warming one connection.
const warmTimeout = 10 * time.Second

// warmer warms new connections (Options.Warm) once the schema is current.
type warmer struct {
	fn    func(ctx context.Context, conn *DB)
	ready atomic.Bool // set by Migrate: the tables fn reads exist
}

// afterConnect is the pool's AfterConnect: it warms a new connection once
// the schema is current.
func (w *warmer) afterConnect(ctx context.Context, c *pgx.Conn) error {
	if !w.ready.Load() {
		return nil
	}
	return w.run(ctx, c)
}

// run warms one connection in a transaction it rolls back. Its error is
// the connection's (a failed rollback leaves it unusable); fn reports its
// own.
func (w *warmer) run(ctx context.Context, c *pgx.Conn) error {
	ctx, cancel := context.WithTimeout(ctx, warmTimeout)
	defer cancel()
	tx, err := c.Begin(ctx)
	if err != nil {
		return fmt.Errorf("warm connection: begin: %w", err)
	}
	w.fn(ctx, WithTx(tx))
	if err := tx.Rollback(ctx); err != nil {
		return fmt.Errorf("warm connection: roll back: %w", err)
	}
	return nil
}

// startWarming warms the pool's idle connections and, from now on, every
// connection it opens (Migrate calls it once the schema is current).
func (db *DB) startWarming(ctx context.Context) {
	if db.warm == nil || db.warm.ready.Swap(true) {
		return
	}
	for _, c := range db.pool.AcquireAllIdle(ctx) {
		_ = db.warm.run(ctx, c.Conn()) // a connection it broke is closed, and Release drops it
		c.Release()
	}
}
