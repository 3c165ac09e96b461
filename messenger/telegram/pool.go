package telegram

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
)

// AccountRecords is what an AccountPool reads and writes of the accounts
// (store.DB implements it).
type AccountRecords interface {
	FindAccountByID(ctx context.Context, id int64) (*hoard.Account, error)
	SessionEnded(ctx context.Context, accountID int64, sessionKey, reason string) error
}

// Lease is a process's hold on one messaging session (sessionlease.Lease):
// Lost is closed when it could not be renewed, Ended when it ended either
// way; Release gives it up.
type Lease interface {
	Lost() <-chan struct{}
	Ended() <-chan struct{}
	Release(ctx context.Context)
}

// PoolConfig configures an AccountPool.
type PoolConfig struct {
	// Base is every client's configuration; the pool sets SessionKey,
	// Observer, Limiter and OnSignedOut per account.
	Base     Config
	Accounts AccountRecords
	// TakeLease takes the lease of a session key, failing with an error
	// matching messenger.ErrSessionBusy while another process holds it.
	TakeLease func(ctx context.Context, key string) (Lease, error)
	// Observe gives the observer of an account's requests (the metrics').
	Observe func(accountID int64) messenger.RequestObserver
	// Limiter gives an account's request limiter, shared with every
	// process on the database.
	Limiter func(accountID int64) *messenger.Limiter
	Logger  *slog.Logger
}

// AccountPool connects the messenger clients of the worker's accounts on
// first use and keeps them for the process (implements jobs.Accounts and
// jobs.Logins). It is safe for concurrent use.
//
// An account's session is used by one process at a time: a client is
// connected only under the session's lease, and the process keeps it while
// it lives, so the account's work runs here; another process that needs
// the account gets an error matching messenger.ErrSessionBusy (its jobs
// snooze) until this one stops. A client whose lease is lost is closed at
// once. A signed-in session the platform ends (401, or 406
// AUTH_KEY_DUPLICATED) puts the account into EXPIRED with a notification,
// and nothing asks the platform with it again until an administrator signs
// it in anew.
type AccountPool struct {
	cfg PoolConfig
	mu  sync.Mutex
	// base is cfg.Base, which UseEmulator may change.
	base Config
	open map[int64]*Account
	// logins are clients of accounts not signed in yet; one that signs in
	// moves to open on its next use.
	logins map[int64]*Account
	// borrowed clients belong to someone else, who closes them.
	borrowed map[int64]bool
	// held are the session leases of the clients in open and logins.
	held map[int64]Lease
	// signedIn marks the clients in open, whose sign-out is recorded.
	signedIn map[int64]*atomic.Bool
}

// NewAccountPool returns an empty pool.
func NewAccountPool(cfg PoolConfig) *AccountPool {
	return &AccountPool{cfg: cfg, base: cfg.Base,
		open: map[int64]*Account{}, logins: map[int64]*Account{}, borrowed: map[int64]bool{},
		held: map[int64]Lease{}, signedIn: map[int64]*atomic.Bool{}}
}

// AccountSessionKey is where an account's session is stored, and the name
// of its lease.
func AccountSessionKey(accountID int64) string { return "account:" + strconv.FormatInt(accountID, 10) }

// Lend registers a client connected and closed by someone else (the
// demo's), under its session's lease: when the lease is lost, the client is
// closed and the next use connects anew.
func (c *AccountPool) Lend(accountID int64, acc *Account, lease Lease) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.open[accountID] = acc
	c.borrowed[accountID] = true
	c.held[accountID] = lease
	go c.closeWhenLost(accountID, acc, lease)
}

// UseEmulator points the clients connected later (of accounts added on the
// messaging page) at an emulator, unless the pool talks to one already:
// without it they would need TELEGRAM_APP_ID and TELEGRAM_APP_HASH for the
// real platform.
func (c *AccountPool) UseEmulator(info EmulatorInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.base.Endpoint != nil {
		return // TELEGRAM_EMULATOR set it already
	}
	c.base.Endpoint = info.Endpoint()
	if c.base.AppID == 0 || c.base.AppHash == "" {
		c.base.AppID, c.base.AppHash = 1, "emulator" // the emulator accepts any application
	}
}

// Account implements jobs.Accounts: the account's signed-in client.
func (c *AccountPool) Account(ctx context.Context, accountID int64) (messenger.Account, error) {
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
func (c *AccountPool) refuseSignedOut(ctx context.Context, accountID int64) error {
	a, err := c.cfg.Accounts.FindAccountByID(ctx, accountID)
	if err != nil {
		return fmt.Errorf("account %d: %w", accountID, err)
	}
	if a.AuthState == hoard.AuthExpired {
		return fmt.Errorf("account %d: %w (%s)", accountID, messenger.ErrUnauthorized, a.AuthError)
	}
	return nil
}

// Login implements jobs.Logins: the account's client, signed in or not.
func (c *AccountPool) Login(ctx context.Context, accountID int64) (messenger.Account, error) {
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
func (c *AccountPool) connect(ctx context.Context, accountID int64) (*Account, error) {
	if c.base.AppID == 0 || c.base.AppHash == "" {
		return nil, hoard.Errorf(hoard.EINVALID, "TELEGRAM_APP_ID and TELEGRAM_APP_HASH are not set: the worker cannot sign in to the messaging platform")
	}
	key := AccountSessionKey(accountID)
	lease, err := c.cfg.TakeLease(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("account %d: %w", accountID, err)
	}
	signedIn := &atomic.Bool{}
	cfg := c.base
	cfg.SessionKey = key
	cfg.Observer = c.cfg.Observe(accountID)
	cfg.Limiter = c.cfg.Limiter(accountID)
	cfg.OnSignedOut = func(err error) {
		if signedIn.CompareAndSwap(true, false) {
			go c.signedOut(accountID, err)
		}
	}
	acc, err := NewAccount(ctx, cfg)
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
func (c *AccountPool) closeWhenLost(accountID int64, acc *Account, lease Lease) {
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
func (c *AccountPool) signedOut(accountID int64, cause error) {
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
	c.cfg.Logger.Error("messenger account signed out by the platform", "account", accountID, "err", cause)
	if err := c.cfg.Accounts.SessionEnded(ctx, accountID, AccountSessionKey(accountID), reason); err != nil {
		c.cfg.Logger.Error("record the sign-out of an account", "account", accountID, "err", err)
	}
}

// dropLocked closes a client of this pool and releases its lease. Called
// under c.mu.
func (c *AccountPool) dropLocked(accountID int64, acc *Account) {
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

// Close disconnects every client this pool opened and releases their
// leases; lent clients are left to their owner.
func (c *AccountPool) Close() {
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
