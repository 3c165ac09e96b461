package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/bot"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/telegram"
	"github.com/hoard/hoard/queue"
	"github.com/hoard/hoard/sessionlease"
	"github.com/hoard/hoard/store"
)

// botSessionKey is where the bot's update state and learned access hashes
// are stored (shared by every bot process), and the first of its sessions
// (auth keys): each bot process holds one of botSlots of its own
// (sessionlease.SlotKey), because the platform ends a key used from two
// places at once.
const botSessionKey = "bot"

// botSlots is how many bot sessions may be held at once (a hot standby
// beside the answering bot process, a web process's for downloads, and
// room for restarts); the token is imported
// once into each slot's key, which is kept.
const botSlots = 8

// errSessionLost stops a process that could not renew the lease of a
// session it uses: another process may take it, and the platform would
// end a key used in two places.
var errSessionLost = errors.New("the lease of a messaging session was lost (the database was unreachable too long): stopping rather than risk the session")

// errNoBotToken is why a process cannot run the chat bot.
var errNoBotToken = errors.New("BOT_TOKEN is not set: the chat bot signs in with the token BotFather gave you (see README, Bot)")

// botProcessID names this process in the bot's answering lease and on the
// admin page: WORKER_ID and the process id, so a restarted process waits
// for the lease of the one it replaces to expire.
func (a *app) botProcessID() string { return fmt.Sprintf("%s/%d", a.cfg.WorkerID, os.Getpid()) }

// emulatorInfo is the emulator the clients talk to: the demo's own, or the
// one of TELEGRAM_EMULATOR; false for the real platform.
func (a *app) emulatorInfo() (telegram.EmulatorInfo, bool, error) {
	if a.demo.Emulator != nil {
		return *a.demo.Emulator, true, nil
	}
	if a.cfg.TelegramEmulator == "" {
		return telegram.EmulatorInfo{}, false, nil
	}
	info, err := telegram.LoadEmulatorInfo(a.cfg.TelegramEmulator)
	if err != nil {
		return info, false, fmt.Errorf("TELEGRAM_EMULATOR: %w", err)
	}
	return info, true, nil
}

// connectBot signs the chat bot in with a session of this process's own
// (the first free of botSlots, waiting while all are held), its messages
// paced in PostgreSQL so that BOT_CHAT_RATE and BOT_GLOBAL_RATE hold across
// processes. The token is BOT_TOKEN, or the emulator's when talking to one
// and BOT_TOKEN is unset. lost is called when the session's lease is lost;
// closeBot closes the bot and releases the session.
func (a *app) connectBot(ctx context.Context, lost func(error)) (b *telegram.Bot, closeBot func(), err error) {
	return a.connectBotWith(ctx, nil, lost)
}

// connectBotWith is connectBot with the bot's requests paced by limiter
// (nil: the bot's default).
func (a *app) connectBotWith(ctx context.Context, limiter *messenger.Limiter, lost func(error)) (b *telegram.Bot, closeBot func(), err error) {
	cfg, token, err := a.botConfig()
	if err != nil {
		return nil, nil, err
	}
	cfg.Limiter = limiter
	lease, err := a.leases.TakeSlot(ctx, botSessionKey, botSlots)
	if err != nil {
		return nil, nil, fmt.Errorf("chat bot: %w", err)
	}
	cfg.SessionKey, cfg.StateKey = lease.Key(), botSessionKey
	b, err = telegram.NewBot(ctx, cfg, token)
	if err != nil {
		lease.Release(context.WithoutCancel(ctx))
		return nil, nil, fmt.Errorf("chat bot: sign in: %w", err)
	}
	a.log.Info("chat bot connected", "session", lease.Key())
	closed := make(chan struct{})
	go func() {
		select {
		case <-lease.Lost():
			a.log.Error("the chat bot's session lease is lost: stopping", "session", lease.Key())
			_ = b.Close()
			lost(errSessionLost)
		case <-closed:
		}
	}()
	closeBot = func() {
		close(closed)
		_ = b.Close()
		lease.Release(context.Background())
	}
	return b, closeBot, nil
}

