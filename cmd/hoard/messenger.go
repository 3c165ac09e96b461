package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/emulator"
	"github.com/hoard/hoard/messenger/telegram"
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
	counts, busiest := em.CallCounts(), em.MostRequestsPerSecond()
	_ = em.Close()
	fmt.Fprintln(stdout, "most requests in one second, per user:")
	for _, u := range slices.Sorted(maps.Keys(busiest)) {
		fmt.Fprintf(stdout, "  %-36s %d\n", u, busiest[u])
	}
	fmt.Fprintln(stdout, "calls per method:")
	for _, m := range slices.Sorted(maps.Keys(counts)) {
		fmt.Fprintf(stdout, "  %-36s %d\n", m, counts[m])
	}
	return exitOK
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
}

func (d *demoMessenger) close() {
	if d.account != nil {
		_ = d.account.Close()
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
// by username there). noLimit lifts the account's request limit.
func (a *app) startDemoMessenger(ctx context.Context, seedPath string, noLimit bool) (*demoMessenger, error) {
	// The emulator runs on this machine: the demo account is not held to
	// the platform's pace (10 requests/s, about 5 MiB/s up), or the demo's
	// 2.3 GB file would take ten minutes to publish.
	d := &demoMessenger{limiter: messenger.NewLimiter(demoRequestRate, 50)}
	if noLimit {
		d.limiter = messenger.NewLimiter(0, 1)
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
		d.info = emulator.Info{Addr: info.Addr, DC: info.DC, PublicKeys: info.PublicKeys, Phone: info.Phone,
			Code: info.Code, BotToken: info.BotToken, BotUsername: info.BotUsername}
		for _, u := range info.Users {
			d.info.Users = append(d.info.Users, emulator.InfoUser{Phone: u.Phone, Username: u.Username, FirstName: u.FirstName})
		}
		if err := a.setupDemoMessenger(ctx, d, seed); err != nil {
			d.close()
			return nil, err
		}
		return d, nil
	}
	dir := filepath.Join(a.cfg.DataDir, "emulator")
	if seedPath == "" {
		var err error
		if seedPath, err = writeDemoWorld(filepath.Join(dir, "world")); err != nil {
			return nil, err
		}
	}
	seed, err := emulator.LoadSeed(seedPath)
	if err != nil {
		return nil, err
	}
	d.em, err = emulator.New(emulator.Options{Seed: seed, StateDir: filepath.Join(dir, "state"), Logger: a.log})
	if err != nil {
		return nil, err
	}
	if err := d.em.Start(ctx); err != nil {
		d.close()
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
		Endpoint: telegram.EmulatorInfo{Addr: info.Addr, DC: info.DC, PublicKeys: info.PublicKeys}.Endpoint()}
	if base.AppHash == "" {
		base.AppHash = "demo"
	}

	acc, err := a.db.FindAccountByPhone(ctx, info.Phone)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		acc, err = a.db.CreateAccount(ctx, info.Phone)
	}
	if err != nil {
		return err
	}
	d.accountID = acc.ID
	cfg := base
	cfg.SessionKey = "account:" + strconv.FormatInt(acc.ID, 10)
	cfg.Limiter = d.limiter
	cfg.Observer = a.metrics.Platform(platformLabel(acc.ID))
	if d.account, err = telegram.NewAccount(ctx, cfg); err != nil {
		return fmt.Errorf("demo: account client: %w", err)
	}
	ok, err := d.account.Authorized(ctx)
	if err != nil {
		return fmt.Errorf("demo: account status: %w", err)
	}
	if !ok {
		if err := d.account.SendCode(ctx, info.Phone); err != nil {
			return fmt.Errorf("demo: send login code: %w", err)
		}
		err := d.account.SignIn(ctx, info.Code)
		if errors.Is(err, messenger.ErrPasswordNeeded) {
			err = d.account.CheckPassword(ctx, seed.Account.Password)
		}
		if err != nil {
			_ = a.db.SetAccountAuthState(ctx, acc.ID, hoard.AuthFailed, hoard.ErrorMessage(err))
			return fmt.Errorf("demo: sign in: %w", err)
		}
	}
	self, err := d.account.Self(ctx)
	if err != nil {
		return fmt.Errorf("demo: self: %w", err)
	}
	if err := a.db.SetAccountProfile(ctx, acc.ID, self.ID, self.FirstName, self.Premium); err != nil {
		return err
	}
	if err := a.db.SetAccountAuthState(ctx, acc.ID, hoard.AuthAuthenticated, ""); err != nil {
		return err
	}

	// find reads a seeded channel: by id and the access hash the
	// in-process emulator tells, or by username from another process's.
	find := func(title, username string, dest bool) (messenger.Channel, error) {
		if d.em == nil {
			if username == "" {
				return messenger.Channel{}, fmt.Errorf("channel %q has no username to find it by", title)
			}
			return d.account.ResolveChannel(ctx, messenger.ChannelRef{Username: username})
		}
		id := d.em.ChannelID(title)
		if dest {
			id = d.em.DestinationID()
		}
		return d.account.ChannelInfo(ctx, messenger.Channel{ID: id, AccessHash: d.em.AccountAccessHash(id)})
	}
	link := func(ch messenger.Channel, kind hoard.ChannelKind, role hoard.MapRole, category string) (*hoard.Channel, error) {
		row := &hoard.Channel{PlatformID: ch.ID, Title: ch.Title, Username: ch.Username, Kind: kind, Category: category,
			IsActive: true, IsForum: ch.Forum, IsProtected: ch.Protected}
		if err := a.db.UpsertChannel(ctx, row); err != nil {
			return nil, err
		}
		if _, err := a.db.UpsertChannelMap(ctx, acc.ID, row.ID, ch.AccessHash, role); err != nil {
			return nil, err
		}
		return row, nil
	}
	dest, err := find(seed.Destination.Title, seed.Destination.Username, true)
	if err != nil {
		return fmt.Errorf("demo: destination channel: %w", err)
	}
	if _, err := link(dest, hoard.ChannelDestination, hoard.MapWriter, ""); err != nil {
		return fmt.Errorf("demo: destination channel: %w", err)
	}
	for _, sc := range seed.Channels {
		if !sc.Joined {
			ref := messenger.ChannelRef{Username: sc.Username, InviteHash: sc.Invite}
			if _, status, err := d.account.JoinChannel(ctx, ref); err != nil || status == messenger.RequestSent {
				a.log.Warn("demo: could not join a seeded channel", "channel", sc.Title, "status", status, "err", err)
				continue
			}
		}
		ch, err := find(sc.PlatformTitle(), sc.Username, false)
		if err == nil {
			_, err = link(ch, hoard.ChannelSource, hoard.MapReader, sc.Category)
		}
		if err != nil {
			a.log.Warn("demo: seeded channel not set up", "channel", sc.Title, "err", err)
		}
	}

	a.log.Info("demo messenger ready", "emulator", info.Addr, "account", self.ID, "channels", len(seed.Channels))
	return nil
}
