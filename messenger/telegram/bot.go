package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gotd/td/telegram"
	"github.com/gotd/td/telegram/updates"
	"github.com/gotd/td/telegram/updates/hook"
	"github.com/gotd/td/tg"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
)

// Bot is the gotd implementation of messenger.Bot, signed in with a token.
//
// Each process of one bot uses an auth key of its own, stored under
// Config.SessionKey (the platform ends a key used from two places at once:
// AUTH_KEY_DUPLICATED): the token is imported once per key and the key kept,
// not imported on every start (that earns long FLOOD_WAITs). What is the
// bot's and not one key's — the update state (StateKey+"/updates") and the
// access hashes learned from updates (StateKey+"/peers") — is shared. Connecting consumes no
// updates: only Listen runs gotd's updates manager and advances the stored
// state, so a process that only sends leaves every update to the listening
// one, or to the next process that listens.
//
// The results of the bot's own requests are fed to the updates manager (an
// update hook), so it never mistakes the bot's own messages for a gap. It is
// safe for concurrent use.
type Bot struct {
	cfg     Config
	conn    *conn
	self    messenger.User
	peers   *peerStore
	updates *updateSwitch
	// listening guards against two Listens in one process.
	listening atomic.Bool
}

var _ messenger.Bot = (*Bot)(nil)

// botMaxInlineFloodWait is the longest FLOOD_WAIT a bot sleeps through
// before returning it: a reply may wait a moment, a delivery snoozes.
const botMaxInlineFloodWait = 2 * time.Second

// NewBot connects the bot and signs in with token when the stored session is
// not signed in. It does not listen (see Listen). Close releases the
// connection.
func NewBot(ctx context.Context, cfg Config, token string) (*Bot, error) {
	if cfg.MaxInlineFloodWait == 0 {
		cfg.MaxInlineFloodWait = botMaxInlineFloodWait
	}
	if cfg.BotLimits == (messenger.BotLimits{}) {
		cfg.BotLimits = messenger.DefaultBotLimits
	}
	if cfg.Limiter == nil {
		cfg.Limiter = messenger.NewLimiter(4*cfg.BotLimits.Global, globalBurst(cfg.BotLimits))
	}
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	opts, err := cfg.options()
	if err != nil {
		return nil, err
	}
	b := &Bot{cfg: cfg, updates: &updateSwitch{}}
	opts.UpdateHandler = b.updates
	opts.Middlewares = append(opts.Middlewares, hook.UpdateHook(b.updates.Handle))
	c, err := start(ctx, &b.cfg, opts, func(ctx context.Context, c *conn) error {
		st, err := c.client.Auth().Status(ctx)
		if err != nil {
			return mapErr("bot auth status", err)
		}
		if !st.Authorized {
			if _, err := c.client.Auth().Bot(ctx, token); err != nil {
				return mapErr("bot login", err)
			}
		}
		me, err := c.client.Self(ctx)
		if err != nil {
			return mapErr("bot self", err)
		}
		b.self = convertUser(me)
		return nil
	})
	if err != nil {
		return nil, err
	}
	b.conn = c
	if b.peers, err = loadPeers(ctx, b.cfg.Sessions, b.cfg.StateKey, b.self.ID); err != nil {
		_ = c.close()
		return nil, fmt.Errorf("bot: %w", err)
	}
	if err := b.initUpdatesState(ctx); err != nil {
		_ = c.close()
		return nil, err
	}
	return b, nil
}

// initUpdatesState stores the platform's update state when none is stored
// yet (a new bot), so that the first Listen, whenever it comes, delivers
// what users sent since the bot first connected.
func (b *Bot) initUpdatesState(ctx context.Context) error {
	state, err := loadUpdatesState(ctx, b.cfg.Sessions, b.cfg.StateKey, b.peers)
	if err != nil {
		return fmt.Errorf("bot: %w", err)
	}
	if _, found, _ := state.GetState(ctx, b.self.ID); found {
		return nil
	}
	remote, err := b.conn.api.UpdatesGetState(ctx)
	if err != nil {
		return mapErr("bot: get update state", err)
	}
	st := updates.State{Pts: remote.Pts, Qts: remote.Qts, Date: remote.Date, Seq: remote.Seq}
	if err := state.SetState(ctx, b.self.ID, st); err != nil {
		return fmt.Errorf("bot: %w", err)
	}
	return nil
}

