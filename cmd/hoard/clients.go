package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gotd/td/tgerr"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/telegram"
	"github.com/hoard/hoard/sessionlease"
	"github.com/hoard/hoard/store"
)

// accountClients connects the messenger clients of the worker's accounts
// on first use and keeps them for the process (implements jobs.Accounts and
// jobs.Logins). Sessions come from PostgreSQL, encrypted with AUTH_SECRET.
//
// An account's session is used by one process at a time: a client is
// connected only under the session's lease (package sessionlease), and the
// process keeps it while it lives, so the account's work runs here;
// another process that needs the account gets an error matching
// sessionlease.ErrBusy (its jobs snooze) until this one stops. A client
// whose lease is lost is closed at once. A signed-in session the platform
// ends (401, or 406 AUTH_KEY_DUPLICATED) puts the account into EXPIRED with
// a notification, and nothing asks the platform with it again until an
// administrator signs it in anew.
type accountClients struct {
	db     *store.DB
	leases *sessionlease.Holder
	log    *slog.Logger
	base   telegram.Config
	// observe gives the metrics' observer of an account's requests.
	observe func(accountID int64) messenger.RequestObserver
	// limiter gives an account's request limiter, shared with every
	// process on the database.
	limiter func(accountID int64) *messenger.Limiter
	mu      sync.Mutex
	open    map[int64]*telegram.Account
	// logins are clients of accounts not signed in yet; one that signs in
	// moves to open on its next use.
	logins map[int64]*telegram.Account
	// borrowed clients belong to someone else, who closes them.
	borrowed map[int64]bool
	// held are the session leases of the clients in open and logins.
	held map[int64]*sessionlease.Lease
	// signedIn marks the clients in open, whose sign-out is recorded.
	signedIn map[int64]*atomic.Bool
}

// newAccountClients prepares clients for the configured platform: the
// emulator of TELEGRAM_EMULATOR, or the real one with TELEGRAM_APP_ID and
// TELEGRAM_APP_HASH.
func (a *app) newAccountClients() (*accountClients, error) {
	sessions, err := messenger.NewEncryptedStore(sessionStore{a.db}, a.cfg.AuthSecret)
	if err != nil {
		return nil, err
	}
	base := telegram.Config{AppID: a.cfg.TelegramAppID, AppHash: a.cfg.TelegramAppHash, Logger: a.log, Sessions: sessions, StallTimeout: a.cfg.DownloadStall}
	if a.cfg.TelegramEmulator != "" {
		info, err := telegram.LoadEmulatorInfo(a.cfg.TelegramEmulator)
		if err != nil {
			return nil, fmt.Errorf("TELEGRAM_EMULATOR: %w", err)
		}
		base.Endpoint = info.Endpoint()
		if base.AppID == 0 {
			base.AppID, base.AppHash = 1, "emulator"
		}
	}
	observe := func(id int64) messenger.RequestObserver { return a.metrics.Platform(platformLabel(id)) }
	// One messenger account's pace holds across every worker process:
	// its tokens are reserved in PostgreSQL (store.Pacer), a few at a time.
	pacer := store.NewPacer(a.db)
	limiter := func(id int64) *messenger.Limiter {
		return messenger.NewSharedLimiter(pacer, "account:"+strconv.FormatInt(id, 10), a.cfg.AccountRate, a.cfg.AccountBurst)
	}
	return &accountClients{db: a.db, leases: a.leases, log: a.log, base: base, observe: observe, limiter: limiter,
		open: map[int64]*telegram.Account{}, logins: map[int64]*telegram.Account{}, borrowed: map[int64]bool{},
		held: map[int64]*sessionlease.Lease{}, signedIn: map[int64]*atomic.Bool{}}, nil
}

// accountSessionKey is where an account's session is stored, and the name
// of its lease.
func accountSessionKey(accountID int64) string { return "account:" + strconv.FormatInt(accountID, 10) }

// lend registers a client connected and closed by someone else (the
// demo's), under its session's lease: when the lease is lost, the client is
// closed and the next use connects anew.
func (c *accountClients) lend(accountID int64, acc *telegram.Account, lease *sessionlease.Lease) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.open[accountID] = acc
	c.borrowed[accountID] = true
	c.held[accountID] = lease
	go c.closeWhenLost(accountID, acc, lease)
}

// Account implements jobs.Accounts.
func (c *accountClients) Account(ctx context.Context, accountID int64) (messenger.Account, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if acc, ok := c.open[accountID]; ok {
		return acc, nil
	}
	if err := c.refuseSignedOut(ctx, accountID); err != nil {
		return nil, err
	}
	acc, fresh := c.logins[accountID], false
	if acc == nil {
		var err error
		if acc, err = c.connect(ctx, accountID); err != nil {
			return nil, err
		}
		fresh = true
	}
	ok, err := acc.Authorized(ctx)
	if err != nil || !ok {
		if fresh {
			c.dropLocked(accountID, acc)
		}
		if err == nil {
			err = messenger.ErrUnauthorized
		}
		return nil, fmt.Errorf("account %d: %w", accountID, err)
	}
	delete(c.logins, accountID)
	c.open[accountID] = acc
	c.signedIn[accountID].Store(true)
	return acc, nil
}

