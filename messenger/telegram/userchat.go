package telegram

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/gotd/td/telegram/auth"
	"github.com/gotd/td/telegram/downloader"
	"github.com/gotd/td/telegram/updates"
	"github.com/gotd/td/telegram/updates/hook"
	"github.com/gotd/td/tg"

	"github.com/hoard/hoard/messenger"
)

// UserChat is a user's side of a private chat with a bot, through the real
// gotd client: what a person does in a messaging app, for tests and the
// terminal chat client. It signs in with a phone number and login code
// (the emulator's seeded users), sends text, starts the bot with a deep-link
// parameter, reads the chat's history, receives the bot's new and edited
// messages as they arrive (Next), presses inline buttons and downloads
// documents. It is safe for concurrent use.
type UserChat struct {
	conn   *conn
	self   messenger.User
	bot    *tg.User // with this user's access hash for it
	events chatQueue
}

// ChatMessage is a message of the chat with the bot.
type ChatMessage struct {
	ID int
	// Out reports a message the user sent.
	Out  bool
	Date time.Time
	// Text is the plain text (or caption); Entities names its formatting
	// (e.g. "messageEntityBold"), in order.
	Text     string
	Entities []string
	// Keyboard is the message's inline keyboard.
	Keyboard  messenger.Keyboard
	Document  *messenger.Document
	Photo     *messenger.Photo
	Forwarded bool
	// Edited reports that the bot edited the message; Next returns an
	// edit as a ChatMessage with the same ID.
	Edited bool
}

