// Package store holds all of hoard's SQL: a pgx v5 pool, transactions, and
// typed methods per resource (one file each). Methods take ctx first, are
// named verb-first, and return root error codes: ENOTFOUND for a missing
// row, ECONFLICT for a unique violation, EINVALID for a violated CHECK or
// foreign key, so every surface can map them once.
package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hoard/hoard"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// querier is what both a pool and a transaction offer.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error)
}

// DB runs queries on a pool, or inside one transaction when it came from
// InTx or WithTx. A DB is safe for concurrent use when it wraps a pool; one
// bound to a transaction belongs to one goroutine, like the transaction.
type DB struct {
	pool *pgxpool.Pool
	tx   pgx.Tx
	q    querier
	warm *warmer // Options.Warm of the pool
	// names samples the catalog's names for the substring fallback
	// (rareWindow); nil for a DB made by WithTx.
	names *nameSample

	// tuning, set by tests only, replaces the search's defaultTuning.
	tuning *searchTuning
}

// Options tune Open.
type Options struct {
	MaxConns int32 // 0 = pgx's default (max(4, cores))
	// MinConns connections are opened at once and kept open (0 = none):
	// a process that must answer a burst quickly (the bot) does not open
	// connections in the middle of it.
	MinConns int32
	// Tracer, when set, sees every statement the pool's connections run
	// (the search benchmark captures the SQL a search sends this way).
	Tracer pgx.QueryTracer
	// Warm, when set, runs on every new connection before the pool hands
	// it out, in a transaction rolled back afterwards. A process that must
	// answer quickly from its first request runs there the statements it
	// will run: a connection's first statements are planned while
	// PostgreSQL loads the descriptions of the tables and indexes they
	// touch (a search's first plan takes about 3 ms, later ones 0.4), and
	// the pool opens connections in the middle of a burst and replaces
	// each one hourly. Connections opened before Migrate has brought the
	// schema up to date are warmed when it has. Warm reports its own
	// failures: they do not fail the connection.
	Warm func(ctx context.Context, conn *DB)
}

// Open connects a pool to url and checks that the server answers. Its
// connections take the statement timeout of the context that acquires them
// (WithStatementTimeout).
func Open(ctx context.Context, url string, opts Options) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("open database: parse DATABASE_URL: %w", err)
	}
	// pool_max_conns and pool_min_conns in DATABASE_URL win over the
	// process's own sizes: an operator whose server allows few
	// connections, or who runs several processes on one, sets them there.
	if opts.MaxConns > 0 && !strings.Contains(url, "pool_max_conns=") {
		cfg.MaxConns = opts.MaxConns
	}
	if opts.MinConns > 0 && !strings.Contains(url, "pool_min_conns=") {
		cfg.MinConns = min(opts.MinConns, cfg.MaxConns)
	}
	cfg.MinConns = min(cfg.MinConns, cfg.MaxConns)
	// The catalog's working set lives in memory or on SSDs: random reads
	// cost about as much as sequential ones. With PostgreSQL's default of 4
	// the planner shuns the index scans that serve filtered searches newest
	// first. A value in DATABASE_URL (options=-crandom_page_cost=…) wins.
	if _, set := cfg.ConnConfig.RuntimeParams["random_page_cost"]; !set && !strings.Contains(cfg.ConnConfig.RuntimeParams["options"], "random_page_cost") {
		cfg.ConnConfig.RuntimeParams["random_page_cost"] = "1.1"
	}
	if cfg.ConnConfig.ConnectTimeout == 0 { // a connect_timeout in the URL wins
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	cfg.PrepareConn = prepareStatementTimeout
	if opts.Tracer != nil {
		cfg.ConnConfig.Tracer = opts.Tracer
	}
	var warm *warmer
	if opts.Warm != nil {
		warm = &warmer{fn: opts.Warm}
		cfg.AfterConnect = warm.afterConnect
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open database: ping: %w", err)
	}
	db := New(pool)
	db.warm = warm
	return db, nil
}

// New wraps an existing pool (without Open's per-context statement
// timeouts).
func New(pool *pgxpool.Pool) *DB { return &DB{pool: pool, q: pool, names: &nameSample{}} }

// WithTx returns a DB whose methods run inside tx. InTx on it nests a
// savepoint. River workers use it with the transaction they complete the job
// in; tests use it with a transaction they roll back.
func WithTx(tx pgx.Tx) *DB { return &DB{tx: tx, q: tx} }

// Pool returns the underlying pool (nil for a DB made by WithTx).
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// Tx returns the transaction this DB is bound to, or nil. Pass it to River's
// InsertTx so that jobs commit with the rows that need them.
func (db *DB) Tx() pgx.Tx { return db.tx }

