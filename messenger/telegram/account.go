package telegram

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/gotd/td/telegram/auth"
	"github.com/gotd/td/telegram/query/messages"
	"github.com/gotd/td/tg"
	"github.com/gotd/td/tgerr"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
)

// Account is the gotd implementation of messenger.Account. It is safe for
// concurrent use.
type Account struct {
	cfg  Config
	conn *conn

	mu       sync.Mutex
	phone    string
	codeHash string
}

var _ messenger.Account = (*Account)(nil)

// NewAccount connects a user account. The session is loaded from (and saved
// to) cfg.Sessions; a new session starts unauthorized (see SendCode). Close
// releases the connection.
func NewAccount(ctx context.Context, cfg Config) (*Account, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	opts, err := cfg.options()
	if err != nil {
		return nil, err
	}
	a := &Account{cfg: cfg}
	c, err := start(ctx, &a.cfg, opts, nil)
	if err != nil {
		return nil, err
	}
	a.conn = c
	return a, nil
}

// Close disconnects.
func (a *Account) Close() error { return a.conn.close() }

// Authorized implements messenger.Account.
func (a *Account) Authorized(ctx context.Context) (bool, error) {
	st, err := a.conn.client.Auth().Status(ctx)
	if err != nil {
		return false, mapErr("auth status", err)
	}
	return st.Authorized, nil
}

// SendCode implements messenger.Account. Call it once per login: re-sending
// codes in a loop earns day-long flood waits. The code may go to the app,
// by SMS or to the login e-mail (the administrator types what arrives); a
// session the platform signs in at once (auth.sentCodeSuccess) keeps no
// code request; a platform that wants a payment for the SMS or a login
// e-mail set up first is an EINVALID error that says what to do.
func (a *Account) SendCode(ctx context.Context, phone string) error {
	sent, err := a.conn.client.Auth().SendCode(ctx, phone, auth.SendCodeOptions{})
	if err != nil {
		return mapErr("send code", err)
	}
	var code *tg.AuthSentCode
	switch v := sent.(type) {
	case *tg.AuthSentCode:
		code = v
	case *tg.AuthSentCodeSuccess:
		return nil // signed in without a code: PendingCode reports none
	case *tg.AuthSentCodePaymentRequired:
		return hoard.Errorf(hoard.EINVALID, "The platform sends this number's login code by SMS only after a payment: sign in once in an official app (the code then arrives there), then log in here again.")
	default:
		return fmt.Errorf("send code: unexpected answer %T", sent)
	}
	if _, ok := code.Type.(*tg.AuthSentCodeTypeSetUpEmailRequired); ok {
		return hoard.Errorf(hoard.EINVALID, "The platform asks this account to set up a login e-mail before it sends codes: do it in an official app, then log in here again.")
	}
	a.mu.Lock()
	a.phone, a.codeHash = phone, code.PhoneCodeHash
	a.mu.Unlock()
	return nil
}

// PendingCode implements messenger.Account.
func (a *Account) PendingCode() (messenger.LoginCode, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return messenger.LoginCode{Phone: a.phone, Hash: a.codeHash}, a.codeHash != ""
}

// ResumeCode implements messenger.Account.
func (a *Account) ResumeCode(c messenger.LoginCode) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.phone, a.codeHash = c.Phone, c.Hash
}

// SignIn implements messenger.Account.
func (a *Account) SignIn(ctx context.Context, code string) error {
	a.mu.Lock()
	phone, hash := a.phone, a.codeHash
	a.mu.Unlock()
	if hash == "" {
		return hoard.Errorf(hoard.EINVALID, "no login in progress: send a code first")
	}
	if _, err := a.conn.client.Auth().SignIn(ctx, phone, code, hash); err != nil {
		var signUp *auth.SignUpRequired
		if errors.As(err, &signUp) {
			return hoard.Errorf(hoard.EINVALID, "this phone number has no account")
		}
		return mapErr("sign in", err)
	}
	a.mu.Lock()
	a.codeHash = ""
	a.mu.Unlock()
	return nil
}

// CheckPassword implements messenger.Account (SRP 2FA through gotd; the
// emulator does not model 2FA).
func (a *Account) CheckPassword(ctx context.Context, password string) error {
	if _, err := a.conn.client.Auth().Password(ctx, password); err != nil {
		return mapErr("check password", err)
	}
	return nil
}

// Self implements messenger.Account.
func (a *Account) Self(ctx context.Context) (messenger.User, error) {
	u, err := a.conn.client.Self(ctx)
	if err != nil {
		return messenger.User{}, mapErr("self", err)
	}
	return convertUser(u), nil
}

