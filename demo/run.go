package demo

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/config"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/telegram"
	"github.com/hoard/hoard/metrics"
	"github.com/hoard/hoard/queue"
	"github.com/hoard/hoard/sessionlease"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/web"
)

// Exit codes Run returns.
const (
	exitOK      = 0
	exitFailure = 1 // the demo ran and failed
	exitUsage   = 2 // bad command line or configuration
)

// AdminEmail is the administrator the demo signs in with.
const AdminEmail = "admin@hoard.local"

// requestRate is the request rate of the demo's emulated account.
const requestRate = 200

// softStop is how long the demo's running jobs get to finish after
// Ctrl-C: a job it interrupts runs again when the demo starts next.
const softStop = 3 * time.Second

// Options is what Run needs of the command that runs it (cmd/hoard wires
// the service; the demo only drives it).
type Options struct {
	Getenv         func(string) string
	Stdout, Stderr io.Writer
	// LoadConfig reads the configuration from getenv and says on Stderr
	// what is wrong with it (false).
	LoadConfig func(getenv func(string) string) (config.Config, bool)
	// Open opens the service on cfg: the database (embedded or
	// DATABASE_URL) migrated, with a pool for a process that runs the bot.
	// close releases it.
	Open func(ctx context.Context, cfg config.Config) (svc *Service, close func(), err error)
}

// Service is the service cmd/hoard opened for the demo: what the demo's
// set-up uses, and the parts it runs.
type Service struct {
	Config  config.Config
	DB      *store.DB
	Logger  *slog.Logger
	Leases  *sessionlease.Holder
	Metrics *metrics.Metrics
	// Database names the database for people (no password).
	Database string
	// Accounts makes the worker's account pool for the configuration.
	Accounts func() (*telegram.AccountPool, error)
	// Serve runs web, worker and bot with the settings until ctx ends;
	// ready, when not nil, gets the web listener's address.
	Serve func(ctx context.Context, s Settings, ready func(addr string)) error
	// StartWorker starts the worker alone (no bot, no web) with the
	// settings.
	StartWorker func(ctx context.Context, s Settings) (*queue.Client, error)
	// ServeMetrics serves METRICS_ADDR, when set, until stop is called;
	// ready, when not nil, gets the listener's address.
	ServeMetrics func(ctx context.Context, ready func(addr string)) (stop func(), err error)
}

// Settings are what the demo changes in the service it runs; the zero
// value changes nothing.
type Settings struct {
	// Accounts are the worker's clients, the demo's account lent to them.
	Accounts *telegram.AccountPool
	// Emulator is the emulator the chat bot connects to.
	Emulator *telegram.EmulatorInfo
	// AccountsNote tells, on the messaging page, how to add an account to
	// the demo's emulator (web.Deps.DemoNote).
	AccountsNote string
	// SoftStop is how long running jobs get to finish on shutdown.
	SoftStop time.Duration
	// Worker tuning of `hoard demo --once`: no scheduled cycles, fast
	// retries and polling (zero values keep the defaults).
	NoSchedule               bool
	RetryBase, LaterRetry    time.Duration
	FetchCooldown, FetchPoll time.Duration
}

// flags are the command line of `hoard demo`.
type flags struct {
	addr, seed   string
	once, linger bool
	noLimit      bool
	rate         float64
}