// botConfig is the bot's client configuration and token: BOT_TOKEN, or the
// emulator's when talking to one and BOT_TOKEN is unset.
func (a *app) botConfig() (telegram.Config, string, error) {
	sessions, err := telegram.StoredSessions(a.db, a.cfg.AuthSecret)
	if err != nil {
		return telegram.Config{}, "", err
	}
	cfg := telegram.Config{AppID: a.cfg.TelegramAppID, AppHash: a.cfg.TelegramAppHash, Logger: a.log, Sessions: sessions,
		SessionKey: botSessionKey, Pacer: store.NewPacer(a.db), BotLimits: a.cfg.BotLimits, SendTimeout: a.cfg.BotSendTimeout,
		Observer: a.metrics.Platform("bot")}
	token := a.cfg.BotToken
	info, emulated, err := a.emulatorInfo()
	if err != nil {
		return cfg, "", err
	}
	if emulated {
		cfg.Endpoint = info.Endpoint()
		if cfg.AppID == 0 {
			cfg.AppID, cfg.AppHash = 1, "emulator"
		}
		if token == "" {
			token = info.BotToken
		}
	}
	switch {
	case token == "":
		return cfg, "", errNoBotToken
	case cfg.AppID == 0 || cfg.AppHash == "":
		return cfg, "", errors.New("TELEGRAM_APP_ID and TELEGRAM_APP_HASH are not set: the bot signs in through the messenger API like the worker")
	}
	return cfg, token, nil
}

// botDeps is what the bot package needs in this process.
func (a *app) botDeps(b messenger.Bot) bot.Deps {
	return bot.Deps{DB: a.db, Bot: b, Logger: a.log, AppURL: a.cfg.AppURL, AddToChannel: a.addBotToChannel, Metrics: a.metrics}
}

// addBotToChannel makes the bot an administrator of a destination channel
// through the account that posts there, so the bot can copy from it. It
// says what to do by hand when that account may not.
func (a *app) addBotToChannel(ctx context.Context, ch hoard.Channel, botUsername string) error {
	byHand := fmt.Sprintf("add @%s to the channel “%s” as an administrator by hand (it needs no further rights)", botUsername, ch.Title)
	m, err := a.db.FindWriterMap(ctx, ch.ID, 0)
	if err != nil {
		return hoard.Errorf(hoard.ENOTFOUND, "No signed-in worker account posts to “%s” to make the bot an administrator: %s.", ch.Title, byHand)
	}
	clients := a.clients
	if clients == nil {
		// A bot-only process uses the account this once and lets its
		// session go, so the workers that need it are not kept waiting.
		if clients, err = a.newAccountClients(); err != nil {
			return err
		}
		defer clients.Close()
	}
	acc, err := clients.Account(ctx, m.AccountID)
	if errors.Is(err, sessionlease.ErrBusy) {
		return a.askHolderToAddBot(ctx, ch, botUsername)
	}
	if err != nil {
		return hoard.Errorf(hoard.EINTERNAL, "The worker account of “%s” is not usable (%v): %s.", ch.Title, err, byHand)
	}
	err = acc.AddBotAdmin(ctx, messenger.Channel{ID: ch.PlatformID, AccessHash: m.AccessHash, Title: ch.Title}, botUsername)
	if errors.Is(err, messenger.ErrAdminRequired) {
		return hoard.Errorf(hoard.EFORBIDDEN, "The worker account may not make administrators in “%s”: %s.", ch.Title, byHand)
	} else if err != nil {
		return fmt.Errorf("make the bot an administrator of %q: %w", ch.Title, err)
	}
	a.log.Info("made the bot an administrator of a destination channel", "channel", ch.Title, "bot", botUsername)
	return nil
}

// askHolderToAddBot queues add_bot_admin for the process that holds the
// writer account's session (a worker): a session is never used by two
// processes at once, so this bot process does not take it over.
func (a *app) askHolderToAddBot(ctx context.Context, ch hoard.Channel, botUsername string) error {
	ins, err := queue.NewInsertOnly(a.db.Pool(), a.log)
	if err != nil {
		return err
	}
	if _, err := ins.Insert(ctx, hoard.AddBotAdminArgs{ChannelID: ch.ID, BotUsername: botUsername}, nil); err != nil {
		return fmt.Errorf("ask the worker to make the bot an administrator of %q: %w", ch.Title, err)
	}
	a.log.Info("asked the worker holding the account to make the bot an administrator", "channel", ch.Title)
	return hoard.Errorf(hoard.ECONFLICT, "The worker that holds the account of “%s” was asked to make @%s an administrator there; this takes a moment.",
		ch.Title, botUsername)
}

// runBot answers commands (or stands by) until ctx ends; done is closed
// when it has stopped.
func (a *app) runBot(ctx context.Context, b messenger.Bot, client *queue.Client) (done chan struct{}) {
	done = make(chan struct{})
	svc := bot.NewService(a.botDeps(b), client, a.botProcessID())
	go func() {
		defer close(done)
		if err := svc.Run(ctx); err != nil {
			a.log.Error("chat bot stopped", "err", err)
		}
	}()
	return done
}

// errDownloadsUnavailable is what a user is told when the web process
// cannot reach the bot that downloads go through.
var errDownloadsUnavailable = hoard.Errorf(hoard.EUNAVAILABLE, "Downloads go through the chat bot, which cannot connect right now (is BOT_TOKEN set and the bot an administrator of the destination channel?). Try again later; an administrator sees why in the log.")
