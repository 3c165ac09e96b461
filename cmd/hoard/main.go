// Command hoard runs the hoard service: the web application, the ingestion
// worker and the chat bot, together (`hoard serve`) or apart, plus
// migrations, a self-contained demo and the messenger emulator.
//
// Configuration comes from environment variables only (package config and
// README.md). This package is wiring: the parts of the service are built in
// their own packages and put together here.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/hoard/hoard/archive"
	"github.com/hoard/hoard/config"
	"github.com/hoard/hoard/messenger/emulator/emulatorcmd"
	"github.com/hoard/hoard/store"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// defaultAppURL may be baked in at build time:
// go build -ldflags "-X main.defaultAppURL=https://hoard.example.com".
var defaultAppURL = ""

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and failed
	exitUsage   = 2 // bad command line or configuration
)

const usage = `hoard collects archives and documents from messenger channels into one catalog.

Usage: hoard <command> [flags]

Commands:
  serve      web application, worker and bot in one process
  web        the web application only
  worker     the ingestion worker only
  bot        the chat bot only
  migrate    apply database migrations and exit
  doctor     check the accounts, the bot and the channels against the platform before ingesting
  admin      create-admin (one-time administrator link) or invite (invite codes)
  demo       the whole service on this machine with no outside dependencies
  emulator   run the messenger emulator alone
  chat       talk to the bot as a user of the emulator: chat --as alice
  version    print the version

Configuration is read from environment variables; see README.md.
`

func main() {
	config.BuildAppURL = defaultAppURL
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one command and returns the process exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, usage)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "version":
		fmt.Fprintf(stdout, "hoard %s (%s %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return exitOK
	case "serve":
		return runParts(ctx, cmd, rest, getenv, stdout, stderr, parts{web: true, worker: true, bot: true})
	case "web":
		return runParts(ctx, cmd, rest, getenv, stdout, stderr, parts{web: true})
	case "worker":
		return runParts(ctx, cmd, rest, getenv, stdout, stderr, parts{worker: true})
	case "bot":
		return runParts(ctx, cmd, rest, getenv, stdout, stderr, parts{bot: true})
	case "migrate":
		return runMigrate(ctx, rest, getenv, stderr)
	case "doctor":
		return runDoctor(ctx, rest, getenv, stdout, stderr)
	case "demo":
		return runDemo(ctx, rest, getenv, stdout, stderr)
	case "admin":
		return runAdmin(ctx, rest, getenv, stdout, stderr)
	case "emulator":
		return emulatorcmd.RunEmulator(ctx, rest, stdout, stderr)
	case "chat":
		return emulatorcmd.RunChat(ctx, rest, func() (emulatorcmd.ChatConfig, bool) {
			cfg, ok := configOrExit(getenv, stderr)
			return emulatorcmd.ChatConfig{Emulator: cfg.TelegramEmulator, DataDir: cfg.DataDir}, ok
		}, os.Stdin, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "hoard: unknown command %q\n\n%s", cmd, usage)
		return exitUsage
	}
}

// noFlags parses a command that takes no flags, so `hoard migrate --x`
// fails loudly instead of being ignored.
func noFlags(cmd string, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("hoard "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("hoard %s: unexpected argument %q", cmd, fs.Arg(0))
	}
	return nil
}

// configOrExit loads the configuration and reports every problem. It
// also sets what is process-wide by nature: the memory budget of image
// decodes (DECODE_MEMORY_BYTES), shared by the web and the worker.
func configOrExit(getenv func(string) string, stderr io.Writer) (config.Config, bool) {
	cfg, err := config.Load(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "hoard: invalid configuration:\n")
		for _, e := range unjoin(err) {
			fmt.Fprintf(stderr, "  %v\n", e)
		}
		return cfg, false
	}
	archive.SetDecodeBudget(cfg.DecodeMemoryBytes)
	return cfg, true
}

func unjoin(err error) []error {
	var j interface{ Unwrap() []error }
	if errors.As(err, &j) {
		return j.Unwrap()
	}
	return []error{err}
}

func runMigrate(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) int {
	if err := noFlags("migrate", args, stderr); err != nil {
		return exitUsage
	}
	cfg, ok := configOrExit(getenv, stderr)
	if !ok {
		return exitUsage
	}
	a, err := openApp(ctx, cfg, store.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "hoard migrate: %v\n", err)
		return exitFailure
	}
	a.close()
	a.log.Info("migrations are up to date")
	return exitOK
}