// Close disconnects.
func (b *Bot) Close() error { return b.conn.close() }

// Self implements messenger.Bot.
func (b *Bot) Self(context.Context) (messenger.User, error) { return b.self, nil }

// updateSwitch is the client's update handler: it passes updates to the
// updates manager of a running Listen and drops them otherwise (the next
// Listen fetches them with getDifference from the stored state).
type updateSwitch struct {
	mu sync.RWMutex
	h  telegram.UpdateHandler
}

func (s *updateSwitch) set(h telegram.UpdateHandler) {
	s.mu.Lock()
	s.h = h
	s.mu.Unlock()
}

// Handle implements telegram.UpdateHandler.
func (s *updateSwitch) Handle(ctx context.Context, u tg.UpdatesClass) error {
	s.mu.RLock()
	h := s.h
	s.mu.RUnlock()
	if h == nil {
		return nil
	}
	return h.Handle(ctx, u)
}

// Listen implements messenger.Bot. It loads the stored update state,
// catches up with getDifference and then hands every private text message
// and button press to h, each in its own goroutine, until ctx ends; it
// returns nil then, after the handlers it started have returned. A second
// Listen in the same process while one runs is an error.
func (b *Bot) Listen(ctx context.Context, h messenger.BotHandler) error {
	if !b.listening.CompareAndSwap(false, true) {
		return errors.New("bot listen: already listening in this process")
	}
	defer b.listening.Store(false)
	state, err := loadUpdatesState(ctx, b.cfg.Sessions, b.cfg.StateKey, b.peers)
	if err != nil {
		return fmt.Errorf("bot listen: %w", err)
	}
	stopWriter := state.writeBehind(ctx, b.cfg.Logger)
	defer func() {
		if err := stopWriter(); err != nil {
			b.cfg.Logger.Warn("telegram: bot: the last update state was not saved", "error", err)
		}
	}()
	var handlers sync.WaitGroup
	mgr := updates.New(updates.Config{
		Handler:          learningHandler{peers: b.peers, next: b.dispatcher(ctx, h, &handlers), log: b.cfg.Logger},
		Storage:          state,
		AccessHasher:     b.peers,
		UserAccessHasher: b.peers,
	})
	err = mgr.Run(ctx, b.conn.api, b.self.ID, updates.AuthOptions{IsBot: true,
		// Only now is the manager tracking pts: before, Handle would pass
		// updates through unordered.
		OnStart: func(context.Context) { b.updates.set(mgr) }})
	b.updates.set(nil)
	handlers.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return mapErr("bot listen", err)
}

// learningHandler records the access hashes of every update's users and
// channels before passing it on, so any process of the bot can address them.
// A hash that cannot be saved is logged; the update is handled all the same
// (this process keeps the hash in memory).
type learningHandler struct {
	peers *peerStore
	next  telegram.UpdateHandler
	log   *slog.Logger
}

// Handle implements telegram.UpdateHandler.
func (l learningHandler) Handle(ctx context.Context, u tg.UpdatesClass) error {
	if v, ok := u.(*tg.Updates); ok {
		if err := l.peers.learn(ctx, v.Users, v.Chats); err != nil {
			l.log.Warn("telegram: bot: save access hashes", "error", err)
		}
	}
	return l.next.Handle(ctx, u)
}

// dispatcher routes private messages and button presses to h, each call in
// its own goroutine counted in wg, with ctx (Listen's).
func (b *Bot) dispatcher(ctx context.Context, h messenger.BotHandler, wg *sync.WaitGroup) tg.UpdateDispatcher {
	run := func(kind string, f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(); err != nil {
				b.cfg.Logger.Warn("telegram: bot handler failed", "update", kind, "error", err)
			}
		}()
	}
	d := tg.NewUpdateDispatcher()
	d.OnNewMessage(func(_ context.Context, e tg.Entities, u *tg.UpdateNewMessage) error {
		if in, ok := incomingMessage(e, u); ok {
			run("message", func() error { return h.HandleMessage(ctx, in) })
		}
		return nil
	})
	d.OnBotCallbackQuery(func(_ context.Context, e tg.Entities, u *tg.UpdateBotCallbackQuery) error {
		p, ok := u.Peer.(*tg.PeerUser)
		if !ok {
			return nil
		}
		q := messenger.CallbackQuery{QueryID: u.QueryID, ChatID: p.UserID, UserID: u.UserID, MessageID: u.MsgID, Data: u.Data}
		if usr, ok := e.Users[u.UserID]; ok {
			q.AccessHash = usr.AccessHash
		}
		run("callback", func() error { return h.HandleCallback(ctx, q) })
		return nil
	})
	return d
}