// ResolveChannel implements messenger.Account.
func (a *Account) ResolveChannel(ctx context.Context, ref messenger.ChannelRef) (messenger.Channel, error) {
	if ref.IsInvite() {
		inv, err := a.conn.api.MessagesCheckChatInvite(ctx, ref.InviteHash)
		if err != nil {
			return messenger.Channel{}, mapErr("check invite", err)
		}
		switch v := inv.(type) {
		case *tg.ChatInviteAlready:
			return chatToChannel("check invite", v.Chat)
		case *tg.ChatInvitePeek:
			return chatToChannel("check invite", v.Chat)
		case *tg.ChatInvite:
			return messenger.Channel{Title: platformTitle(v.Title), Broadcast: v.Broadcast, Member: false}, nil
		}
		return messenger.Channel{}, fmt.Errorf("check invite: unexpected answer %T", inv)
	}
	res, err := a.conn.api.ContactsResolveUsername(ctx, &tg.ContactsResolveUsernameRequest{Username: ref.Username})
	if err != nil {
		return messenger.Channel{}, mapErr("resolve "+ref.String(), err)
	}
	p, ok := res.Peer.(*tg.PeerChannel)
	if !ok {
		return messenger.Channel{}, fmt.Errorf("resolve %s: not a channel: %w", ref, messenger.ErrNotFound)
	}
	chat, ok := findChannel(res.Chats, p.ChannelID)
	if !ok {
		return messenger.Channel{}, fmt.Errorf("resolve %s: channel missing from answer", ref)
	}
	return chatToChannel("resolve "+ref.String(), chat)
}

func chatToChannel(op string, chat tg.ChatClass) (messenger.Channel, error) {
	switch c := chat.(type) {
	case *tg.Channel:
		return convertChannel(c), nil
	case *tg.ChannelForbidden:
		return messenger.Channel{}, fmt.Errorf("%s: %q: %w", op, platformTitle(c.Title), messenger.ErrAccessLost)
	}
	return messenger.Channel{}, fmt.Errorf("%s: not a channel (%T): %w", op, chat, messenger.ErrNotFound)
}

// JoinChannel implements messenger.Account. Already being a member and a
// sent join request are answers, not errors.
func (a *Account) JoinChannel(ctx context.Context, ref messenger.ChannelRef) (messenger.Channel, messenger.JoinStatus, error) {
	if ref.IsInvite() {
		upd, err := a.conn.api.MessagesImportChatInvite(ctx, ref.InviteHash)
		switch {
		case tgerr.Is(err, "USER_ALREADY_PARTICIPANT"):
			ch, err := a.ResolveChannel(ctx, ref)
			return ch, messenger.AlreadyMember, err
		case tgerr.Is(err, "INVITE_REQUEST_SENT"):
			ch, err := a.ResolveChannel(ctx, ref)
			return ch, messenger.RequestSent, err
		case err != nil:
			return messenger.Channel{}, "", mapErr("join "+ref.String(), err)
		}
		ch, err := channelFromUpdates(upd)
		if err != nil {
			return messenger.Channel{}, "", fmt.Errorf("join %s: %w", ref, err)
		}
		return ch, messenger.Joined, nil
	}
	ch, err := a.ResolveChannel(ctx, ref)
	if err != nil {
		return messenger.Channel{}, "", err
	}
	if ch.Member {
		return ch, messenger.AlreadyMember, nil
	}
	upd, err := a.conn.api.ChannelsJoinChannel(ctx, inputChannel(ch))
	switch {
	case tgerr.Is(err, "USER_ALREADY_PARTICIPANT"):
		return ch, messenger.AlreadyMember, nil
	case tgerr.Is(err, "INVITE_REQUEST_SENT"):
		return ch, messenger.RequestSent, nil
	case err != nil:
		return messenger.Channel{}, "", mapErr("join "+ref.String(), err)
	}
	if joined, err := channelFromUpdates(upd); err == nil {
		ch = joined
	}
	ch.Member = true
	return ch, messenger.Joined, nil
}

