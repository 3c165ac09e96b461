package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/hoard/hoard/demo"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/emulator"
	"github.com/hoard/hoard/messenger/telegram"
	"github.com/hoard/hoard/sessionlease"
	"github.com/hoard/hoard/store"
)

// sessionStore keeps messenger client sessions in PostgreSQL (wrapped in
// messenger.EncryptedStore, so only ciphertext reaches the table).
type sessionStore struct{ db *store.DB }

func (s sessionStore) LoadSession(ctx context.Context, key string) ([]byte, error) {
	return s.db.LoadMessengerSession(ctx, key)
}

func (s sessionStore) SaveSession(ctx context.Context, key string, data []byte) error {
	return s.db.SaveMessengerSession(ctx, key, data)
}

// runEmulator runs the messenger emulator alone:
//
//	hoard emulator --seed FILE [--addr 127.0.0.1:PORT] [--state DIR] [--info FILE]
//
// It writes the info file once the server accepts connections and prints the
// per-method call counters when it stops.
func runEmulator(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hoard emulator", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seedPath := fs.String("seed", "", "seed file (JSON) describing the world (required)")
	addr := fs.String("addr", "127.0.0.1:0", "listen address (port 0 picks a free one)")
	state := fs.String("state", "emulator-state", "state directory (uploads, new posts, server key)")
	info := fs.String("info", "emulator-info.json", "where to write the connection info for TELEGRAM_EMULATOR")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return exitUsage
	}
	if *seedPath == "" {
		fmt.Fprintln(stderr, "hoard emulator: --seed is required")
		return exitUsage
	}
	seed, err := emulator.LoadSeed(*seedPath)
	if err != nil {
		fmt.Fprintf(stderr, "hoard emulator: %v\n", err)
		return exitUsage
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	em, err := emulator.New(emulator.Options{Seed: seed, StateDir: *state, Addr: *addr, Logger: log})
	if err != nil {
		fmt.Fprintf(stderr, "hoard emulator: %v\n", err)
		return exitFailure
	}
	if err := em.Start(ctx); err != nil {
		_ = em.Close()
		fmt.Fprintf(stderr, "hoard emulator: %v\n", err)
		return exitFailure
	}
	if err := em.WriteInfo(*info); err != nil {
		_ = em.Close()
		fmt.Fprintf(stderr, "hoard emulator: %v\n", err)
		return exitFailure
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
	return exitOK
}

// printCounts prints a titled table of counts, sorted by name.
func printCounts(w io.Writer, title string, counts map[string]int) {
	fmt.Fprintln(w, title)
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		fmt.Fprintf(w, "  %-48s %d\n", k, counts[k])
	}
}

// demoMessenger is the emulator of `hoard demo` (in-process, or another
// process's when TELEGRAM_EMULATOR is set) and the clients signed in to it.
type demoMessenger struct {
	em      *emulator.Emulator // nil: the emulator of TELEGRAM_EMULATOR
	info    emulator.Info
	account *telegram.Account
	// limiter is the account's: its Waits count the account's requests.
	limiter *messenger.Limiter
	// accountID is the account row the emulator's account signed in as.
	accountID int64
	// lease is this process's hold on the account's session.
	lease *sessionlease.Lease
}

func (d *demoMessenger) close() {
	if d.account != nil {
		_ = d.account.Close()
	}
	if d.lease != nil {
		d.lease.Release(context.Background())
	}
	if d.em != nil {
		_ = d.em.Close()
	}
}

// demoRequestRate is the request rate of the demo's emulated account.
const demoRequestRate = 200

// startDemoMessenger starts the emulator with its state under
// DATA_DIR/emulator (the built-in world unless seedPath is set), signs the
// seeded account in (with the emulator's code), configures the destination
// channel and every seeded channel as an active source with its category
// (the chat bot connects later, in serve). With TELEGRAM_EMULATOR set it
// starts none and uses
// that emulator, which must serve the world of seedPath (channels are found
// by username there). limiter paces the account (nil: demoRequestRate).
func (a *app) startDemoMessenger(ctx context.Context, seedPath string, limiter *messenger.Limiter) (*demoMessenger, error) {
	// The emulator runs on this machine: the demo account is not held to
	// the platform's pace (10 requests/s, about 5 MiB/s up), or the demo's
	// 2.3 GB file would take ten minutes to publish.
	d := &demoMessenger{limiter: limiter}
	if limiter == nil {
		d.limiter = messenger.NewLimiter(demoRequestRate, 50)
	}
	if a.cfg.TelegramEmulator != "" {
		if seedPath == "" {
			return nil, errors.New("TELEGRAM_EMULATOR needs --seed: the world the emulator serves")
		}
		seed, err := emulator.LoadSeed(seedPath)
		if err != nil {
			return nil, err
		}
		info, err := telegram.LoadEmulatorInfo(a.cfg.TelegramEmulator)
		if err != nil {
			return nil, fmt.Errorf("TELEGRAM_EMULATOR: %w", err)
		}
		d.info = emulatorInfo(info)
		if err := a.setupDemoMessenger(ctx, d, seed); err != nil {
			d.close()
			return nil, err
		}
		return d, nil
	}
	dir := filepath.Join(a.cfg.DataDir, "emulator")
	if seedPath == "" {
		var err error
		if seedPath, err = demo.WriteWorld(filepath.Join(dir, "world")); err != nil {
			return nil, err
		}
	}
	seed, err := emulator.LoadSeed(seedPath)
	if err != nil {
		return nil, err
	}
	if d.em, err = startDemoEmulator(ctx, seed, dir, a.log); err != nil {
		return nil, err
	}
	if err := d.em.WriteInfo(filepath.Join(dir, "info.json")); err != nil {
		d.close()
		return nil, err
	}
	d.info = d.em.Info()
	if err := a.setupDemoMessenger(ctx, d, seed); err != nil {
		d.close()
		return nil, err
	}
	return d, nil
}

