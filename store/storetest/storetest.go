// Package storetest gives tests a real, migrated PostgreSQL database.
//
// It uses TEST_DATABASE_URL when set (any database on a server where the
// user may create databases) and otherwise starts one temporary embedded
// cluster per test process with the same code as hoard's embedded default
// (pgserver). It migrates a template database once per process; each
// test then gets either a transaction rolled back at cleanup (NewTx, fast)
// or a fresh database cloned from the template (NewDB, for tests that
// commit, run River clients or several connections).
//
// Packages that use it call storetest.Main from TestMain, so the template,
// the clones and the embedded cluster are removed when the tests end.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hoard/hoard/migrations"
	"github.com/hoard/hoard/pgserver"
	"github.com/hoard/hoard/store"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// EnvURL names the variable that points tests at an existing server.
const EnvURL = "TEST_DATABASE_URL"

type env struct {
	adminURL string // maintenance database on the server
	prefix   string // unique per test process
	template string // migrated, never connected to after migration
	base     *pgxpool.Pool
	server   *pgserver.Server
	dir      string
}

var (
	setupOnce sync.Once
	shared    *env
	setupErr  error
	counter   atomic.Int64
	createMu  sync.Mutex // CREATE DATABASE … TEMPLATE must not race on one template
)

// Main runs the tests of a package and then removes what storetest created
// and runs cleanups (Main exits the process: a deferred call in TestMain
// would never run). Use it as `func TestMain(m *testing.M) { storetest.Main(m) }`.
func Main(m *testing.M, cleanups ...func()) {
	code := m.Run()
	teardown()
	for _, c := range cleanups {
		c()
	}
	os.Exit(code)
}

func get(t testing.TB) *env {
	t.Helper()
	setupOnce.Do(func() { shared, setupErr = setup() })
	if setupErr != nil {
		t.Fatalf("storetest: %v", setupErr)
	}
	return shared
}

func setup() (*env, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := &env{prefix: fmt.Sprintf("hoardtest_%d_%d", os.Getpid(), time.Now().UnixNano()%1_000_000)}
	if u := os.Getenv(EnvURL); u != "" {
		e.adminURL = u
	} else {
		dir, err := os.MkdirTemp("", "hoard-storetest-")
		if err != nil {
			return nil, err
		}
		// The embedded server may run as another user (initdb refuses
		// root): the directory must be reachable for it.
		if err := os.Chmod(dir, 0o755); err != nil {
			return nil, err
		}
		e.dir = dir
		srv, err := pgserver.Start(ctx, pgserver.Options{
			DataDir:  filepath.Join(dir, "pg"),
			Database: "postgres",
			Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
			ExtraConfig: map[string]string{
				"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off", "max_connections": "200",
			},
		})
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("start embedded PostgreSQL (set %s to use a running server): %w", EnvURL, err)
		}
		e.server = srv
		e.adminURL = srv.AdminURL()
	}
	e.template = e.prefix + "_tmpl"
	if err := e.exec(ctx, "CREATE DATABASE "+pgx.Identifier{e.template}.Sanitize()); err != nil {
		e.close()
		return nil, err
	}
	tmpl, err := pgxpool.New(ctx, withDatabase(e.adminURL, e.template))
	if err != nil {
		e.close()
		return nil, fmt.Errorf("connect template: %w", err)
	}
	err = migrations.Migrate(ctx, tmpl, slog.New(slog.NewTextHandler(io.Discard, nil)))
	tmpl.Close()
	if err != nil {
		e.close()
		return nil, fmt.Errorf("migrate template: %w", err)
	}
	baseName := e.prefix + "_base"
	if err := e.clone(ctx, baseName); err != nil {
		e.close()
		return nil, err
	}
	e.base, err = pgxpool.New(ctx, withDatabase(e.adminURL, baseName))
	if err != nil {
		e.close()
		return nil, fmt.Errorf("connect base database: %w", err)
	}
	return e, nil
}

func teardown() {
	if shared != nil {
		shared.close()
	}
}

// close drops every database of this process and stops the embedded server.
func (e *env) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if e.base != nil {
		e.base.Close()
	}
	if conn, err := pgx.Connect(ctx, e.adminURL); err == nil {
		rows, err := conn.Query(ctx, `SELECT datname FROM pg_database WHERE datname LIKE $1`, e.prefix+"%")
		if err == nil {
			names, _ := pgx.CollectRows(rows, pgx.RowTo[string])
			for _, n := range names {
				_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{n}.Sanitize()+" WITH (FORCE)")
			}
		}
		_ = conn.Close(ctx)
	}
	if e.server != nil {
		_ = e.server.Stop(ctx)
	}
	if e.dir != "" {
		_ = os.RemoveAll(e.dir)
	}
}

func (e *env) exec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, e.adminURL)
	if err != nil {
		return fmt.Errorf("connect %s: %w", redact(e.adminURL), err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}

func (e *env) clone(ctx context.Context, name string) error {
	createMu.Lock()
	defer createMu.Unlock()
	var err error
	for attempt := 0; attempt < 20; attempt++ {
		err = e.exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE "+pgx.Identifier{e.template}.Sanitize())
		var pgErr *pgconn.PgError
		if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "55006" { // object_in_use
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
	return err
}

// NewTx returns a store.DB bound to a transaction on a shared migrated
// database; the transaction is rolled back when the test ends, so tests
// using NewTx may run in parallel and see none of each other's rows.
func NewTx(t testing.TB) *store.DB {
	t.Helper()
	e := get(t)
	ctx := context.Background()
	tx, err := e.base.Begin(ctx)
	if err != nil {
		t.Fatalf("storetest: begin: %v", err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	return store.WithTx(tx)
}

// NewDB returns a store.DB on a fresh database cloned from the migrated
// template, dropped when the test ends.
func NewDB(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), URL(t), store.Options{})
	if err != nil {
		t.Fatalf("storetest: %v", err)
	}
	t.Cleanup(db.Close)
	return db
}

// URL returns the connection string of a fresh migrated database, dropped
// when the test ends.
func URL(t testing.TB) string {
	t.Helper()
	e := get(t)
	name := fmt.Sprintf("%s_%d", e.prefix, counter.Add(1))
	if err := e.clone(context.Background(), name); err != nil {
		t.Fatalf("storetest: clone database: %v", err)
	}
	t.Cleanup(func() { e.drop(name) })
	return withDatabase(e.adminURL, name)
}

// EmptyURL returns the connection string of a fresh database without any
// schema (for migration tests), dropped when the test ends.
func EmptyURL(t testing.TB) string {
	t.Helper()
	e := get(t)
	name := fmt.Sprintf("%s_%d", e.prefix, counter.Add(1))
	if err := e.exec(context.Background(), "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("storetest: create database: %v", err)
	}
	t.Cleanup(func() { e.drop(name) })
	return withDatabase(e.adminURL, name)
}

func (e *env) drop(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = e.exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
}

// withDatabase returns connURL pointing at another database; it accepts URL
// and keyword/value connection strings.
func withDatabase(connURL, db string) string {
	if strings.HasPrefix(connURL, "postgres://") || strings.HasPrefix(connURL, "postgresql://") {
		u, err := url.Parse(connURL)
		if err == nil {
			u.Path = "/" + db
			return u.String()
		}
	}
	return connURL + " dbname=" + db
}

// redact hides a password in a connection string for error messages.
func redact(connURL string) string {
	if u, err := url.Parse(connURL); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			return u.String()
		}
	}
	return connURL
}