func channelFromUpdates(res tg.MessagesChatInviteJoinResultClass) (messenger.Channel, error) {
	ok, isOK := res.(*tg.MessagesChatInviteJoinResultOk)
	if !isOK {
		return messenger.Channel{}, fmt.Errorf("unexpected join answer %T", res)
	}
	var chats []tg.ChatClass
	switch v := ok.Updates.(type) {
	case *tg.Updates:
		chats = v.Chats
	case *tg.UpdatesCombined:
		chats = v.Chats
	}
	for _, c := range chats {
		if ch, ok := c.(*tg.Channel); ok {
			return convertChannel(ch), nil
		}
	}
	return messenger.Channel{}, errors.New("no channel in the answer")
}

// ChannelInfo implements messenger.Account.
func (a *Account) ChannelInfo(ctx context.Context, ch messenger.Channel) (messenger.Channel, error) {
	res, err := a.conn.api.ChannelsGetChannels(ctx, []tg.InputChannelClass{inputChannel(ch)})
	if err != nil {
		return messenger.Channel{}, mapErr(fmt.Sprintf("channel %d", ch.ID), err)
	}
	chat, ok := findChannel(res.GetChats(), ch.ID)
	if !ok {
		return messenger.Channel{}, fmt.Errorf("channel %d: %w", ch.ID, messenger.ErrNotFound)
	}
	return chatToChannel(fmt.Sprintf("channel %d", ch.ID), chat)
}

// Topics implements messenger.Account: every topic, General included, in
// ascending id order. Pages of 100 continue after the last topic of the
// previous page (its id, top message and that message's date), as tdlib
// does: the platform lists pinned topics first, then the others by last
// activity. A topic seen on an earlier page is not counted twice.
func (a *Account) Topics(ctx context.Context, ch messenger.Channel) ([]messenger.Topic, error) {
	var (
		out  []messenger.Topic
		seen = map[int]bool{}
		req  = &tg.MessagesGetForumTopicsRequest{Peer: inputPeer(ch), Limit: 100}
	)
	for {
		res, err := a.conn.api.MessagesGetForumTopics(ctx, req)
		if err != nil {
			return nil, mapErr(fmt.Sprintf("topics of %d", ch.ID), err)
		}
		var last *tg.ForumTopic
		n := 0
		for _, t := range res.Topics {
			ft, ok := t.(*tg.ForumTopic)
			if !ok {
				continue
			}
			last = ft
			if seen[ft.ID] {
				continue
			}
			seen[ft.ID] = true
			out = append(out, messenger.Topic{ID: ft.ID, Title: platformTitle(ft.Title), TopMessageID: ft.TopMessage})
			n++
		}
		if n == 0 || last == nil || len(out) >= res.Count || len(res.Topics) < req.Limit {
			break
		}
		req.OffsetTopic, req.OffsetID, req.OffsetDate = last.ID, last.TopMessage, 0
		for _, m := range res.Messages {
			if m.GetID() == last.TopMessage {
				if msg, ok := m.(interface{ GetDate() int }); ok {
					req.OffsetDate = msg.GetDate()
				}
			}
		}
	}
	slices.SortFunc(out, func(x, y messenger.Topic) int { return x.ID - y.ID })
	return out, nil
}

// History implements messenger.Account. Pages of 100 newest-first until the
// watermark, returned oldest first.
func (a *Account) History(ctx context.Context, ch messenger.Channel, q messenger.HistoryQuery) ([]messenger.Message, error) {
	qb := messages.NewQueryBuilder(a.conn.api)
	var it *messages.Iterator
	switch {
	case q.TopicID == 0 || q.TopicID == messenger.GeneralTopicID:
		it = qb.GetHistory(inputPeer(ch)).BatchSize(100).Iter()
	default:
		it = qb.GetReplies(inputPeer(ch)).MsgID(q.TopicID).BatchSize(100).Iter()
	}
	var out []messenger.Message
	for it.Next(ctx) {
		el := it.Value()
		if el.Msg.GetID() <= q.AfterID {
			break
		}
		m, ok := convertMessage(el.Msg, ch.Forum, ch.Protected)
		if !ok {
			continue
		}
		if q.TopicID == messenger.GeneralTopicID && m.TopicID != messenger.GeneralTopicID {
			continue
		}
		out = append(out, m)
	}
	if err := it.Err(); err != nil {
		return nil, mapErr(fmt.Sprintf("history of %d", ch.ID), err)
	}
	slices.Reverse(out)
	return out, nil
}