// Run is `hoard demo`: the whole service on this machine with no outside
// dependencies (the embedded PostgreSQL unless DATABASE_URL is set, an
// AUTH_SECRET generated once into DATA_DIR when none is set, and the
// messenger emulator serving the built-in world), until ctx ends; with
// --once, one ingestion cycle and a JSON summary. It returns the process
// exit code: 0, 1 when the demo failed, 2 for a bad command line or
// configuration.
func Run(ctx context.Context, args []string, o Options) int {
	f, ok := parseFlags(args, o.Stderr)
	if !ok {
		return exitUsage
	}
	cfg, code := demoConfig(f, o)
	if code != exitOK {
		return code
	}
	svc, closeSvc, err := o.Open(ctx, cfg)
	if err != nil {
		fmt.Fprintf(o.Stderr, "hoard demo: %v\n", err)
		return exitFailure
	}
	defer closeSvc()
	password, _, err := readOrCreateSecret(filepath.Join(cfg.DataDir, "demo_admin_password"), 12)
	if err != nil {
		fmt.Fprintf(o.Stderr, "hoard demo: %v\n", err)
		return exitFailure
	}
	if _, err := web.EnsureAdmin(ctx, svc.DB, AdminEmail, password); err != nil {
		fmt.Fprintf(o.Stderr, "hoard demo: create the administrator: %v\n", err)
		return exitFailure
	}
	limiter := messenger.NewLimiter(f.rate, 5)
	switch {
	case f.noLimit:
		limiter = messenger.NewLimiter(0, 1)
	case f.rate == requestRate:
		limiter = nil // the demo's own burst
	case f.rate <= 0:
		fmt.Fprintln(o.Stderr, "hoard demo: --rate must be positive (--no-rate-limit lifts the limit)")
		return exitUsage
	}
	m, err := StartMessenger(ctx, svc, f.seed, limiter)
	if err != nil {
		fmt.Fprintf(o.Stderr, "hoard demo: messenger emulator: %v\n", err)
		return exitFailure
	}
	defer m.Close()
	s, err := m.settings(svc)
	if err != nil {
		fmt.Fprintf(o.Stderr, "hoard demo: %v\n", err)
		return exitFailure
	}
	if f.once {
		return once(ctx, svc, s, m, f.linger, o.Stdout, o.Stderr)
	}
	return serve(ctx, svc, s, m, password, o.Stdout)
}

// parseFlags parses the command line of `hoard demo`.
func parseFlags(args []string, stderr io.Writer) (flags, bool) {
	var f flags
	fset := flag.NewFlagSet("hoard demo", flag.ContinueOnError)
	fset.SetOutput(stderr)
	fset.StringVar(&f.addr, "addr", "", "web listen address (default LISTEN_ADDR or :8080)")
	fset.StringVar(&f.seed, "seed", "", "emulator seed file (needs the messenger emulator)")
	fset.BoolVar(&f.once, "once", false, "run one ingestion cycle and exit (needs the messenger emulator)")
	fset.BoolVar(&f.noLimit, "no-rate-limit", false, "no per-account request limit (benchmarks against the emulator)")
	fset.Float64Var(&f.rate, "rate", requestRate, "requests per second of the demo's account, after a burst of 5 (the platform allows about 10)")
	fset.BoolVar(&f.linger, "linger", false, "with --once and METRICS_ADDR: keep serving the final metrics after the summary until interrupted")
	return f, fset.Parse(args) == nil
}

// demoConfig reads the configuration (--addr overrides LISTEN_ADDR) and
// generates AUTH_SECRET into DATA_DIR when none is set.
func demoConfig(f flags, o Options) (config.Config, int) {
	lookup := func(k string) string {
		if k == "LISTEN_ADDR" && f.addr != "" {
			return f.addr
		}
		return o.Getenv(k)
	}
	cfg, ok := o.LoadConfig(lookup)
	if !ok {
		return cfg, exitUsage
	}
	if cfg.AuthSecret == "" {
		path := filepath.Join(cfg.DataDir, "auth_secret")
		secret, created, err := readOrCreateSecret(path, 48)
		if err != nil {
			fmt.Fprintf(o.Stderr, "hoard demo: %v\n", err)
			return cfg, exitFailure
		}
		cfg.AuthSecret = secret
		if created {
			fmt.Fprintf(o.Stdout, "Generated AUTH_SECRET into %s (kept for later runs).\n", path)
		}
	}
	if err := cfg.CheckAuthSecret(); err != nil {
		fmt.Fprintf(o.Stderr, "hoard demo: %v\n", err)
		return cfg, exitUsage
	}
	return cfg, exitOK
}

