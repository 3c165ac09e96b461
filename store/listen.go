package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Listen receives PostgreSQL notifications on channels and calls fn for
// each, until ctx ends. A lost connection is reported to onError (when not
// nil) and re-established after a short pause; notifications sent
// meanwhile are lost, which is why every event that carries work is also a
// durable River job.
func (db *DB) Listen(ctx context.Context, channels []string, fn func(channel, payload string), onError func(error)) {
	db.ListenReady(ctx, channels, nil, fn, onError)
}

// ListenReady is Listen that also calls ready (when not nil) each time the
// connection listens, the first time and after every reconnection: what
// was announced while it was down is lost, and ready is where a listener
// catches up.
func (db *DB) ListenReady(ctx context.Context, channels []string, ready func(), fn func(channel, payload string), onError func(error)) {
	for {
		err := db.listenOnce(ctx, channels, ready, fn)
		if ctx.Err() != nil {
			return
		}
		if onError != nil {
			onError(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Second):
		}
	}
}

func (db *DB) listenOnce(ctx context.Context, channels []string, ready func(), fn func(channel, payload string)) error {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer conn.Release()
	for _, ch := range channels {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			return fmt.Errorf("listen %s: %w", ch, err)
		}
	}
	defer func() {
		// The connection goes back to the pool: stop listening on it.
		_, _ = conn.Exec(context.WithoutCancel(ctx), "UNLISTEN *")
	}()
	if ready != nil {
		ready()
	}
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("listen: %w", err)
		}
		fn(n.Channel, n.Payload)
	}
}