// setupDemoMessenger signs the emulator's account in with a client of
// this process and sets the seed's channels up (package demo).
func (a *app) setupDemoMessenger(ctx context.Context, d *demoMessenger, seed *emulator.Seed) error {
	info := d.info
	sessions, err := messenger.NewEncryptedStore(sessionStore{a.db}, a.cfg.AuthSecret)
	if err != nil {
		return err
	}
	appID := a.cfg.TelegramAppID
	if appID == 0 {
		appID = 1 // the emulator accepts any application
	}
	base := telegram.Config{AppID: appID, AppHash: a.cfg.TelegramAppHash, Logger: a.log, Sessions: sessions, StallTimeout: a.cfg.DownloadStall,
		Endpoint: telegramInfo(info).Endpoint()}
	if base.AppHash == "" {
		base.AppHash = "demo"
	}

	accountID, err := demo.AccountRow(ctx, a.db, info.Phone)
	if err != nil {
		return err
	}
	d.accountID = accountID
	cfg := base
	cfg.SessionKey = accountSessionKey(accountID)
	if d.lease, err = a.leases.Wait(ctx, cfg.SessionKey); err != nil {
		return fmt.Errorf("demo: account session: %w", err)
	}
	cfg.Limiter = d.limiter
	cfg.Observer = a.metrics.Platform(platformLabel(accountID))
	if d.account, err = telegram.NewAccount(ctx, cfg); err != nil {
		return fmt.Errorf("demo: account client: %w", err)
	}
	self, err := demo.SignIn(ctx, a.db, accountID, d.account, info, seed)
	if err != nil {
		return err
	}
	if err := demo.Channels(ctx, a.db, accountID, d.account, d.em, seed, a.log); err != nil {
		return err
	}
	a.log.Info("demo messenger ready", "emulator", info.Addr, "account", self.ID, "channels", len(seed.Channels))
	return nil
}

// startDemoEmulator starts the demo's emulator with its state in dir, on
// the addresses its last run listened on (info.json) when they are free,
// so that a `hoard chat` left open across a restart reconnects; else on
// free ports.
func startDemoEmulator(ctx context.Context, seed *emulator.Seed, dir string, log *slog.Logger) (*emulator.Emulator, error) {
	opts := emulator.Options{Seed: seed, StateDir: filepath.Join(dir, "state"), Logger: log}
	if last, ok := lastEmulatorAddrs(filepath.Join(dir, "info.json")); ok {
		withLast := opts
		withLast.Addr, withLast.DCAddrs = last[emulator.EntryDC], last
		em, err := startEmulator(ctx, withLast)
		if err == nil {
			return em, nil
		}
		log.Info("demo: the emulator's last addresses are taken; listening on others", "err", err)
	}
	return startEmulator(ctx, opts)
}

// startEmulator makes an emulator and starts it, closing it when it cannot
// listen.
func startEmulator(ctx context.Context, opts emulator.Options) (*emulator.Emulator, error) {
	em, err := emulator.New(opts)
	if err != nil {
		return nil, err
	}
	if err := em.Start(ctx); err != nil {
		_ = em.Close()
		return nil, err
	}
	return em, nil
}

// lastEmulatorAddrs reads the DCs' addresses from an emulator's info file.
func lastEmulatorAddrs(path string) (map[int]string, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	var info emulator.Info
	if json.Unmarshal(data, &info) != nil || info.Addr == "" {
		return nil, false
	}
	addrs := map[int]string{emulator.EntryDC: info.Addr}
	for _, dc := range info.DCs {
		addrs[dc.ID] = dc.Addr
	}
	return addrs, true
}