// incomingMessage converts a private text message from a user; ok is false
// for the bot's own messages, service messages and other chats.
func incomingMessage(e tg.Entities, u *tg.UpdateNewMessage) (messenger.IncomingMessage, bool) {
	msg, ok := u.Message.(*tg.Message)
	if !ok || msg.Out {
		return messenger.IncomingMessage{}, false
	}
	p, ok := msg.PeerID.(*tg.PeerUser)
	if !ok {
		return messenger.IncomingMessage{}, false
	}
	in := messenger.IncomingMessage{MessageID: msg.ID, ChatID: p.UserID, UserID: p.UserID, Text: msg.Message,
		Date: time.Unix(int64(msg.Date), 0).UTC()}
	if usr, ok := e.Users[p.UserID]; ok {
		in.AccessHash, in.Username, in.FirstName = usr.AccessHash, usr.Username, usr.FirstName
	}
	return in, true
}

// Pacer keys of the bot's limits: the bot overall, and one chat of it.
func (b *Bot) paceKeys(chatID int64) (global, chat string) {
	global = "bot:" + strconv.FormatInt(b.self.ID, 10)
	return global, global + ":chat:" + strconv.FormatInt(chatID, 10)
}

// globalBurst is the burst of the overall limit: one second's worth.
func globalBurst(l messenger.BotLimits) int {
	return max(1, int(l.Global))
}

// pace waits until n more messages, sent in one request, may go to chatID
// under both limits: the chat's n slots are reserved at once, and only
// when the last of them is due the bot's n overall slots (reserving those
// earlier would hold slots other chats could use now).
func (b *Bot) pace(ctx context.Context, chatID int64, n int) error {
	global, chat := b.paceKeys(chatID)
	l := b.cfg.BotLimits
	err := b.cfg.Pacer.WaitN(ctx, n, hoard.RateLimit{Key: chat, Rate: l.PerChat, Burst: l.PerChatBurst},
		hoard.RateLimit{Key: global, Rate: l.Global, Burst: globalBurst(l)})
	if err != nil {
		return fmt.Errorf("pace chat %d: %w", chatID, err)
	}
	return nil
}

// sendAttempts is how many times a request whose answer never arrives is
// sent (with the same random ids).
const sendAttempts = 3

// deliver runs one message-delivering request with Config.SendTimeout per
// attempt. An unanswered attempt (the request may have been carried out)
// is repeated as is: its random ids make the platform answer
// RANDOM_ID_DUPLICATE instead of delivering twice.
func (b *Bot) deliver(ctx context.Context, op string, f func(ctx context.Context) error) error {
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, b.cfg.SendTimeout)
		err := f(actx)
		cancel()
		if err == nil || ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) || attempt == sendAttempts {
			return err
		}
		b.cfg.Logger.Warn("telegram: bot request unanswered, sending it again", "op", op, "attempt", attempt)
	}
}

// userPeer addresses a private chat with the hash learned by any process.
func (b *Bot) userPeer(ctx context.Context, chatID int64) (*tg.InputPeerUser, error) {
	hash, ok, err := b.peers.lookup(ctx, false, chatID)
	if err != nil {
		return nil, fmt.Errorf("chat %d: %w", chatID, err)
	}
	if !ok {
		return nil, fmt.Errorf("chat %d: the bot has not seen this user (they must write to it first): %w", chatID, messenger.ErrNotFound)
	}
	return &tg.InputPeerUser{UserID: chatID, AccessHash: hash}, nil
}

// channelPeer addresses a channel with the bot's own access hash, learned
// from an update (a post, or being made an administrator).
func (b *Bot) channelPeer(ctx context.Context, channelID int64) (*tg.InputPeerChannel, bool, error) {
	hash, ok, err := b.peers.lookup(ctx, true, channelID)
	if err != nil || !ok {
		return nil, false, err
	}
	return &tg.InputPeerChannel{ChannelID: channelID, AccessHash: hash}, true, nil
}
