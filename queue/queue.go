// Package queue builds hoard's River clients: which queues a process works
// and how many jobs of each run at once, periodic jobs, job time-outs, an
// insert-only client for processes that only enqueue, and a clean stop.
//
// Every working client sets FetchOnlyKnownKinds, so processes with different
// worker sets can share the database without burning each other's attempts.
package queue

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/hoard/hoard"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
)

// Client is the River client type hoard uses everywhere.
type Client = river.Client[pgx.Tx]

// Role says what a process works.
type Role int

// Process roles.
const (
	// RoleWorker works ingestion, transfer and maintenance jobs and is
	// eligible to lead (periodic jobs, the scheduler, the rescuer).
	RoleWorker Role = iota
	// RoleBot works the bot queue only. It is eligible to lead, with the
	// same periodic jobs as a worker: a bot process alone must still move
	// its scheduled jobs (flood-wait snoozes, subscriber notices) to
	// available, and whichever process leads enqueues the periodic jobs.
	RoleBot
	// RoleAll works every queue and may lead: `hoard serve`.
	RoleAll
)

// QueuesFor returns the queues a role works.
func QueuesFor(r Role) []string {
	switch r {
	case RoleBot:
		return []string{hoard.QueueBot}
	case RoleWorker:
		return []string{hoard.QueueIngest, hoard.QueueTransfer, hoard.QueueMaintenance}
	default:
		return slices.Clone(hoard.Queues)
	}
}

// DefaultConcurrency is how many jobs of each queue one process runs at
// once. Transfers are few and long: they hold spool disk and the account's
// bandwidth; scans are many and short.
var DefaultConcurrency = map[string]int{
	hoard.QueueIngest:      4,
	hoard.QueueTransfer:    2,
	hoard.QueueMaintenance: 2,
	// Deliveries spend most of their time waiting for their chat's slot
	// in the platform's pace (1 message/s per chat): 50 chats at once
	// keep the overall 30/s busy.
	hoard.QueueBot: 50,
}

// BotFetchCooldown is the least time between two fetches of the bot queue
// (unless Options.FetchCooldown sets one for every queue): as short as the
// insert notifications the web sends (NewInsertOnly), so that a delivery
// starts within tens of milliseconds of being queued.
const BotFetchCooldown = 20 * time.Millisecond

// DefaultJobTimeout bounds a job of a kind that sets no Timeout of its own.
// Transfer kinds return their own (hours) from Timeout().
const DefaultJobTimeout = 10 * time.Minute

// Options configure NewClient.
type Options struct {
	Role        Role
	Workers     *river.Workers       // must hold at least one worker
	Periodic    []*river.PeriodicJob // run by whichever process leads
	Concurrency map[string]int       // per-queue overrides of DefaultConcurrency
	JobTimeout  time.Duration        // 0 = DefaultJobTimeout
	ID          string               // client id shown in River UI; "" = River's default
	Logger      *slog.Logger
	// FetchCooldown and FetchPollInterval tune latency; zero = River's
	// defaults. Tests lower them.
	FetchCooldown     time.Duration
	FetchPollInterval time.Duration
	// SoftStop is how long running jobs get to finish on shutdown before
	// their contexts are cancelled (0 = DefaultSoftStop).
	SoftStop time.Duration
	// Jobs, when set, is told about every job this client works.
	Jobs JobObserver
}

// JobObserver is told about every job a client works: its kind, queue,
// outcome (JobCompleted, JobSnoozed, JobCancelled or JobFailed; a panic
// is a failure) and how long Work took. It must be safe for concurrent
// use and quick: it runs in the job's goroutine.
type JobObserver interface {
	JobWorked(kind, queue, outcome string, took time.Duration)
}

// Outcomes of a worked job, as a JobObserver hears them.
const (
	JobCompleted = "completed"
	JobSnoozed   = "snoozed"
	JobCancelled = "cancelled"
	JobFailed    = "failed"
)

// observeJobs is the worker middleware that times every job's Work for o.
// A panic passes through untouched (River records it with its stack) after
// counting as a failure.
func observeJobs(o JobObserver) rivertype.Middleware {
	return river.WorkerMiddlewareFunc(func(ctx context.Context, job *rivertype.JobRow, work func(context.Context) error) error {
		start := time.Now()
		outcome := JobFailed // unless Work returns: a panic
		defer func() { o.JobWorked(job.Kind, job.Queue, outcome, time.Since(start)) }()
		err := work(ctx)
		outcome = jobOutcome(err)
		return err
	})
}

// jobOutcome classifies what a job's Work returned.
func jobOutcome(err error) string {
	var snooze *river.JobSnoozeError
	var cancel *river.JobCancelError
	switch {
	case err == nil:
		return JobCompleted
	case errors.As(err, &snooze):
		return JobSnoozed
	case errors.As(err, &cancel):
		return JobCancelled
	}
	return JobFailed
}

