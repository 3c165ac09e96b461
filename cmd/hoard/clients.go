package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/telegram"
	"github.com/hoard/hoard/store"
)

// accountClients connects the messenger clients of the worker's accounts
// on first use and keeps them for the process (implements jobs.Accounts and
// jobs.Logins). Sessions come from PostgreSQL, encrypted with AUTH_SECRET.
type accountClients struct {
	base telegram.Config
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
	return &accountClients{base: base, observe: observe, limiter: limiter, open: map[int64]*telegram.Account{}, logins: map[int64]*telegram.Account{},
		borrowed: map[int64]bool{}}, nil
}

// lend registers a client connected and closed by someone else (the
// demo's).
func (c *accountClients) lend(accountID int64, acc *telegram.Account) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.open[accountID] = acc
	c.borrowed[accountID] = true
}

// Account implements jobs.Accounts.
func (c *accountClients) Account(ctx context.Context, accountID int64) (messenger.Account, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if acc, ok := c.open[accountID]; ok {
		return acc, nil
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
			_ = acc.Close()
		}
		if err == nil {
			err = messenger.ErrUnauthorized
		}
		return nil, fmt.Errorf("account %d: %w", accountID, err)
	}
	delete(c.logins, accountID)
	c.open[accountID] = acc
	return acc, nil
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

// connect opens a client on the account's stored session.
func (c *accountClients) connect(ctx context.Context, accountID int64) (*telegram.Account, error) {
	if c.base.AppID == 0 || c.base.AppHash == "" {
		return nil, hoard.Errorf(hoard.EINVALID, "TELEGRAM_APP_ID and TELEGRAM_APP_HASH are not set: the worker cannot sign in to the messaging platform")
	}
	cfg := c.base
	cfg.SessionKey = "account:" + strconv.FormatInt(accountID, 10)
	cfg.Observer = c.observe(accountID)
	cfg.Limiter = c.limiter(accountID)
	acc, err := telegram.NewAccount(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("account %d: connect: %w", accountID, err)
	}
	return acc, nil
}

// close disconnects every client this pool opened.
func (c *accountClients) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, acc := range c.open {
		if !c.borrowed[id] {
			_ = acc.Close()
		}
		delete(c.open, id)
	}
	for id, acc := range c.logins {
		_ = acc.Close()
		delete(c.logins, id)
	}
}