// Close closes the pool. It is a no-op for a DB bound to a transaction.
func (db *DB) Close() {
	if db.pool != nil && db.tx == nil {
		db.pool.Close()
	}
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	if err := db.q.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("ping database: %w", err)
	}
	return nil
}

// InTx runs fn in a transaction and commits when fn returns nil; any error or
// panic rolls back. Called on a DB that is already in a transaction, it uses
// a savepoint, so fn's failure undoes only fn's work.
func (db *DB) InTx(ctx context.Context, fn func(tx *DB) error) (err error) {
	var tx pgx.Tx
	if db.tx != nil {
		tx, err = db.tx.Begin(ctx)
	} else {
		tx, err = db.pool.Begin(ctx)
	}
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
			panic(p)
		}
		if err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	if err = fn(WithTx(tx)); err != nil {
		return err
	}
	if err = tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit transaction: %w", err)
	}
	return nil
}

// Notify sends a PostgreSQL notification on channel with a JSON-ready
// payload string. Inside a transaction it is delivered on commit and never
// after a rollback.
func (db *DB) Notify(ctx context.Context, channel, payload string) error {
	if _, err := db.q.Exec(ctx, "SELECT pg_notify($1, $2)", channel, payload); err != nil {
		return fmt.Errorf("notify %s: %w", channel, err)
	}
	return nil
}

// PostgreSQL error codes mapped to root error codes.
const (
	pgUniqueViolation     = "23505"
	pgForeignKeyViolation = "23503"
	pgCheckViolation      = "23514"
	pgNotNullViolation    = "23502"
)

// wrap names the operation and maps database errors to root error codes.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return hoard.WrapError(hoard.ENOTFOUND, err, op+": not found")
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case pgUniqueViolation:
			return hoard.WrapError(hoard.ECONFLICT, err, op+": already exists")
		case pgForeignKeyViolation:
			return hoard.WrapError(hoard.EINVALID, err, op+": refers to a row that does not exist")
		case pgCheckViolation, pgNotNullViolation:
			return hoard.WrapError(hoard.EINVALID, err, op+": invalid value ("+pgErr.ConstraintName+pgErr.ColumnName+")")
		}
		// Data exceptions (class 22: invalid byte sequences, bad escapes,
		// values out of range) and program limits (class 54: an index entry
		// too large) come from the values, not from the database's health:
		// another attempt cannot fix them.
		if strings.HasPrefix(pgErr.Code, "22") || strings.HasPrefix(pgErr.Code, "54") {
			return hoard.WrapError(hoard.EINVALID, err, op+": invalid value: "+pgErr.Message)
		}
	}
	return fmt.Errorf("%s: %w", op, err)
}

// notFoundIfNone turns an UPDATE/DELETE that touched no row into ENOTFOUND.
func notFoundIfNone(op string, tag pgconn.CommandTag, err error) error {
	if err != nil {
		return wrap(op, err)
	}
	if tag.RowsAffected() == 0 {
		return hoard.Errorf(hoard.ENOTFOUND, "%s: not found", op)
	}
	return nil
}

// getOne runs a query and scans its single row into T by column name.
func getOne[T any](ctx context.Context, q querier, op, sql string, args ...any) (*T, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, wrap(op, err)
	}
	v, err := pgx.CollectExactlyOneRow(rows, pgx.RowToAddrOfStructByNameLax[T])
	if err != nil {
		return nil, wrap(op, err)
	}
	return v, nil
}

// getAll runs a query and scans every row into T by column name.
func getAll[T any](ctx context.Context, q querier, op, sql string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, wrap(op, err)
	}
	v, err := pgx.CollectRows(rows, pgx.RowToStructByNameLax[T])
	if err != nil {
		return nil, wrap(op, err)
	}
	return v, nil
}

// Helpers that store Go zero values as SQL NULL for nullable columns.

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullInt(i int64) any {
	if i == 0 {
		return nil
	}
	return i
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilInts(s []int64) []int64 {
	if s == nil {
		return []int64{}
	}
	return s
}

// prefixed qualifies each column of a list of plain column names (no
// expressions) with a table alias.
func prefixed(alias, columns string) string {
	parts := strings.Split(columns, ",")
	for i, p := range parts {
		parts[i] = alias + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}

// collectOptional scans at most one row into T; nil when there is none.
func collectOptional[T any](rows pgx.Rows) (*T, error) {
	v, err := pgx.CollectRows(rows, pgx.RowToAddrOfStructByNameLax[T])
	if err != nil || len(v) == 0 {
		return nil, err
	}
	return v[0], nil
}

func isNoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

var errNoPool = errors.New("store: this operation needs a pool, not a transaction")

// truncateRunes cuts s to at most n characters.
func truncateRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

// collectIDs reads a single bigint column.
func collectIDs(rows pgx.Rows) ([]int64, error) {
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}
