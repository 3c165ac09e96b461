package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/hoard/hoard/demo"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/web"
)

// runDemo runs the whole service on this machine with no outside
// dependencies: the embedded PostgreSQL unless DATABASE_URL is set, and an
// AUTH_SECRET generated once into DATA_DIR when none is set.
func runDemo(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("hoard demo", flag.ContinueOnError)
	fset.SetOutput(stderr)
	addr := fset.String("addr", "", "web listen address (default LISTEN_ADDR or :8080)")
	seed := fset.String("seed", "", "emulator seed file (needs the messenger emulator)")
	once := fset.Bool("once", false, "run one ingestion cycle and exit (needs the messenger emulator)")
	noLimit := fset.Bool("no-rate-limit", false, "no per-account request limit (benchmarks against the emulator)")
	rate := fset.Float64("rate", demoRequestRate, "requests per second of the demo's account, after a burst of 5 (the platform allows about 10)")
	linger := fset.Bool("linger", false, "with --once and METRICS_ADDR: keep serving the final metrics after the summary until interrupted")
	if err := fset.Parse(args); err != nil {
		return exitUsage
	}
	env := map[string]string{}
	if *addr != "" {
		env["LISTEN_ADDR"] = *addr
	}
	lookup := func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return getenv(k)
	}
	cfg, ok := configOrExit(lookup, stderr)
	if !ok {
		return exitUsage
	}
	if cfg.AuthSecret == "" {
		secret, created, err := readOrCreateSecret(filepath.Join(cfg.DataDir, "auth_secret"), 48)
		if err != nil {
			fmt.Fprintf(stderr, "hoard demo: %v\n", err)
			return exitFailure
		}
		cfg.AuthSecret = secret
		if created {
			fmt.Fprintf(stdout, "Generated AUTH_SECRET into %s (kept for later runs).\n", filepath.Join(cfg.DataDir, "auth_secret"))
		}
	}
	if err := cfg.checkAuthSecret(); err != nil {
		fmt.Fprintf(stderr, "hoard demo: %v\n", err)
		return exitUsage
	}
	a, err := openApp(ctx, cfg, botPool(cfg.newLogger()))
	if err != nil {
		fmt.Fprintf(stderr, "hoard demo: %v\n", err)
		return exitFailure
	}
	defer a.close()
	password, _, err := readOrCreateSecret(filepath.Join(cfg.DataDir, "demo_admin_password"), 12)
	if err != nil {
		fmt.Fprintf(stderr, "hoard demo: %v\n", err)
		return exitFailure
	}
	if _, err := web.EnsureAdmin(ctx, a.db, demoAdminEmail, password); err != nil {
		fmt.Fprintf(stderr, "hoard demo: create the administrator: %v\n", err)
		return exitFailure
	}
	limiter := messenger.NewLimiter(*rate, 5)
	switch {
	case *noLimit:
		limiter = messenger.NewLimiter(0, 1)
	case *rate == demoRequestRate:
		limiter = nil // the demo's own burst
	case *rate <= 0:
		fmt.Fprintln(stderr, "hoard demo: --rate must be positive (--no-rate-limit lifts the limit)")
		return exitUsage
	}
	dm, err := a.startDemoMessenger(ctx, *seed, limiter)
	if err != nil {
		fmt.Fprintf(stderr, "hoard demo: messenger emulator: %v\n", err)
		return exitFailure
	}
	defer dm.close()
	clients, err := a.newAccountClients()
	if err != nil {
		fmt.Fprintf(stderr, "hoard demo: %v\n", err)
		return exitFailure
	}
	clients.lend(dm.accountID, dm.account, dm.lease)
	clients.useEmulator(dm.info)
	a.clients, a.demoNote = clients, demo.AccountsNote(dm.info)
	// Ctrl-C stops the demo within seconds: a job it interrupts runs again
	// from where it stood when the demo starts next.
	a.softStop = demoSoftStop
	a.emulator = telegramInfo(dm.info)
	if *once {
		return a.demoOnce(ctx, dm, *linger, stdout, stderr)
	}
	err = a.serve(ctx, parts{web: true, worker: true, bot: true}, func(addr string) {
		cycle, err := a.startFirstCycle(ctx)
		if err != nil {
			a.log.Warn("demo: first ingestion cycle", "err", err)
		}
		fmt.Fprintf(stdout, "\nhoard demo is running: %s\n%sSign in as %s with password %s\n(kept in %s unless you change it)\nDatabase: %s\n",
			a.cfg.AppURL, cycle, demoAdminEmail, password, filepath.Join(cfg.DataDir, "demo_admin_password"), a.dbDesc)
		fmt.Fprint(stdout, demo.ChatHint(cfg.DataDir, selfCommand(), dm.info))
		fmt.Fprint(stdout, "Stop it with Ctrl-C.\n\n")
	})
	if err != nil {
		a.log.Error("demo stopped with an error", "err", err)
		return exitFailure
	}
	return exitOK
}

// demoAdminEmail is the administrator the demo signs in with.
const demoAdminEmail = "admin@hoard.local"

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
// directory (demo.Command).
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
	return demo.Command(exe, cwd, onPath)
}

// demoSoftStop is how long the demo's running jobs get to finish after
// Ctrl-C: a job it interrupts runs again when the demo starts next.
const demoSoftStop = 3 * time.Second