// NewUserChat connects, signs in with phone and code when the session in
// cfg is not signed in, and opens the chat with the bot botUsername. Close
// releases the connection.
func NewUserChat(ctx context.Context, cfg Config, phone, code, botUsername string) (*UserChat, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	opts, err := cfg.options()
	if err != nil {
		return nil, err
	}
	u := &UserChat{events: chatQueue{ready: make(chan struct{}, 1)}}
	d := tg.NewUpdateDispatcher()
	d.OnNewMessage(func(_ context.Context, _ tg.Entities, up *tg.UpdateNewMessage) error {
		u.receive(up.Message, false)
		return nil
	})
	d.OnEditMessage(func(_ context.Context, _ tg.Entities, up *tg.UpdateEditMessage) error {
		u.receive(up.Message, true)
		return nil
	})
	mgr := updates.New(updates.Config{Handler: d})
	opts.UpdateHandler = mgr
	opts.Middlewares = append(opts.Middlewares, hook.UpdateHook(mgr.Handle))
	u.conn, err = start(ctx, &cfg, opts, func(ctx context.Context, c *conn) error {
		if err := signIn(ctx, c, phone, code); err != nil {
			return err
		}
		me, err := c.client.Self(ctx)
		if err != nil {
			return mapErr("user chat: self", err)
		}
		u.self = convertUser(me)
		if u.bot, err = resolveBot(ctx, c.api, botUsername); err != nil {
			return err
		}
		started := make(chan struct{})
		go func() {
			err := mgr.Run(ctx, c.api, me.ID, updates.AuthOptions{OnStart: func(context.Context) { close(started) }})
			if err != nil && ctx.Err() == nil {
				cfg.Logger.Error("telegram: user chat updates stopped", "error", err)
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
	return u, nil
}

func signIn(ctx context.Context, c *conn, phone, code string) error {
	st, err := c.client.Auth().Status(ctx)
	if err != nil {
		return mapErr("user chat: auth status", err)
	}
	if st.Authorized {
		return nil
	}
	sent, err := c.client.Auth().SendCode(ctx, phone, auth.SendCodeOptions{})
	if err != nil {
		return mapErr("user chat: send code", err)
	}
	sc, ok := sent.(*tg.AuthSentCode)
	if !ok {
		return fmt.Errorf("user chat: send code: unexpected answer %T", sent)
	}
	if _, err := c.client.Auth().SignIn(ctx, phone, code, sc.PhoneCodeHash); err != nil {
		return mapErr("user chat: sign in", err)
	}
	return nil
}

func resolveBot(ctx context.Context, api *tg.Client, username string) (*tg.User, error) {
	res, err := api.ContactsResolveUsername(ctx, &tg.ContactsResolveUsernameRequest{Username: username})
	if err != nil {
		return nil, mapErr("user chat: resolve @"+username, err)
	}
	for _, x := range res.Users {
		if v, ok := x.(*tg.User); ok && v.Bot && v.ID == peerUserID(res.Peer) {
			return v, nil
		}
	}
	return nil, fmt.Errorf("user chat: @%s is not a bot: %w", username, messenger.ErrNotFound)
}

func peerUserID(p tg.PeerClass) int64 {
	if u, ok := p.(*tg.PeerUser); ok {
		return u.UserID
	}
	return 0
}

// Close disconnects.
func (u *UserChat) Close() error { return u.conn.close() }

// Self returns the signed-in user.
func (u *UserChat) Self() messenger.User { return u.self }

// Bot returns the bot the chat is with.
func (u *UserChat) Bot() messenger.User { return convertUser(u.bot) }

func (u *UserChat) botPeer() *tg.InputPeerUser {
	return &tg.InputPeerUser{UserID: u.bot.ID, AccessHash: u.bot.AccessHash}
}

// Send sends text to the bot and returns the message's id.
func (u *UserChat) Send(ctx context.Context, text string) (int, error) {
	rid := randomID()
	upd, err := u.conn.api.MessagesSendMessage(ctx, &tg.MessagesSendMessageRequest{Peer: u.botPeer(), Message: text, RandomID: rid})
	if err != nil {
		return 0, mapErr("user chat: send", err)
	}
	id, _ := sentMessageID(upd, rid)
	return id, nil
}

// Start starts the bot as its Start button does; param is the deep-link
// parameter of t.me/<bot>?start=<param> (empty for none). The bot receives
// "/start <param>". Starting also unblocks a blocked bot.
func (u *UserChat) Start(ctx context.Context, param string) (int, error) {
	rid := randomID()
	upd, err := u.conn.api.MessagesStartBot(ctx, &tg.MessagesStartBotRequest{
		Bot: &tg.InputUser{UserID: u.bot.ID, AccessHash: u.bot.AccessHash}, Peer: u.botPeer(), RandomID: rid, StartParam: param})
	if err != nil {
		return 0, mapErr("user chat: start", err)
	}
	id, _ := sentMessageID(upd, rid)
	return id, nil
}

// Press presses the inline button with data on the bot's message msgID and
// returns the bot's answer (the short notice; may be empty). A bot that
// does not answer in time is an error.
func (u *UserChat) Press(ctx context.Context, msgID int, data []byte) (string, error) {
	res, err := u.conn.api.MessagesGetBotCallbackAnswer(ctx, &tg.MessagesGetBotCallbackAnswerRequest{Peer: u.botPeer(), MsgID: msgID, Data: data})
	if err != nil {
		return "", mapErr(fmt.Sprintf("user chat: press a button of message %d", msgID), err)
	}
	return res.Message, nil
}

// History returns the chat's last limit messages (both directions), oldest
// first.
func (u *UserChat) History(ctx context.Context, limit int) ([]ChatMessage, error) {
	var out []ChatMessage
	offset := 0
	for len(out) < limit {
		res, err := u.conn.api.MessagesGetHistory(ctx, &tg.MessagesGetHistoryRequest{Peer: u.botPeer(), OffsetID: offset, Limit: min(100, limit-len(out))})
		if err != nil {
			return nil, mapErr("user chat: history", err)
		}
		mm, ok := res.AsModified()
		if !ok {
			return nil, fmt.Errorf("user chat: history: unexpected answer %T", res)
		}
		msgs := mm.GetMessages()
		for _, m := range msgs {
			if msg, ok := m.(*tg.Message); ok {
				out = append(out, chatMessage(msg, false))
			}
			offset = m.GetID()
		}
		if len(msgs) < min(100, limit) {
			break
		}
	}
	slices.Reverse(out)
	return out, nil
}

// Next returns the bot's next new or edited message, waiting for it until
// ctx ends. Messages are queued from sign-in on, none is lost.
func (u *UserChat) Next(ctx context.Context) (ChatMessage, error) {
	return u.events.next(ctx)
}

// Download writes a received document to w.
func (u *UserChat) Download(ctx context.Context, doc messenger.Document, w io.Writer) error {
	loc := &tg.InputDocumentFileLocation{ID: doc.ID, AccessHash: doc.AccessHash, FileReference: doc.FileReference}
	if _, err := downloader.NewDownloader().WithPartSize(512<<10).Download(u.conn.api, loc).Stream(ctx, w); err != nil {
		return mapErr(fmt.Sprintf("user chat: download %q", doc.FileName), err)
	}
	return nil
}

// receive queues a message the bot sent or edited in this chat.
func (u *UserChat) receive(m tg.MessageClass, edited bool) {
	msg, ok := m.(*tg.Message)
	if !ok || msg.Out || peerUserID(msg.PeerID) != u.bot.ID {
		return
	}
	u.events.push(chatMessage(msg, edited))
}

func chatMessage(m *tg.Message, edited bool) ChatMessage {
	out := ChatMessage{ID: m.ID, Out: m.Out, Date: time.Unix(int64(m.Date), 0).UTC(), Text: m.Message, Edited: edited}
	if _, ok := m.GetEditDate(); ok {
		out.Edited = true
	}
	for _, e := range m.Entities {
		out.Entities = append(out.Entities, e.TypeName())
	}
	_, out.Forwarded = m.GetFwdFrom()
	if rm, ok := m.ReplyMarkup.(*tg.ReplyInlineMarkup); ok {
		for _, row := range rm.Rows {
			var r []messenger.Button
			for _, b := range row.Buttons {
				switch t := b.Type.(type) {
				case *tg.InlineButtonTypeCallback:
					r = append(r, messenger.Button{Text: b.Text, Data: t.Data})
				case *tg.InlineButtonTypeURL:
					r = append(r, messenger.Button{Text: b.Text, URL: t.URL})
				}
			}
			out.Keyboard = append(out.Keyboard, r)
		}
	}
	switch media := m.Media.(type) {
	case *tg.MessageMediaDocument:
		if d, ok := media.Document.(*tg.Document); ok {
			out.Document = convertDocument(d)
		}
	case *tg.MessageMediaPhoto:
		if p, ok := media.Photo.(*tg.Photo); ok {
			out.Photo = convertPhoto(p)
		}
	}
	return out
}

// chatQueue is an unbounded queue of received messages: the updates
// manager never waits for a slow reader.
type chatQueue struct {
	mu    sync.Mutex
	items []ChatMessage
	ready chan struct{}
}

func (q *chatQueue) push(m ChatMessage) {
	q.mu.Lock()
	q.items = append(q.items, m)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (q *chatQueue) next(ctx context.Context) (ChatMessage, error) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			m := q.items[0]
			q.items = q.items[1:]
			q.mu.Unlock()
			return m, nil
		}
		q.mu.Unlock()
		select {
		case <-q.ready:
		case <-ctx.Done():
			return ChatMessage{}, fmt.Errorf("user chat: waiting for the bot: %w", ctx.Err())
		}
	}
}
