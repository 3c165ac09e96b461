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
	for {
		err := db.listenOnce(ctx, channels, fn)
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

func (db *DB) listenOnce(ctx context.Context, channels []string, fn func(channel, payload string)) error {
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
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("listen: %w", err)
		}
		fn(n.Channel, n.Payload)
	}
}

// RequeueJobsOf makes the River jobs that the worker clientID left running
// (it stopped without finishing them: a crash or a kill) available again
// at once, instead of after River's rescue delay. The interrupted attempt
// is given back (attempt − 1): the interruption was not the job's failure,
// so its next run has the same attempt number and the attempt counters
// mirrored on skipped packages end as they would without the crash. Call
// it before that worker's client starts.
func (db *DB) RequeueJobsOf(ctx context.Context, clientID string) (int64, error) {
	tag, err := db.q.Exec(ctx, `UPDATE river_job SET state = 'available', scheduled_at = now(),
		attempt = greatest(attempt - 1, 0),
		errors = array_append(errors, jsonb_build_object('at', now(), 'attempt', attempt,
			'error', 'the worker stopped while the job ran', 'trace', ''))
		WHERE state = 'running' AND attempted_by[array_length(attempted_by, 1)] = $1`, clientID)
	if err != nil {
		return 0, wrap("requeue interrupted jobs", err)
	}
	return tag.RowsAffected(), nil
}