// serve runs the whole service until ctx ends, starting an ingestion
// cycle and telling the newcomer where to look once the web listens.
func serve(ctx context.Context, svc *Service, s Settings, m *Messenger, password string, stdout io.Writer) int {
	cfg := svc.Config
	err := svc.Serve(ctx, s, func(addr string) {
		cycle, err := startFirstCycle(ctx, svc)
		if err != nil {
			svc.Logger.Warn("demo: first ingestion cycle", "err", err)
		}
		fmt.Fprintf(stdout, "\nhoard demo is running: %s\n%sSign in as %s with password %s\n(kept in %s unless you change it)\nDatabase: %s\n",
			cfg.AppURL, cycle, AdminEmail, password, filepath.Join(cfg.DataDir, "demo_admin_password"), svc.Database)
		fmt.Fprint(stdout, ChatHint(cfg.DataDir, selfCommand(), m.info))
		fmt.Fprint(stdout, "Stop it with Ctrl-C.\n\n")
	})
	if err != nil {
		svc.Logger.Error("demo stopped with an error", "err", err)
		return exitFailure
	}
	return exitOK
}

// startFirstCycle queues an ingestion cycle as the demo starts, so that the
// catalog fills while its newcomer watches instead of after
// WORKER_INTERVAL_MINUTES (the catalog page says a cycle is running). An
// unfinished cycle absorbs it (IngestCycleArgs is unique while pending), so
// a restart during a cycle adds none.
func startFirstCycle(ctx context.Context, svc *Service) (banner string, err error) {
	client, err := queue.NewInsertOnly(svc.DB.Pool(), svc.Logger)
	if err != nil {
		return "", fmt.Errorf("demo: first cycle: %w", err)
	}
	if _, err := client.Insert(ctx, hoard.IngestCycleArgs{Trigger: hoard.TriggerDemo}, nil); err != nil {
		return "", fmt.Errorf("demo: first cycle: %w", err)
	}
	return cycleBanner(svc.DB.HasPackages(ctx)), nil
}

// cycleBanner says what the demo's first cycle does for a catalog that
// is empty (it fills) or not (a restart: it looks for new posts).
func cycleBanner(full bool, err error) string {
	if err == nil && full {
		return "An ingestion cycle is looking for new posts; the catalog you left is there.\n"
	}
	return "A first ingestion cycle is running: the catalog fills within a minute or two.\n"
}

// readOrCreateSecret reads a secret file or creates it (0600, in a 0755
// directory) with n random bytes, URL-safe base64, and reports whether it
// was created.
func readOrCreateSecret(path string, n int) (secret string, created bool, err error) {
	b, err := os.ReadFile(path)
	if err == nil {
		return strings.TrimSpace(string(b)), false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", false, fmt.Errorf("read %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", false, fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	raw := make([]byte, n)
	if _, err := rand.Read(raw); err != nil {
		return "", false, err
	}
	secret = base64.RawURLEncoding.EncodeToString(raw)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) { // another process won the race
			return readOrCreateSecret(path, n)
		}
		return "", false, fmt.Errorf("create %s: %w", path, err)
	}
	if _, err := f.WriteString(secret + "\n"); err != nil {
		f.Close()
		return "", false, fmt.Errorf("write %s: %w", path, err)
	}
	return secret, true, f.Close()
}

// selfCommand is how a newcomer runs this program from the current
// directory (Command).
func selfCommand() string {
	exe, err := os.Executable()
	if err != nil {
		return "hoard"
	}
	cwd, _ := os.Getwd()
	onPath, _ := exec.LookPath(filepath.Base(exe))
	if onPath != "" {
		onPath, _ = filepath.Abs(onPath)
	}
	return Command(exe, cwd, onPath)
}
