package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Statement timeouts per request. A web request must not hold the database
// for long, whatever it asks; the worker's jobs may run long statements on
// the same pool (hoard serve). So the bound travels with the context, not
// with the pool: WithStatementTimeout marks a context, and a DB opened by
// Open gives each connection it hands out (to a query or a transaction) the
// statement_timeout of the acquiring context — PostgreSQL itself cancels a
// statement that runs past it, so the work stops, not only the wait. The
// setting is changed only when it differs from the connection's (one SET on
// the first web query after a job's, or back): a connection remembers its
// own in its custom data.

type statementTimeoutKey struct{}

// connTimeoutKey is where a connection records the statement_timeout this
// store set on it (absent: the server's default).
const connTimeoutKey = "hoard.statement_timeout"

// pgQueryCanceled is SQLSTATE query_canceled: a statement timeout (or a
// cancel request).
const pgQueryCanceled = "57014"

// WithStatementTimeout returns a context whose queries, on a DB from Open,
// PostgreSQL cancels once they have run for d (IsStatementTimeout tells
// such an error). d <= 0 leaves the server's default.
func WithStatementTimeout(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, statementTimeoutKey{}, d)
}

// IsStatementTimeout reports whether err is PostgreSQL's cancellation of a
// statement (SQLSTATE 57014): one that ran past the statement timeout of
// WithStatementTimeout.
func IsStatementTimeout(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == pgQueryCanceled
}

// prepareStatementTimeout is the pool's PrepareConn hook: it gives conn the
// statement timeout of ctx (WithStatementTimeout), or the server's default
// when ctx has none. A connection whose setting could not be changed is
// destroyed and the query fails with the error.
func prepareStatementTimeout(ctx context.Context, conn *pgx.Conn) (bool, error) {
	want, _ := ctx.Value(statementTimeoutKey{}).(time.Duration)
	data := conn.PgConn().CustomData()
	have, set := data[connTimeoutKey].(time.Duration)
	switch {
	case want <= 0 && !set, want > 0 && set && have == want:
		return true, nil
	case want <= 0:
		if _, err := conn.Exec(ctx, "RESET statement_timeout"); err != nil {
			return false, fmt.Errorf("reset statement timeout: %w", err)
		}
		delete(data, connTimeoutKey)
	default:
		if _, err := conn.Exec(ctx, fmt.Sprintf("SET statement_timeout = %d", max(want.Milliseconds(), 1))); err != nil {
			return false, fmt.Errorf("set statement timeout: %w", err)
		}
		data[connTimeoutKey] = want
	}
	return true, nil
}
