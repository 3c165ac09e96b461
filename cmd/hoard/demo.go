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
	"path/filepath"
	"strings"
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
	if err := fset.Parse(args); err != nil {
		return exitUsage
	}
	if *seed != "" || *once {
		fmt.Fprintln(stderr, "hoard demo: --seed and --once are not available yet: they need the messenger emulator (issue #3) and ingestion (issue #4)")
		return exitFailure
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
		secret, created, err := demoSecret(cfg.DataDir)
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
	a, err := openApp(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "hoard demo: %v\n", err)
		return exitFailure
	}
	defer a.close()
	err = a.serve(ctx, parts{web: true, worker: true, bot: true}, func(addr string) {
		fmt.Fprintf(stdout, "\nhoard demo is running: %s\nDatabase: %s\nStop it with Ctrl-C.\n\n", a.cfg.AppURL, a.dbDesc)
	})
	if err != nil {
		a.log.Error("demo stopped with an error", "err", err)
		return exitFailure
	}
	return exitOK
}

// demoSecret reads DATA_DIR/auth_secret or creates it (0600) with 48 random
// bytes, and reports whether it was created.
func demoSecret(dataDir string) (secret string, created bool, err error) {
	path := filepath.Join(dataDir, "auth_secret")
	b, err := os.ReadFile(path)
	if err == nil {
		return strings.TrimSpace(string(b)), false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", false, fmt.Errorf("read %s: %w", path, err)
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return "", false, fmt.Errorf("create DATA_DIR: %w", err)
	}
	raw := make([]byte, 48)
	if _, err := rand.Read(raw); err != nil {
		return "", false, err
	}
	secret = base64.RawURLEncoding.EncodeToString(raw)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) { // another process won the race
			return demoSecret(dataDir)
		}
		return "", false, fmt.Errorf("create %s: %w", path, err)
	}
	if _, err := f.WriteString(secret + "\n"); err != nil {
		f.Close()
		return "", false, fmt.Errorf("write %s: %w", path, err)
	}
	return secret, true, f.Close()
}
