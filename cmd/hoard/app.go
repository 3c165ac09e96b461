package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/hoard/hoard/bot"
	"github.com/hoard/hoard/config"
	"github.com/hoard/hoard/demo"
	"github.com/hoard/hoard/messenger/telegram"
	"github.com/hoard/hoard/metrics"
	"github.com/hoard/hoard/pgserver"
	"github.com/hoard/hoard/sessionlease"
	"github.com/hoard/hoard/store"
)

// app is what every command that uses the database shares: configuration,
// logger, the database (embedded or external), migrated.
type app struct {
	cfg    config.Config
	log    *slog.Logger
	db     *store.DB
	pg     *pgserver.Server // nil when DATABASE_URL is set
	dbDesc string
	// metrics are this process's; served on METRICS_ADDR when set.
	metrics *metrics.Metrics

	// clients are the worker's messenger clients (set up on first need).
	clients *telegram.AccountPool
	// leases are the messaging sessions this process holds: only one
	// process uses a session at a time.
	leases *sessionlease.Holder
	// demo are the demo's settings (the zero value outside the demo): its
	// emulator, which the chat bot connects to, the messaging page's note,
	// and the worker's tuning.
	demo demo.Settings
}

// botPool is the database pool of a process that runs the chat bot: each
// command being answered holds a connection for its transaction and paces
// its reply on another, beside 50 deliveries at once; the connections a
// burst of commands needs are kept open, and each new one runs the
// statements of an answer before it serves one (bot.WarmConnection).
func botPool(log *slog.Logger) store.Options {
	return store.Options{MaxConns: 40, MinConns: 20, Warm: func(ctx context.Context, conn *store.DB) {
		if err := bot.WarmConnection(ctx, conn); err != nil {
			log.Warn("bot: warm a database connection", "err", err)
		}
	}}
}

// openApp starts or connects to the database (a pool sized by pool; zero
// values are pgx's defaults) and applies migrations.
func openApp(ctx context.Context, cfg config.Config, pool store.Options) (*app, error) {
	a := &app{cfg: cfg, log: cfg.NewLogger()}
	dbURL := cfg.DatabaseURL
	if dbURL == "" {
		dir := filepath.Join(cfg.DataDir, "pg")
		srv, err := pgserver.Start(ctx, pgserver.Options{DataDir: dir, Database: "hoard", Logger: a.log})
		if err != nil {
			return nil, fmt.Errorf("embedded database (DATABASE_URL is not set): %w", err)
		}
		a.pg = srv
		dbURL = srv.URL()
		a.dbDesc = "embedded PostgreSQL in " + dir
	} else {
		a.dbDesc = describeURL(dbURL)
	}
	a.log.Info("using database", "database", a.dbDesc)
	db, err := store.Open(ctx, dbURL, pool)
	if err != nil {
		a.close()
		return nil, err
	}
	a.db = db
	if err := db.Migrate(ctx, a.log); err != nil {
		a.close()
		return nil, err
	}
	a.metrics = a.newMetrics()
	a.leases = sessionlease.New(db, cfg.WorkerID, cfg.SessionLease, a.log)
	return a, nil
}

// close releases the database and stops an embedded server this process
// started.
func (a *app) close() {
	if a.clients != nil {
		a.clients.Close()
	}
	if a.leases != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		a.leases.Close(ctx)
		cancel()
	}
	if a.db != nil {
		a.db.Close()
	}
	if a.pg != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := a.pg.Stop(ctx); err != nil {
			a.log.Warn("stop embedded database", "err", err)
		}
	}
}

// describeURL names a database without its password.
func describeURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" {
		return "DATABASE_URL (keyword form)"
	}
	return fmt.Sprintf("database %q on %s as %q", strings.TrimPrefix(u.Path, "/"), u.Host, u.User.Username())
}