// HistoryPage implements messenger.Account the way reverse iteration
// reads a history (Telethon's _MessagesIter with reverse=True): offset_id
// W+1 with add_offset -limit asks for the limit messages just after W.
// min_id stays 0, as Telethon keeps it, because the platform has been seen
// to answer nothing when min_id lies far below the newest message; the
// messages at or below W are dropped here instead. The page is full when
// the platform returned limit messages.
func (a *Account) HistoryPage(ctx context.Context, ch messenger.Channel, q messenger.HistoryQuery) (messenger.HistoryPage, error) {
	const limit = messenger.HistoryPageSize
	var (
		res tg.MessagesMessagesClass
		err error
	)
	if q.TopicID == 0 || q.TopicID == messenger.GeneralTopicID {
		res, err = a.conn.api.MessagesGetHistory(ctx, &tg.MessagesGetHistoryRequest{Peer: inputPeer(ch),
			OffsetID: q.AfterID + 1, AddOffset: -limit, Limit: limit})
	} else {
		res, err = a.conn.api.MessagesGetReplies(ctx, &tg.MessagesGetRepliesRequest{Peer: inputPeer(ch), MsgID: q.TopicID,
			OffsetID: q.AfterID + 1, AddOffset: -limit, Limit: limit})
	}
	if err != nil {
		return messenger.HistoryPage{}, mapErr(fmt.Sprintf("history of %d after %d", ch.ID, q.AfterID), err)
	}
	mm, ok := res.AsModified()
	if !ok {
		return messenger.HistoryPage{}, fmt.Errorf("history of %d: unexpected answer %T", ch.ID, res)
	}
	raw := mm.GetMessages()
	page := messenger.HistoryPage{Last: q.AfterID}
	for _, msg := range raw {
		if msg.GetID() <= q.AfterID {
			continue
		}
		page.Last = max(page.Last, msg.GetID())
		m, ok := convertMessage(msg, ch.Forum, ch.Protected)
		if !ok || (q.TopicID == messenger.GeneralTopicID && m.TopicID != messenger.GeneralTopicID) {
			continue
		}
		page.Messages = append(page.Messages, m)
	}
	slices.SortFunc(page.Messages, func(x, y messenger.Message) int { return x.ID - y.ID })
	// A full page that brought nothing new would ask for itself again.
	page.More = len(raw) >= limit && page.Last > q.AfterID
	return page, nil
}

// Messages implements messenger.Account.
func (a *Account) Messages(ctx context.Context, ch messenger.Channel, ids []int) ([]messenger.Message, error) {
	in := make([]tg.InputMessageClass, len(ids))
	for i, id := range ids {
		in[i] = &tg.InputMessageID{ID: id}
	}
	res, err := a.conn.api.ChannelsGetMessages(ctx, &tg.ChannelsGetMessagesRequest{Channel: inputChannel(ch), ID: in})
	if err != nil {
		return nil, mapErr(fmt.Sprintf("messages of %d", ch.ID), err)
	}
	mm, ok := res.AsModified()
	if !ok {
		return nil, fmt.Errorf("messages of %d: unexpected answer %T", ch.ID, res)
	}
	var out []messenger.Message
	for _, m := range mm.GetMessages() {
		if msg, ok := convertMessage(m, ch.Forum, ch.Protected); ok {
			out = append(out, msg)
		}
	}
	return out, nil
}

// LatestDocument implements messenger.Account with one messages.search
// for documents, newest first.
func (a *Account) LatestDocument(ctx context.Context, ch messenger.Channel) (messenger.Message, bool, error) {
	res, err := a.conn.api.MessagesSearch(ctx, &tg.MessagesSearchRequest{Peer: inputPeer(ch), Filter: &tg.InputMessagesFilterDocument{}, Limit: 1})
	if err != nil {
		return messenger.Message{}, false, mapErr(fmt.Sprintf("newest document of %d", ch.ID), err)
	}
	mm, ok := res.AsModified()
	if !ok {
		return messenger.Message{}, false, fmt.Errorf("newest document of %d: unexpected answer %T", ch.ID, res)
	}
	for _, m := range mm.GetMessages() {
		if msg, ok := convertMessage(m, ch.Forum, ch.Protected); ok && msg.Document != nil {
			return msg, true, nil
		}
	}
	return messenger.Message{}, false, nil
}

// HomeDC is the data centre the account's session lives on (0 before the
// client learned it).
func (a *Account) HomeDC() int { return a.conn.client.Config().ThisDC }

