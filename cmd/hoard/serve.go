package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/bot"
	"github.com/hoard/hoard/grouping"
	"github.com/hoard/hoard/jobs"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/telegram"
	"github.com/hoard/hoard/queue"
	"github.com/hoard/hoard/store"
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
	if p == (parts{bot: true}) && cfg.BotToken == "" && cfg.TelegramEmulator == "" {
		fmt.Fprintf(stderr, "hoard %s: %v\n", cmd, errNoBotToken)
		return exitUsage
	}
	if p.web {
		if err := cfg.CheckAuthSecret(); err != nil {
			fmt.Fprintf(stderr, "hoard %s: %v\n", cmd, err)
			return exitUsage
		}
	}
	var pool store.Options
	if p.bot {
		pool = botPool(cfg.NewLogger())
	}
	a, err := openApp(ctx, cfg, pool)
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

// serve runs the parts until ctx ends, or until the bot's session lease is
// lost (then it stops and returns why). ready, when not nil, is called
// with the web listener's address once it accepts connections.
func (a *app) serve(ctx context.Context, p parts, ready func(addr string)) (err error) {
	ctx, stop := context.WithCancelCause(ctx)
	defer func() {
		if cause := context.Cause(ctx); err == nil && errors.Is(cause, errSessionLost) {
			err = cause
		}
		stop(nil)
	}()
	stopMetrics, err := a.serveMetrics(ctx, nil)
	if err != nil {
		return err
	}
	defer stopMetrics()
	var chatBot *telegram.Bot
	if p.bot {
		b, closeBot, err := a.connectBot(ctx, stop)
		switch {
		case err != nil && !p.web && !p.worker:
			return err
		case err != nil:
			a.log.Warn("chat bot not started", "err", err)
		default:
			chatBot = b
			defer closeBot()
		}
	}
	var client *queue.Client
	if p.worker || chatBot != nil {
		var b messenger.Bot
		if chatBot != nil {
			b = chatBot
		}
		if client, err = a.startWorker(ctx, p.worker, b); err != nil {
			return err
		}
		defer func() {
			stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 45*time.Second)
			defer cancel()
			if err := queue.Stop(stopCtx, client); err != nil {
				a.log.Warn("stop worker", "err", err)
			}
			a.log.Info("worker stopped")
		}()
	}
	if chatBot != nil {
		botDone := a.runBot(ctx, chatBot, client)
		defer func() { <-botDone }()
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
	return a.serveWeb(ctx, client, ready)
}

