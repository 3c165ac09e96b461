package telegram

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gotd/td/telegram/message"
	"github.com/gotd/td/telegram/message/html"
	"github.com/gotd/td/telegram/updates"
	"github.com/gotd/td/telegram/uploader"
	"github.com/gotd/td/tg"

	"github.com/hoard/hoard/messenger"
)

// Bot is the gotd implementation of messenger.Bot: signed in with a token,
// receiving messages through gotd's updates manager (gaps recovered with
// getDifference). Access hashes of users and channels are learned from
// updates (they are per viewer: the bot never uses the worker's). It is safe
// for concurrent use.
type Bot struct {
	cfg       Config
	conn      *conn
	onMessage func(context.Context, messenger.IncomingMessage)
	global    *messenger.Limiter

	state *updatesState

	mu       sync.Mutex
	runCtx   context.Context
	self     messenger.User
	users    map[int64]int64
	channels map[int64]int64
	chats    map[int64]*messenger.Limiter
}

// TODO(bot-layer): implement the whole messenger.Bot port; until then the
// adapter offers the older Reply/SendPhoto/Forward calls.
// var _ messenger.Bot = (*Bot)(nil)

// NewBot connects the bot, signs in with token when the stored session is
// not signed in (the session is persisted: re-importing a token on every
// start earns long flood waits), and delivers every incoming private text
// message to onMessage (called in its own goroutine).
func NewBot(ctx context.Context, cfg Config, token string, onMessage func(context.Context, messenger.IncomingMessage)) (*Bot, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	opts, err := cfg.options()
	if err != nil {
		return nil, err
	}
	b := &Bot{cfg: cfg, onMessage: onMessage, global: messenger.NewLimiter(cfg.BotGlobalRate, int(cfg.BotGlobalRate)),
		users: map[int64]int64{}, channels: map[int64]int64{}, chats: map[int64]*messenger.Limiter{}}
	d := tg.NewUpdateDispatcher()
	d.OnNewMessage(b.handleNewMessage)
	d.OnNewChannelMessage(func(ctx context.Context, e tg.Entities, _ *tg.UpdateNewChannelMessage) error {
		b.learn(e)
		return nil
	})
	state, err := loadUpdatesState(ctx, cfg.Sessions, cfg.SessionKey)
	if err != nil {
		return nil, err
	}
	b.state = state
	mgr := updates.New(updates.Config{Handler: d, Storage: state, AccessHasher: state, UserAccessHasher: state})
	opts.UpdateHandler = mgr
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
		b.mu.Lock()
		b.self = convertUser(me)
		b.runCtx = ctx
		// Hashes learned before a restart.
		b.state.read(me.ID, func(d *stateData) {
			for id, h := range d.UserHash {
				b.users[id] = h
			}
			for id, h := range d.ChannelHash {
				b.channels[id] = h
			}
		})
		b.mu.Unlock()
		started := make(chan struct{})
		go func() {
			err := mgr.Run(ctx, c.api, me.ID, updates.AuthOptions{IsBot: true, OnStart: func(context.Context) { close(started) }})
			if err != nil && ctx.Err() == nil {
				b.cfg.Logger.Error("telegram: bot updates stopped", "error", err)
			}
		}()
		select {
		case <-started:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	if err != nil {
		return nil, err
	}
	b.conn = c
	return b, nil
}

// Close disconnects.
func (b *Bot) Close() error { return b.conn.close() }

func (b *Bot) learn(e tg.Entities) {
	b.mu.Lock()
	selfID := b.self.ID
	for id, u := range e.Users {
		b.users[id] = u.AccessHash
	}
	for id, c := range e.Channels {
		b.channels[id] = c.AccessHash
	}
	b.mu.Unlock()
	// Persist users for replies after a restart (the manager persists
	// channel hashes itself).
	for id, u := range e.Users {
		if id == selfID {
			continue
		}
		if h, ok, _ := b.state.GetUserAccessHash(context.Background(), selfID, id); !ok || h != u.AccessHash {
			if err := b.state.SetUserAccessHash(context.Background(), selfID, id, u.AccessHash); err != nil {
				b.cfg.Logger.Warn("telegram: save user access hash", "error", err)
			}
		}
	}
}

func (b *Bot) handleNewMessage(ctx context.Context, e tg.Entities, u *tg.UpdateNewMessage) error {
	b.learn(e)
	msg, ok := u.Message.(*tg.Message)
	if !ok || msg.Out {
		return nil
	}
	p, ok := msg.PeerID.(*tg.PeerUser)
	if !ok {
		return nil // groups and channels are not bot chats here
	}
	in := messenger.IncomingMessage{MessageID: msg.ID, ChatID: p.UserID, UserID: p.UserID, Text: msg.Message,
		Date: time.Unix(int64(msg.Date), 0).UTC()}
	if usr, ok := e.Users[p.UserID]; ok {
		in.Username = usr.Username
	}
	if b.onMessage != nil {
		b.mu.Lock()
		runCtx := b.runCtx
		b.mu.Unlock()
		go b.onMessage(runCtx, in)
	}
	return nil
}

// Self implements messenger.Bot.
func (b *Bot) Self(context.Context) (messenger.User, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.self, nil
}

// ResolveChannel finds a public channel by reference for the bot and
// remembers its (bot-specific) access hash for Forward.
func (b *Bot) ResolveChannel(ctx context.Context, ref messenger.ChannelRef) (messenger.Channel, error) {
	if ref.IsInvite() {
		return messenger.Channel{}, fmt.Errorf("bot resolve %s: bots cannot use invite links: %w", ref, messenger.ErrNotFound)
	}
	res, err := b.conn.api.ContactsResolveUsername(ctx, &tg.ContactsResolveUsernameRequest{Username: ref.Username})
	if err != nil {
		return messenger.Channel{}, mapErr("bot resolve "+ref.String(), err)
	}
	p, ok := res.Peer.(*tg.PeerChannel)
	if !ok {
		return messenger.Channel{}, fmt.Errorf("bot resolve %s: not a channel: %w", ref, messenger.ErrNotFound)
	}
	chat, _ := findChannel(res.Chats, p.ChannelID)
	ch, err := chatToChannel("bot resolve "+ref.String(), chat)
	if err != nil {
		return ch, err
	}
	b.mu.Lock()
	b.channels[ch.ID] = ch.AccessHash
	selfID := b.self.ID
	b.mu.Unlock()
	if err := b.state.SetChannelAccessHash(ctx, selfID, ch.ID, ch.AccessHash); err != nil {
		b.cfg.Logger.Warn("telegram: save channel access hash", "error", err)
	}
	return ch, nil
}

// wait applies the per-chat and global bot limits for n messages.
func (b *Bot) wait(ctx context.Context, chatID int64, n int) error {
	b.mu.Lock()
	lim := b.chats[chatID]
	if lim == nil {
		lim = messenger.NewLimiter(b.cfg.BotChatRate, 3)
		b.chats[chatID] = lim
	}
	b.mu.Unlock()
	for range n {
		if err := lim.Wait(ctx); err != nil {
			return err
		}
		if err := b.global.Wait(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (b *Bot) userPeer(chatID int64) (*tg.InputPeerUser, error) {
	b.mu.Lock()
	hash, ok := b.users[chatID]
	b.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("chat %d: the bot has not seen this user yet: %w", chatID, messenger.ErrNotFound)
	}
	return &tg.InputPeerUser{UserID: chatID, AccessHash: hash}, nil
}

// Reply implements messenger.Bot. text is HTML (escape user data with
// messenger.EscapeHTML).
func (b *Bot) Reply(ctx context.Context, chatID int64, text string) (int, error) {
	peer, err := b.userPeer(chatID)
	if err != nil {
		return 0, err
	}
	if err := b.wait(ctx, chatID, 1); err != nil {
		return 0, err
	}
	upd, err := message.NewSender(b.conn.api).To(peer).StyledText(ctx, html.String(nil, text))
	if err != nil {
		return 0, mapErr(fmt.Sprintf("reply to %d", chatID), err)
	}
	id, _ := sentMessageID(upd, 0)
	return id, nil
}

// SendPhoto implements messenger.Bot.
func (b *Bot) SendPhoto(ctx context.Context, chatID int64, name string, image []byte, captionHTML string) (int, error) {
	peer, err := b.userPeer(chatID)
	if err != nil {
		return 0, err
	}
	if err := b.wait(ctx, chatID, 1); err != nil {
		return 0, err
	}
	file, err := uploader.NewUploader(b.conn.transfer).WithPartSize(messenger.UploadPartSize).FromBytes(ctx, name, image)
	if err != nil {
		return 0, mapErr("upload photo", err)
	}
	upd, err := message.NewSender(b.conn.api).To(peer).Media(ctx, message.UploadedPhoto(file, html.String(nil, captionHTML)))
	if err != nil {
		return 0, mapErr(fmt.Sprintf("send photo to %d", chatID), err)
	}
	id, _ := sentMessageID(upd, 0)
	return id, nil
}

// Forward implements messenger.Bot. The channel must be known to the bot
// (seen in an update or through ResolveChannel).
func (b *Bot) Forward(ctx context.Context, chatID int64, channelID int64, msgIDs []int, copy bool) error {
	peer, err := b.userPeer(chatID)
	if err != nil {
		return err
	}
	b.mu.Lock()
	hash, ok := b.channels[channelID]
	b.mu.Unlock()
	if !ok {
		return fmt.Errorf("forward from %d: the bot has not seen this channel: %w", channelID, messenger.ErrNotFound)
	}
	if err := b.wait(ctx, chatID, len(msgIDs)); err != nil {
		return err
	}
	rids := make([]int64, len(msgIDs))
	for i := range rids {
		rids[i] = randomID()
	}
	_, err = b.conn.api.MessagesForwardMessages(ctx, &tg.MessagesForwardMessagesRequest{
		FromPeer: &tg.InputPeerChannel{ChannelID: channelID, AccessHash: hash},
		ID:       msgIDs, RandomID: rids, ToPeer: peer, DropAuthor: copy,
	})
	if err != nil {
		return mapErr(fmt.Sprintf("forward %v from %d to %d", msgIDs, channelID, chatID), err)
	}
	return nil
}
