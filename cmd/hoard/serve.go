package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/hoard/hoard/jobs"
	"github.com/hoard/hoard/queue"
	"github.com/hoard/hoard/web"
	"github.com/riverqueue/river"
)

// parts says which parts of the service a process runs.
type parts struct {
	web, worker, bot bool
}

// runParts runs the chosen parts until ctx is cancelled (SIGINT/SIGTERM),
// then shuts down: the web listener stops accepting, River finishes or
// cancels running jobs, and only then the pool closes.
func runParts(ctx context.Context, cmd string, args []string, getenv func(string) string, stdout, stderr io.Writer, p parts) int {
	if err := noFlags(cmd, args, stderr); err != nil {
		return exitUsage
	}
	cfg, ok := configOrExit(getenv, stderr)
	if !ok {
		return exitUsage
	}
	if p.web {
		if err := cfg.checkAuthSecret(); err != nil {
			fmt.Fprintf(stderr, "hoard %s: %v\n", cmd, err)
			return exitUsage
		}
	}
	a, err := openApp(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "hoard %s: %v\n", cmd, err)
		return exitFailure
	}
	defer a.close()
	if err := a.serve(ctx, p, nil); err != nil {
		a.log.Error("hoard stopped with an error", "command", cmd, "err", err)
		return exitFailure
	}
	return exitOK
}

// serve runs the parts until ctx ends. ready, when not nil, is called with
// the web listener's address once it accepts connections.
func (a *app) serve(ctx context.Context, p parts, ready func(addr string)) error {
	var client *queue.Client
	var err error
	if p.worker {
		workers := river.NewWorkers()
		window := a.cfg.AutoGroupTimeWindow
		if window == 0 {
			window = -1 // AUTO_GROUP_TIME_WINDOW_MINUTES=0 turns the time-window pass off
		}
		if err := jobs.Register(workers, jobs.Deps{DB: a.db, Logger: a.log, GroupTimeWindow: window}); err != nil {
			return err
		}
		role := queue.RoleWorker
		if p.bot {
			role = queue.RoleAll
		}
		client, err = queue.NewClient(a.db.Pool(), queue.Options{
			Role: role, Workers: workers, Periodic: jobs.Periodic(), Logger: a.log,
		})
		if err != nil {
			return err
		}
		if err := client.Start(ctx); err != nil {
			return fmt.Errorf("start worker: %w", err)
		}
		a.log.Info("worker started", "queues", queue.QueuesFor(role))
		defer func() {
			stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 45*time.Second)
			defer cancel()
			if err := queue.Stop(stopCtx, client); err != nil {
				a.log.Warn("stop worker", "err", err)
			}
			a.log.Info("worker stopped")
		}()
	}
	if p.bot {
		a.log.Info("chat bot: not available yet (needs the messenger adapter); the bot queue waits for it")
	}
	if !p.web {
		<-ctx.Done()
		return nil
	}
	if client == nil {
		if client, err = queue.NewInsertOnly(a.db.Pool(), a.log); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(a.cfg.UploadDir, 0o750); err != nil {
		return fmt.Errorf("UPLOAD_DIR: %w", err)
	}
	if a.cfg.AdminEmail != "" {
		created, err := web.EnsureAdmin(ctx, a.db, a.cfg.AdminEmail, a.cfg.AdminPassword)
		if err != nil {
			return fmt.Errorf("HOARD_ADMIN_EMAIL: %w", err)
		}
		if created {
			a.log.Info("created the administrator from HOARD_ADMIN_EMAIL", "email", a.cfg.AdminEmail)
		}
	}
	handler, err := web.New(web.Deps{DB: a.db, Queue: client, Logger: a.log, AppURL: a.cfg.AppURL,
		UsersCanCurate: a.cfg.UsersCanCurate, WorkerInterval: a.cfg.WorkerInterval, BotUsername: a.cfg.BotUsername,
		UploadDir: a.cfg.UploadDir, MaxUploadBytes: a.cfg.UploadMaxBytes, Version: version, Database: a.dbDesc})
	if err != nil {
		return err
	}
	if err := handler.Start(ctx); err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          nil,
	}
	ln, err := net.Listen("tcp", a.cfg.ListenAddr)
	if err != nil {
		return fmt.Errorf("web: listen on LISTEN_ADDR %s: %w", a.cfg.ListenAddr, err)
	}
	a.log.Info("web listening", "addr", ln.Addr().String(), "url", a.cfg.AppURL)
	if ready != nil {
		ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("web: %w", err)
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		a.log.Warn("web shutdown", "err", err)
	}
	a.log.Info("web stopped")
	return nil
}