// serveWeb runs the web application until ctx ends, then gives the
// requests in flight 15 s to finish. ready, when not nil, is called with
// the listener's address once it accepts connections.
func (a *app) serveWeb(ctx context.Context, client *queue.Client, ready func(addr string)) error {
	handler, stopDownloads, err := a.newWeb(ctx, client)
	if err != nil {
		return err
	}
	defer stopDownloads()
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

// newWeb prepares the web application: the upload directory, the
// administrator of HOARD_ADMIN_EMAIL, downloads through the bot, and the
// handler, started. stopDownloads closes the downloads' bot.
func (a *app) newWeb(ctx context.Context, client *queue.Client) (handler *web.Server, stopDownloads func(), err error) {
	if err := os.MkdirAll(a.cfg.UploadDir, 0o750); err != nil {
		return nil, nil, fmt.Errorf("UPLOAD_DIR: %w", err)
	}
	if a.cfg.AdminEmail != "" {
		created, err := web.EnsureAdmin(ctx, a.db, a.cfg.AdminEmail, a.cfg.AdminPassword)
		if err != nil {
			return nil, nil, fmt.Errorf("HOARD_ADMIN_EMAIL: %w", err)
		}
		if created {
			a.log.Info("created the administrator from HOARD_ADMIN_EMAIL", "email", a.cfg.AdminEmail)
		}
	}
	secrets, err := messenger.NewSealer(a.cfg.AuthSecret)
	if err != nil {
		return nil, nil, fmt.Errorf("web: login secrets: %w", err)
	}
	downloads, stopDownloads, err := a.newDownloads()
	if err != nil {
		return nil, nil, fmt.Errorf("web: downloads: %w", err)
	}
	handler, err = web.New(web.Deps{DB: a.db, Queue: client, Logger: a.log, AppURL: a.cfg.AppURL, Secrets: secrets, Downloads: downloads,
		UsersCanCurate: a.cfg.UsersCanCurate, WorkerInterval: a.cfg.WorkerInterval, BotUsername: a.cfg.BotUsername,
		UploadDir: a.cfg.UploadDir, MaxUploadBytes: a.cfg.UploadMaxBytes, UploadQuotaBytes: a.cfg.UploadQuotaBytes,
		UploadMinFreeBytes: a.cfg.UploadMinFreeBytes, UploadRetention: a.cfg.UploadRetention, Version: version, Database: a.dbDesc,
		SearchCacheTTL: a.cfg.SearchCacheTTL, MaxConcurrentRequests: a.cfg.MaxConcurrentRequests,
		StatementTimeout: a.cfg.WebStatementTimeout, SignIn: a.cfg.SignIn, Metrics: a.metrics, DemoNote: a.demo.AccountsNote,
		VariantLabel: grouping.VariantLabel})
	if err == nil {
		err = handler.Start(ctx)
	}
	if err != nil {
		stopDownloads()
		return nil, nil, err
	}
	return handler, stopDownloads, nil
}

// startWorker starts the River client of this process: the worker's queues
// (with worker) and the bot's (with a bot), after requeueing the jobs this
// process left running when it last stopped; with worker it also listens
// for ingestion_trigger to start work sooner than the next poll.
func (a *app) startWorker(ctx context.Context, worker bool, chatBot messenger.Bot) (*queue.Client, error) {
	workers := river.NewWorkers()
	if worker {
		if err := a.registerJobs(workers); err != nil {
			return nil, err
		}
	}
	if chatBot != nil {
		if err := bot.Register(workers, a.botDeps(chatBot)); err != nil {
			return nil, err
		}
	}
	role := queue.RoleWorker
	switch {
	case worker && chatBot != nil:
		role = queue.RoleAll
	case chatBot != nil:
		role = queue.RoleBot
	}
	periodic := jobs.Periodic(a.cfg.WorkerInterval)
	if a.demo.NoSchedule {
		periodic = jobs.Periodic(0)
	}
	client, err := queue.NewClient(a.db.Pool(), queue.Options{
		Role: role, Workers: workers, Periodic: periodic, Logger: a.log, ID: a.cfg.WorkerID,
		FetchCooldown: a.demo.FetchCooldown, FetchPollInterval: a.demo.FetchPoll, SoftStop: a.demo.SoftStop, Jobs: a.metrics,
	})
	if err != nil {
		return nil, err
	}
	if n, err := a.db.RequeueJobsOf(ctx, a.cfg.WorkerID); err != nil {
		return nil, err
	} else if n > 0 {
		a.log.Info("resumed jobs this process left running", "jobs", n, "worker", a.cfg.WorkerID)
	}
	if err := client.Start(ctx); err != nil {
		return nil, fmt.Errorf("start worker: %w", err)
	}
	if worker {
		go a.listenForWork(ctx, client)
		if !a.demo.NoSchedule {
			a.firstCycle(ctx, client)
		}
	}
	a.log.Info("worker started", "queues", queue.QueuesFor(role), "id", a.cfg.WorkerID)
	return client, nil
}

// firstCycle queues an ingestion cycle when none ever ran, so a fresh
// install starts working at once instead of at the first scheduled cycle
// (up to WORKER_INTERVAL_MINUTES later). Several workers starting together
// queue one (the cycle is unique while unfinished).
func (a *app) firstCycle(ctx context.Context, client *queue.Client) {
	ran, err := a.db.HasRuns(ctx)
	if err == nil && !ran {
		_, err = client.Insert(ctx, hoard.IngestCycleArgs{Trigger: hoard.TriggerSchedule}, nil)
	}
	if err != nil {
		a.log.Warn("queue the first ingestion cycle", "err", err)
	}
}

// registerJobs adds the worker's job kinds to workers.
func (a *app) registerJobs(workers *river.Workers) error {
	if a.clients == nil {
		clients, err := a.newAccountClients()
		if err != nil {
			return err
		}
		a.clients = clients
	}
	window := a.cfg.AutoGroupTimeWindow
	if window == 0 {
		window = -1 // AUTO_GROUP_TIME_WINDOW_MINUTES=0 turns the time-window pass off
	}
	settle := a.cfg.WorkerSettle
	if settle == 0 {
		settle = -1 // WORKER_SETTLE_MINUTES=0: no settle time
	}
	secrets, err := messenger.NewSealer(a.cfg.AuthSecret)
	if err != nil {
		return fmt.Errorf("worker: login secrets: %w", err)
	}
	deps := jobs.Deps{DB: a.db, Logger: a.log, GroupTimeWindow: window, Accounts: a.clients, Logins: a.clients, Secrets: secrets,
		SpoolDir: filepath.Join(a.cfg.DataDir, "spool"), UploadDir: a.cfg.UploadDir, WorkerInterval: a.cfg.WorkerInterval,
		MaxSkipAttempts: a.cfg.WorkerMaxSkipAttempts, SplitThreshold: a.cfg.SplitThresholdBytes, SettleTime: settle,
		RetryBase: a.demo.RetryBase, LaterRetry: a.demo.LaterRetry, Metrics: a.metrics, UploadRetention: a.cfg.UploadRetention,
		SpoolMinFree: a.cfg.UploadMinFreeBytes}
	return jobs.Register(workers, deps)
}

// listenForWork turns ingestion_trigger notifications into a cycle job.
// manual_upload needs nothing: its job was inserted with the upload, and
// River's own insert notification wakes the worker.
func (a *app) listenForWork(ctx context.Context, client *queue.Client) {
	a.db.Listen(ctx, []string{"ingestion_trigger"}, func(string, string) {
		if _, err := client.Insert(ctx, hoard.IngestCycleArgs{Trigger: hoard.TriggerManual}, nil); err != nil {
			a.log.Warn("ingestion trigger", "err", err)
		}
	}, func(err error) { a.log.Warn("listen for ingestion triggers; reconnecting", "err", err) })
}