// NewClient builds a working River client for a role. Start it with
// client.Start(ctx) and stop it with Stop before closing the pool.
func NewClient(pool *pgxpool.Pool, opts Options) (*Client, error) {
	if opts.Workers == nil {
		return nil, errors.New("queue: a working client needs a Workers bundle")
	}
	queues := make(map[string]river.QueueConfig)
	for _, q := range QueuesFor(opts.Role) {
		n := DefaultConcurrency[q]
		if v, ok := opts.Concurrency[q]; ok {
			n = v
		}
		if n < 1 || n > 10000 {
			return nil, fmt.Errorf("queue: concurrency of queue %q must be 1..10000, got %d", q, n)
		}
		queues[q] = river.QueueConfig{MaxWorkers: n}
		if q == hoard.QueueBot && opts.FetchCooldown == 0 {
			// A delivery or a notice waits for its fetch: River's
			// default cooldown (100 ms) would start each of 30 users'
			// deliveries queued one after the other up to 100 ms late.
			queues[q] = river.QueueConfig{MaxWorkers: n, FetchCooldown: BotFetchCooldown}
		}
	}
	for q := range opts.Concurrency {
		if _, ok := queues[q]; !ok && !slices.Contains(hoard.Queues, q) {
			return nil, fmt.Errorf("queue: unknown queue %q (known: %v)", q, slices.Sorted(maps.Keys(DefaultConcurrency)))
		}
	}
	timeout := opts.JobTimeout
	if timeout == 0 {
		timeout = DefaultJobTimeout
	}
	cfg := &river.Config{
		ID:                  opts.ID,
		Logger:              logger(opts.Logger),
		Workers:             opts.Workers,
		Queues:              queues,
		FetchOnlyKnownKinds: true,
		// Processes insert kinds other processes work: the worker queues
		// notify_subscribers for the bot, a leading bot the worker's
		// periodic jobs.
		SkipUnknownJobCheck: true,
		JobTimeout:          timeout,
		FetchCooldown:       opts.FetchCooldown,
		FetchPollInterval:   opts.FetchPollInterval,
		// Running jobs get this long to finish on shutdown before their
		// contexts are cancelled; every job is safe to interrupt.
		SoftStopTimeout: cmp.Or(opts.SoftStop, DefaultSoftStop),
	}
	cfg.PeriodicJobs = opts.Periodic
	if opts.Jobs != nil {
		cfg.Middleware = []rivertype.Middleware{observeJobs(opts.Jobs)}
	}
	client, err := river.NewClient(riverpgxv5.New(pool), cfg)
	if err != nil {
		return nil, fmt.Errorf("queue: new client: %w", err)
	}
	return client, nil
}

// DefaultSoftStop is how long running jobs get to finish on shutdown
// unless Options.SoftStop says otherwise.
const DefaultSoftStop = 30 * time.Second

// NewInsertOnly builds a client that only enqueues (the web process). Its
// short FetchCooldown paces the insert notifications it sends, so workers
// see new jobs within milliseconds.
func NewInsertOnly(pool *pgxpool.Pool, log *slog.Logger) (*Client, error) {
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Logger:        logger(log),
		FetchCooldown: 20 * time.Millisecond,
	})
	if err != nil {
		return nil, fmt.Errorf("queue: new insert-only client: %w", err)
	}
	return client, nil
}

// InsertBotSends returns the enqueue function of store.QueueBotSends: it
// inserts the bot_send jobs with client in the order's transaction.
func InsertBotSends(ctx context.Context, client *Client) func(tx pgx.Tx, jobs []hoard.BotSendArgs) error {
	return func(tx pgx.Tx, jobs []hoard.BotSendArgs) error {
		if client == nil {
			return errors.New("queue: no client to insert bot sends with")
		}
		params := make([]river.InsertManyParams, len(jobs))
		for i, j := range jobs {
			params[i] = river.InsertManyParams{Args: j}
		}
		if _, err := client.InsertManyTx(ctx, tx, params); err != nil {
			return fmt.Errorf("queue: insert bot sends: %w", err)
		}
		return nil
	}
}

// Stop stops a started client: running jobs get the client's soft-stop time
// to finish, then ctx's deadline; past that their contexts are cancelled.
// Always stop the client before closing its pool.
func Stop(ctx context.Context, client *Client) error {
	if err := client.Stop(ctx); err != nil {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			hard, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			return client.StopAndCancel(hard)
		}
		return fmt.Errorf("queue: stop: %w", err)
	}
	return nil
}

// logger is River's logger: l (or the default) with River's INFO records
// demoted to DEBUG — River reports routine work such as periodic job counts
// at INFO, which would drown the application's own log.
func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		l = slog.Default()
	}
	return slog.New(quieter{l.Handler()})
}

// quieter passes records on one level down at INFO; warnings and errors
// keep their level.
type quieter struct{ slog.Handler }

func demote(l slog.Level) slog.Level {
	if l == slog.LevelInfo {
		return slog.LevelDebug
	}
	return l
}

// Enabled implements slog.Handler.
func (q quieter) Enabled(ctx context.Context, l slog.Level) bool {
	return q.Handler.Enabled(ctx, demote(l))
}

// Handle implements slog.Handler.
func (q quieter) Handle(ctx context.Context, r slog.Record) error {
	r.Level = demote(r.Level)
	return q.Handler.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (q quieter) WithAttrs(attrs []slog.Attr) slog.Handler {
	return quieter{q.Handler.WithAttrs(attrs)}
}

// WithGroup implements slog.Handler.
func (q quieter) WithGroup(name string) slog.Handler { return quieter{q.Handler.WithGroup(name)} }
