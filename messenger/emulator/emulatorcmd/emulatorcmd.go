// Package emulatorcmd holds the commands that run beside the messenger
// emulator: `hoard emulator` (the emulator alone, for other processes to
// talk to) and `hoard chat` (a terminal client of the bot for the
// emulator's seeded users, on the real messenger client). cmd/hoard parses
// nothing of theirs: each command takes its arguments and returns the
// process exit code.
package emulatorcmd

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"

	"github.com/hoard/hoard/messenger/emulator"
)

// Exit codes the commands return.
const (
	ExitOK      = 0
	ExitFailure = 1 // the command ran and failed
	ExitUsage   = 2 // bad command line or configuration
)

// RunEmulator runs the messenger emulator alone until ctx ends:
//
//	hoard emulator --seed FILE [--addr 127.0.0.1:PORT] [--state DIR] [--info FILE]
//
// It writes the info file once the server accepts connections and prints the
// per-method call counters when it stops.
func RunEmulator(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hoard emulator", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seedPath := fs.String("seed", "", "seed file (JSON) describing the world (required)")
	addr := fs.String("addr", "127.0.0.1:0", "listen address (port 0 picks a free one)")
	state := fs.String("state", "emulator-state", "state directory (uploads, new posts, server key)")
	info := fs.String("info", "emulator-info.json", "where to write the connection info for TELEGRAM_EMULATOR")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return ExitUsage
	}
	if *seedPath == "" {
		fmt.Fprintln(stderr, "hoard emulator: --seed is required")
		return ExitUsage
	}
	seed, err := emulator.LoadSeed(*seedPath)
	if err != nil {
		fmt.Fprintf(stderr, "hoard emulator: %v\n", err)
		return ExitUsage
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	em, err := start(ctx, emulator.Options{Seed: seed, StateDir: *state, Addr: *addr, Logger: log}, *info)
	if err != nil {
		fmt.Fprintf(stderr, "hoard emulator: %v\n", err)
		return ExitFailure
	}
	fmt.Fprintf(stdout, "emulator listening on %s; info in %s (TELEGRAM_EMULATOR=%s)\n", em.Addr(), *info, *info)
	<-ctx.Done()
	counts, busiest, floods := em.CallCounts(), em.MostRequestsPerSecond(), em.UserFloodWaits()
	botFloods, refused, killed := em.BotFloodTrips(), em.Refusals(), em.KeysKilled()
	_ = em.Close()
	fmt.Fprintf(stdout, "auth keys killed for being used from two places at once (AUTH_KEY_DUPLICATED): %d\n", killed)
	printCounts(stdout, "most requests in one second, per user:", busiest)
	printCounts(stdout, "calls per method:", counts)
	printCounts(stdout, "flood waits answered per method (the account's flood model):", floods)
	fmt.Fprintf(stdout, "flood waits answered to the bot: %d\n", botFloods)
	printCounts(stdout, "errors answered, per method and error:", refused)
	return ExitOK
}

// start makes an emulator, starts it and writes its info file, closing
// it when any step fails.
func start(ctx context.Context, opts emulator.Options, infoPath string) (*emulator.Emulator, error) {
	em, err := emulator.Run(ctx, opts)
	if err != nil {
		return nil, err
	}
	if err := em.WriteInfo(infoPath); err != nil {
		_ = em.Close()
		return nil, err
	}
	return em, nil
}

// printCounts prints a titled table of counts, sorted by name.
func printCounts(w io.Writer, title string, counts map[string]int) {
	fmt.Fprintln(w, title)
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		fmt.Fprintf(w, "  %-48s %d\n", k, counts[k])
	}
}
