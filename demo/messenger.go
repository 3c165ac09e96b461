package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/emulator"
	"github.com/hoard/hoard/messenger/telegram"
	"github.com/hoard/hoard/sessionlease"
)

// Messenger is the emulator of `hoard demo` (in-process, or another
// process's when TELEGRAM_EMULATOR is set) and the account's client signed
// in to it.
type Messenger struct {
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

// Close closes the account's client, releases its session and stops an
// emulator StartMessenger started.
func (m *Messenger) Close() {
	if m.account != nil {
		_ = m.account.Close()
	}
	if m.lease != nil {
		m.lease.Release(context.Background())
	}
	if m.em != nil {
		_ = m.em.Close()
	}
}

// StartMessenger starts the emulator with its state under
// DATA_DIR/emulator (the built-in world unless seedPath is set), signs the
// seeded account in (with the emulator's code), configures the destination
// channel and every seeded channel as an active source with its category
// (the chat bot connects later, in Service.Serve). With TELEGRAM_EMULATOR
// set it starts none and uses that emulator, which must serve the world of
// seedPath (channels are found by username there). limiter paces the
// account (nil: the demo's pace, far above the platform's: the emulator
// runs on this machine, and the demo's 2.3 GB file would take ten minutes
// to publish at the platform's).
func StartMessenger(ctx context.Context, svc *Service, seedPath string, limiter *messenger.Limiter) (*Messenger, error) {
	m := &Messenger{limiter: limiter}
	if limiter == nil {
		m.limiter = messenger.NewLimiter(requestRate, 50)
	}
	var seed *emulator.Seed
	var err error
	if path := svc.Config.TelegramEmulator; path != "" {
		if seedPath == "" {
			return nil, errors.New("TELEGRAM_EMULATOR needs --seed: the world the emulator serves")
		}
		if seed, err = emulator.LoadSeed(seedPath); err != nil {
			return nil, err
		}
		info, err := telegram.LoadEmulatorInfo(path)
		if err != nil {
			return nil, fmt.Errorf("TELEGRAM_EMULATOR: %w", err)
		}
		m.info = emulatorInfo(info)
	} else if seed, err = m.startEmulator(ctx, svc, seedPath); err != nil {
		return nil, err
	}
	if err := m.setup(ctx, svc, seed); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// startEmulator starts the demo's own emulator with its state in
// DATA_DIR/emulator and reads its seed (the built-in world, written there,
// unless seedPath is set).
func (m *Messenger) startEmulator(ctx context.Context, svc *Service, seedPath string) (*emulator.Seed, error) {
	dir := filepath.Join(svc.Config.DataDir, "emulator")
	if seedPath == "" {
		var err error
		if seedPath, err = WriteWorld(filepath.Join(dir, "world")); err != nil {
			return nil, err
		}
	}
	seed, err := emulator.LoadSeed(seedPath)
	if err != nil {
		return nil, err
	}
	if m.em, err = startEmulator(ctx, seed, dir, svc.Logger); err != nil {
		return nil, err
	}
	if err := m.em.WriteInfo(filepath.Join(dir, "info.json")); err != nil {
		m.Close()
		return nil, err
	}
	m.info = m.em.Info()
	return seed, nil
}

// setup signs the emulator's account in with a client of this process,
// under its session's lease, and sets the seed's channels up.
func (m *Messenger) setup(ctx context.Context, svc *Service, seed *emulator.Seed) error {
	cfg := svc.Config
	sessions, err := telegram.StoredSessions(svc.DB, cfg.AuthSecret)
	if err != nil {
		return err
	}
	tc := telegram.Config{AppID: cfg.TelegramAppID, AppHash: cfg.TelegramAppHash, Logger: svc.Logger, Sessions: sessions,
		StallTimeout: cfg.DownloadStall, Endpoint: telegramInfo(m.info).Endpoint()}
	if tc.AppID == 0 {
		tc.AppID = 1 // the emulator accepts any application
	}
	if tc.AppHash == "" {
		tc.AppHash = "demo"
	}
	if m.accountID, err = AccountRow(ctx, svc.DB, m.info.Phone); err != nil {
		return err
	}
	tc.SessionKey = telegram.AccountSessionKey(m.accountID)
	if m.lease, err = svc.Leases.Wait(ctx, tc.SessionKey); err != nil {
		return fmt.Errorf("demo: account session: %w", err)
	}
	tc.Limiter = m.limiter
	tc.Observer = svc.Metrics.Account(m.accountID)
	if m.account, err = telegram.NewAccount(ctx, tc); err != nil {
		return fmt.Errorf("demo: account client: %w", err)
	}
	self, err := SignIn(ctx, svc.DB, m.accountID, m.account, m.info, seed)
	if err != nil {
		return err
	}
	if err := Channels(ctx, svc.DB, m.accountID, m.account, m.em, seed, svc.Logger); err != nil {
		return err
	}
	svc.Logger.Info("demo messenger ready", "emulator", m.info.Addr, "account", self.ID, "channels", len(seed.Channels))
	return nil
}

// settings are the service's settings for the demo: the worker's clients
// with the demo's account lent to them (and accounts added later pointed
// at the emulator), the bot on the emulator, and Ctrl-C stopping the demo
// within seconds (a job it interrupts runs again from where it stood when
// the demo starts next).
func (m *Messenger) settings(svc *Service) (Settings, error) {
	clients, err := svc.Accounts()
	if err != nil {
		return Settings{}, err
	}
	clients.Lend(m.accountID, m.account, m.lease)
	info := telegramInfo(m.info)
	clients.UseEmulator(*info)
	return Settings{Accounts: clients, Emulator: info, AccountsNote: AccountsNote(m.info), SoftStop: softStop}, nil
}

// startEmulator starts the demo's emulator with its state in dir, on
// the addresses its last run listened on (info.json) when they are free,
// so that a `hoard chat` left open across a restart reconnects; else on
// free ports.
func startEmulator(ctx context.Context, seed *emulator.Seed, dir string, log *slog.Logger) (*emulator.Emulator, error) {
	opts := emulator.Options{Seed: seed, StateDir: filepath.Join(dir, "state"), Logger: log}
	if last, ok := lastEmulatorAddrs(filepath.Join(dir, "info.json")); ok {
		withLast := opts
		withLast.Addr, withLast.DCAddrs = last[emulator.EntryDC], last
		em, err := emulator.Run(ctx, withLast)
		if err == nil {
			return em, nil
		}
		log.Info("demo: the emulator's last addresses are taken; listening on others", "err", err)
	}
	return emulator.Run(ctx, opts)
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

// telegramInfo is an emulator's info as the telegram adapter reads it.
func telegramInfo(in emulator.Info) *telegram.EmulatorInfo {
	out := &telegram.EmulatorInfo{Addr: in.Addr, DC: in.DC, PublicKeys: in.PublicKeys, Phone: in.Phone, Code: in.Code,
		BotToken: in.BotToken, BotUsername: in.BotUsername}
	for _, d := range in.DCs {
		out.DCs = append(out.DCs, telegram.EmulatorDC{ID: d.ID, Addr: d.Addr})
	}
	for _, u := range in.Users {
		out.Users = append(out.Users, telegram.EmulatorUser{Phone: u.Phone, Username: u.Username, FirstName: u.FirstName})
	}
	return out
}

// emulatorInfo is the adapter's reading of an emulator's info file as the
// emulator writes it (the inverse of telegramInfo).
func emulatorInfo(in telegram.EmulatorInfo) emulator.Info {
	out := emulator.Info{Addr: in.Addr, DC: in.DC, PublicKeys: in.PublicKeys, Phone: in.Phone, Code: in.Code,
		BotToken: in.BotToken, BotUsername: in.BotUsername}
	for _, d := range in.DCs {
		out.DCs = append(out.DCs, emulator.InfoDC{ID: d.ID, Addr: d.Addr})
	}
	for _, u := range in.Users {
		out.Users = append(out.Users, emulator.InfoUser{Phone: u.Phone, Username: u.Username, FirstName: u.FirstName})
	}
	return out
}