// refuseSignedOut answers ErrUnauthorized for an account whose session
// hoard knows ended (EXPIRED) or that never finished signing in, without
// asking the platform: only a new login (Login) uses it again. Called
// under c.mu.
func (c *accountClients) refuseSignedOut(ctx context.Context, accountID int64) error {
	a, err := c.db.FindAccountByID(ctx, accountID)
	if err != nil {
		return fmt.Errorf("account %d: %w", accountID, err)
	}
	if a.AuthState == hoard.AuthExpired {
		return fmt.Errorf("account %d: %w (%s)", accountID, messenger.ErrUnauthorized, a.AuthError)
	}
	return nil
}

// Login implements jobs.Logins: the account's client, signed in or not.
func (c *accountClients) Login(ctx context.Context, accountID int64) (messenger.Account, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if acc, ok := c.open[accountID]; ok {
		return acc, nil
	}
	if acc, ok := c.logins[accountID]; ok {
		return acc, nil
	}
	acc, err := c.connect(ctx, accountID)
	if err != nil {
		return nil, err
	}
	c.logins[accountID] = acc
	return acc, nil
}

// connect opens a client on the account's stored session, under the
// session's lease. Called under c.mu.
func (c *accountClients) connect(ctx context.Context, accountID int64) (*telegram.Account, error) {
	if c.base.AppID == 0 || c.base.AppHash == "" {
		return nil, hoard.Errorf(hoard.EINVALID, "TELEGRAM_APP_ID and TELEGRAM_APP_HASH are not set: the worker cannot sign in to the messaging platform")
	}
	key := accountSessionKey(accountID)
	lease, err := c.leases.Take(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("account %d: %w", accountID, err)
	}
	signedIn := &atomic.Bool{}
	cfg := c.base
	cfg.SessionKey = key
	cfg.Observer = c.observe(accountID)
	cfg.Limiter = c.limiter(accountID)
	cfg.OnSignedOut = func(err error) {
		if signedIn.CompareAndSwap(true, false) {
			go c.signedOut(accountID, err)
		}
	}
	acc, err := telegram.NewAccount(ctx, cfg)
	if err != nil {
		lease.Release(ctx)
		return nil, fmt.Errorf("account %d: connect: %w", accountID, err)
	}
	c.held[accountID], c.signedIn[accountID] = lease, signedIn
	go c.closeWhenLost(accountID, acc, lease)
	return acc, nil
}

// closeWhenLost closes an account's client when its lease is lost (this
// process could not renew it: another may take the session soon). The
// client closes at once, before the pool's lock is taken: a connect in
// progress holds that lock for seconds.
func (c *accountClients) closeWhenLost(accountID int64, acc *telegram.Account, lease *sessionlease.Lease) {
	select {
	case <-lease.Lost():
	case <-lease.Ended():
		select {
		case <-lease.Lost():
		default:
			return // released with its client
		}
	}
	_ = acc.Close()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open[accountID] == acc || c.logins[accountID] == acc {
		c.dropLocked(accountID, acc)
	}
}

// signedOut records that the platform ended a signed-in session (EXPIRED
// with the reason, a notification) and closes its client; the stored
// session is forgotten, so the next login starts with a new key.
func (c *accountClients) signedOut(accountID int64, cause error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c.mu.Lock()
	if acc := c.open[accountID]; acc != nil && !c.borrowed[accountID] {
		c.dropLocked(accountID, acc)
	}
	c.mu.Unlock()
	reason := "The platform signed this account out"
	if tgerr.Is(cause, "AUTH_KEY_DUPLICATED") {
		reason = "The platform ended this account's session because it was used from two places at once (AUTH_KEY_DUPLICATED)"
	}
	reason += ": sign it in again on the Messaging page."
	c.log.Error("messenger account signed out by the platform", "account", accountID, "err", cause)
	if err := c.db.SessionEnded(ctx, accountID, accountSessionKey(accountID), reason); err != nil {
		c.log.Error("record the sign-out of an account", "account", accountID, "err", err)
	}
}

// dropLocked closes a client of this pool and releases its lease. Called
// under c.mu.
func (c *accountClients) dropLocked(accountID int64, acc *telegram.Account) {
	if c.open[accountID] == acc {
		delete(c.open, accountID)
		delete(c.borrowed, accountID)
	}
	if c.logins[accountID] == acc {
		delete(c.logins, accountID)
	}
	_ = acc.Close()
	if lease := c.held[accountID]; lease != nil {
		lease.Release(context.Background())
		delete(c.held, accountID)
	}
	delete(c.signedIn, accountID)
}

// close disconnects every client this pool opened and releases their
// leases.
func (c *accountClients) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, acc := range c.open {
		if c.borrowed[id] {
			delete(c.open, id)
			continue
		}
		c.dropLocked(id, acc)
	}
	for id, acc := range c.logins {
		c.dropLocked(id, acc)
	}
}
