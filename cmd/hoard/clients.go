package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/telegram"
	"github.com/hoard/hoard/store"
)

// newAccountClients prepares the worker's account clients for the
// configured platform: the emulator of TELEGRAM_EMULATOR, or the real one
// with TELEGRAM_APP_ID and TELEGRAM_APP_HASH. Sessions come from
// PostgreSQL, encrypted with AUTH_SECRET, each used under its lease.
func (a *app) newAccountClients() (*telegram.AccountPool, error) {
	sessions, err := telegram.StoredSessions(a.db, a.cfg.AuthSecret)
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
	// One messenger account's pace holds across every worker process:
	// its tokens are reserved in PostgreSQL (store.Pacer), a few at a time.
	pacer := store.NewPacer(a.db)
	return telegram.NewAccountPool(telegram.PoolConfig{Base: base, Accounts: a.db, Logger: a.log,
		TakeLease: func(ctx context.Context, key string) (telegram.Lease, error) {
			l, err := a.leases.Take(ctx, key)
			if err != nil {
				return nil, err
			}
			return l, nil
		},
		Observe: func(id int64) messenger.RequestObserver { return a.metrics.Account(id) },
		Limiter: func(id int64) *messenger.Limiter {
			return messenger.NewSharedLimiter(pacer, "account:"+strconv.FormatInt(id, 10), a.cfg.AccountRate, a.cfg.AccountBurst)
		},
	}), nil
}