// Resend implements messenger.Account: sendMedia with the existing document,
// no upload. A stale file reference is refreshed once from the source.
func (a *Account) Resend(ctx context.Context, dest, src messenger.Channel, msg messenger.Message, caption string) (int, error) {
	if src.Protected || msg.Protected {
		return 0, fmt.Errorf("resend message %d of %d: %w", msg.ID, src.ID, messenger.ErrProtected)
	}
	if msg.Document == nil {
		return 0, hoard.Errorf(hoard.EINVALID, "message %d has no document", msg.ID)
	}
	doc := *msg.Document
	for attempt := 0; ; attempt++ {
		rid := randomID()
		upd, err := a.conn.api.MessagesSendMedia(ctx, &tg.MessagesSendMediaRequest{
			Peer:     inputPeer(dest),
			Media:    &tg.InputMediaDocument{ID: &tg.InputDocument{ID: doc.ID, AccessHash: doc.AccessHash, FileReference: doc.FileReference}},
			Message:  caption,
			RandomID: rid,
		})
		if isFileRefError(err) && attempt == 0 {
			fresh, ferr := a.refetchDocument(ctx, src, msg.ID)
			if ferr != nil {
				return 0, ferr
			}
			doc = *fresh
			continue
		}
		if err != nil {
			return 0, mapErr(fmt.Sprintf("resend message %d", msg.ID), err)
		}
		id, ok := sentMessageID(upd, rid)
		if !ok {
			return 0, fmt.Errorf("resend message %d: no message id in the answer", msg.ID)
		}
		return id, nil
	}
}

// botAdminRights is the least right an administrator can have ("manage
// the channel"): enough for a bot to receive and copy the channel's posts.
var botAdminRights = tg.ChatAdminRights{Other: true}

// AddBotAdmin implements messenger.Account with contacts.resolveUsername and
// channels.editAdmin.
func (a *Account) AddBotAdmin(ctx context.Context, ch messenger.Channel, botUsername string) error {
	name := strings.TrimPrefix(botUsername, "@")
	op := fmt.Sprintf("make @%s an administrator of %d", name, ch.ID)
	res, err := a.conn.api.ContactsResolveUsername(ctx, &tg.ContactsResolveUsernameRequest{Username: name})
	if err != nil {
		return mapErr(op, err)
	}
	var bot *tg.User
	for _, u := range res.Users {
		if v, ok := u.(*tg.User); ok && v.ID == peerUserID(res.Peer) {
			bot = v
		}
	}
	if bot == nil || !bot.Bot {
		return hoard.Errorf(hoard.EINVALID, "%s: @%s is not a bot", op, name)
	}
	_, err = a.conn.api.ChannelsEditAdmin(ctx, &tg.ChannelsEditAdminRequest{Channel: inputChannel(ch),
		UserID: &tg.InputUser{UserID: bot.ID, AccessHash: bot.AccessHash}, AdminRights: botAdminRights})
	if tgerr.Is(err, "CHAT_ADMIN_REQUIRED", "RIGHT_FORBIDDEN", "USER_PRIVACY_RESTRICTED", "FRESH_CHANGE_ADMINS_FORBIDDEN", "ADMINS_TOO_MUCH", "BOTS_TOO_MUCH") {
		return fmt.Errorf("%s: %w: %w", op, messenger.ErrAdminRequired, err)
	}
	return mapErr(op, err)
}

func isFileRefError(err error) bool {
	return tgerr.Is(err, "FILE_REFERENCE_EXPIRED", "FILE_REFERENCE_INVALID")
}

// refetchDocument re-reads a message for a fresh file reference.
func (a *Account) refetchDocument(ctx context.Context, ch messenger.Channel, msgID int) (*messenger.Document, error) {
	msgs, err := a.Messages(ctx, ch, []int{msgID})
	if err != nil {
		return nil, fmt.Errorf("refresh file reference: %w", err)
	}
	if len(msgs) == 0 || msgs[0].Document == nil {
		return nil, fmt.Errorf("refresh file reference of message %d: %w", msgID, messenger.ErrNotFound)
	}
	return msgs[0].Document, nil
}

func randomID() int64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return int64(binary.LittleEndian.Uint64(b[:]))
}

// DeleteMessages implements messenger.Account with channels.deleteMessages,
// at most 100 ids per request (the platform's limit).
func (a *Account) DeleteMessages(ctx context.Context, ch messenger.Channel, ids []int) error {
	for len(ids) > 0 {
		n := min(len(ids), 100)
		if _, err := a.conn.api.ChannelsDeleteMessages(ctx, &tg.ChannelsDeleteMessagesRequest{Channel: inputChannel(ch), ID: ids[:n]}); err != nil {
			return mapErr(fmt.Sprintf("delete %d messages of %d", n, ch.ID), err)
		}
		ids = ids[n:]
	}
	return nil
}
