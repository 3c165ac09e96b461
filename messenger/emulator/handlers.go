package emulator

import (
	"cmp"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/gotd/td/bin"
	"github.com/gotd/td/tg"
	"github.com/gotd/td/tgerr"
)

type handler func(c *call, obj bin.Object) (bin.Encoder, []push, error)

var handlers map[string]handler

func init() {
	handlers = map[string]handler{
		"help.getConfig":                locked(helpGetConfig),
		"auth.exportAuthorization":      locked(authExportAuthorization),
		"auth.importAuthorization":      locked(authImportAuthorization),
		"auth.sendCode":                 locked(authSendCode),
		"auth.signIn":                   locked(authSignIn),
		"auth.importBotAuthorization":   locked(authImportBot),
		"auth.checkPassword":            locked(authCheckPassword),
		"account.getPassword":           locked(accountGetPassword),
		"users.getUsers":                locked(usersGetUsers),
		"contacts.resolveUsername":      locked(contactsResolveUsername),
		"channels.getChannels":          locked(channelsGetChannels),
		"channels.getMessages":          locked(channelsGetMessages),
		"channels.joinChannel":          locked(channelsJoinChannel),
		"messages.checkChatInvite":      locked(messagesCheckChatInvite),
		"messages.importChatInvite":     locked(messagesImportChatInvite),
		"messages.getHistory":           locked(messagesGetHistory),
		"messages.getReplies":           locked(messagesGetReplies),
		"messages.search":               locked(messagesSearch),
		"messages.getForumTopics":       locked(messagesGetForumTopics),
		"messages.sendMessage":          locked(messagesSendMessage),
		"messages.forwardMessages":      locked(messagesForwardMessages),
		"messages.sendMedia":            messagesSendMedia,
		"upload.getFile":                uploadGetFile,
		"upload.saveFilePart":           uploadSavePart,
		"upload.saveBigFilePart":        uploadSavePart,
		"updates.getState":              locked(updatesGetState),
		"updates.getDifference":         locked(updatesGetDifference),
		"updates.getChannelDifference":  locked(updatesGetChannelDifference),
		"messages.editMessage":          locked(messagesEditMessage),
		"messages.startBot":             locked(messagesStartBot),
		"messages.getBotCallbackAnswer": messagesGetBotCallbackAnswer,
		"messages.setBotCallbackAnswer": locked(messagesSetBotCallbackAnswer),
		"bots.setBotCommands":           locked(botsSetBotCommands),
		"channels.editAdmin":            locked(channelsEditAdmin),
		"channels.deleteMessages":       locked(channelsDeleteMessages),
	}
}

// locked runs h under e.mu and encodes its result (and pushes) there: TL
// encoding writes flags into the objects, so it must not race.
func locked(h func(c *call, obj bin.Object) (bin.Encoder, []pending, error)) handler {
	return func(c *call, obj bin.Object) (bin.Encoder, []push, error) {
		c.e.mu.Lock()
		return c.finishAndSave(h(c, obj))
	}
}

// pending is an update for one user, not yet encoded.
type pending struct {
	userID  int64
	updates *tg.Updates
}

// finishAndSave is finish, then releases e.mu and returns once the call's
// change (if it made one) is saved. Called under e.mu.
func (c *call) finishAndSave(res bin.Encoder, pend []pending, err error) (bin.Encoder, []push, error) {
	res, pushes, err := c.finish(res, pend, err)
	c.e.mu.Unlock()
	c.e.persist(c.change)
	return res, pushes, err
}

// finish encodes a result and its pushes, and numbers the call's change
// (if it made one) for persist, which finishAndSave runs after releasing
// e.mu and before the call is answered. Called under e.mu.
func (c *call) finish(res bin.Encoder, pend []pending, err error) (bin.Encoder, []push, error) {
	if c.e.dirty {
		c.e.dirty = false
		c.e.changes++
		c.change = c.e.changes
	}
	if err != nil {
		return nil, nil, err
	}
	out, err := encode(res)
	if err != nil {
		c.e.log.Error("emulator: encode result", "method", c.method, "error", err)
		return nil, nil, tgerr.New(500, "INTERNAL_ENCODE")
	}
	return out, c.encodePushes(pend), nil
}

// encodePushes encodes updates for their recipients. Called under e.mu.
func (c *call) encodePushes(pend []pending) []push {
	var pushes []push
	for _, p := range pend {
		data, err := encode(p.updates)
		if err != nil {
			c.e.log.Error("emulator: encode push", "method", c.method, "error", err)
			continue
		}
		pushes = append(pushes, push{userID: p.userID, data: data})
	}
	return pushes
}

func now() int { return int(time.Now().Unix()) }

func helpGetConfig(c *call, _ bin.Object) (bin.Encoder, []pending, error) {
	return &tg.Config{
		Date: now(), Expires: now() + 3600, ThisDC: c.dc,
		DCOptions:   c.e.dcOptions(),
		ChatSizeMax: 200, MegagroupSizeMax: 200000, ForwardedCountMax: 100,
		OnlineUpdatePeriodMs: 120000, OfflineBlurTimeoutMs: 5000, OfflineIdleTimeoutMs: 30000,
		OnlineCloudTimeoutMs: 300000, NotifyCloudDelayMs: 30000, NotifyDefaultDelayMs: 1500,
		PushChatPeriodMs: 60000, PushChatLimit: 2, EditTimeLimit: 172800, RevokeTimeLimit: 172800,
		RevokePmTimeLimit: 172800, RatingEDecay: 2419200, StickersRecentLimit: 200,
		ChannelsReadMediaPeriod: 604800, CallReceiveTimeoutMs: 20000, CallRingTimeoutMs: 90000,
		CallConnectTimeoutMs: 30000, CallPacketTimeoutMs: 10000, MeURLPrefix: "https://t.me/",
		CaptionLengthMax: 1024, MessageLengthMax: 4096, WebfileDCID: EntryDC,
	}, nil, nil
}

func authSendCode(c *call, obj bin.Object) (bin.Encoder, []pending, error) {
	r := obj.(*tg.AuthSendCodeRequest)
	phone := normPhone(r.PhoneNumber)
	u := c.e.phones[phone]
	if u == nil {
		return nil, nil, tgerr.New(400, "PHONE_NUMBER_INVALID")
	}
	if u.dc != c.dc {
		return nil, nil, tgerr.New(303, fmt.Sprintf("PHONE_MIGRATE_%d", u.dc))
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	hash := strconv.FormatUint(binary.LittleEndian.Uint64(b[:]), 16)
	if u.sentCode == "success" {
		// Signed in at once (the platform does so for a device it trusts).
		c.e.auth[c.session.AuthKey.ID] = u.id
		c.user = u
		c.track()
		return &tg.AuthSentCodeSuccess{Authorization: &tg.AuthAuthorization{User: c.e.userView(u.id, u)}}, nil, nil
	}
	c.e.codes[hash] = phone
	if c.e.opts.OnCode != nil {
		c.e.opts.OnCode("+"+phone, c.e.opts.LoginCode)
	}
	n := len(c.e.opts.LoginCode)
	var typ tg.AuthSentCodeTypeClass = &tg.AuthSentCodeTypeApp{Length: n}
	switch u.sentCode {
	case "sms":
		typ = &tg.AuthSentCodeTypeSMS{Length: n}
	case "email":
		typ = &tg.AuthSentCodeTypeEmailCode{EmailPattern: "h***@example.com", Length: n}
	case "setup_email":
		typ = &tg.AuthSentCodeTypeSetUpEmailRequired{}
	case "payment":
		return &tg.AuthSentCodePaymentRequired{StoreProduct: "premium", PhoneCodeHash: hash,
			SupportEmailAddress: "sms@example.com", SupportEmailSubject: "login code"}, nil, nil
	}
	return &tg.AuthSentCode{Type: typ, PhoneCodeHash: hash}, nil, nil
}

func authSignIn(c *call, obj bin.Object) (bin.Encoder, []pending, error) {
	r := obj.(*tg.AuthSignInRequest)
	phone, ok := c.e.codes[r.PhoneCodeHash]
	if !ok || phone != normPhone(r.PhoneNumber) {
		return nil, nil, tgerr.New(400, "PHONE_CODE_EXPIRED")
	}
	if r.PhoneCode != c.e.opts.LoginCode {
		return nil, nil, tgerr.New(400, "PHONE_CODE_INVALID")
	}
	u := c.e.phones[phone]
	if u.dc != c.dc {
		return nil, nil, tgerr.New(303, fmt.Sprintf("PHONE_MIGRATE_%d", u.dc))
	}
	delete(c.e.codes, r.PhoneCodeHash)
	if u.password != nil {
		c.e.awaiting2FA[c.session.AuthKey.ID] = u.id
		return nil, nil, tgerr.New(401, "SESSION_PASSWORD_NEEDED")
	}
	c.e.auth[c.session.AuthKey.ID] = u.id
	c.user = u
	c.track()
	return &tg.AuthAuthorization{User: c.e.userView(u.id, u)}, nil, nil
}

func authImportBot(c *call, obj bin.Object) (bin.Encoder, []pending, error) {
	r := obj.(*tg.AuthImportBotAuthorizationRequest)
	if c.e.bot == nil || r.BotAuthToken != c.e.bot.token {
		return nil, nil, tgerr.New(400, "ACCESS_TOKEN_INVALID")
	}
	if c.e.bot.dc != c.dc {
		return nil, nil, tgerr.New(303, fmt.Sprintf("USER_MIGRATE_%d", c.e.bot.dc))
	}
	c.e.auth[c.session.AuthKey.ID] = c.e.bot.id
	c.user = c.e.bot
	c.track()
	return &tg.AuthAuthorization{User: c.e.userView(c.e.bot.id, c.e.bot)}, nil, nil
}

func usersGetUsers(c *call, obj bin.Object) (bin.Encoder, []pending, error) {
	r := obj.(*tg.UsersGetUsersRequest)
	c.track()
	var out []tg.UserClass
	for _, in := range r.ID {
		switch v := in.(type) {
		case *tg.InputUserSelf:
			out = append(out, c.e.userView(c.user.id, c.user))
		case *tg.InputUser:
			if u := c.e.users[v.UserID]; u != nil && v.AccessHash == c.e.accessHash(c.user.id, u.id) {
				out = append(out, c.e.userView(c.user.id, u))
			}
		}
	}
	return &tg.UserClassVector{Elems: out}, nil, nil
}

func contactsResolveUsername(c *call, obj bin.Object) (bin.Encoder, []pending, error) {
	r := obj.(*tg.ContactsResolveUsernameRequest)
	id, ok := c.e.usernames[strings.ToLower(r.Username)]
	if !ok {
		return nil, nil, tgerr.New(400, "USERNAME_NOT_OCCUPIED")
	}
	if u := c.e.users[id]; u != nil {
		return &tg.ContactsResolvedPeer{Peer: &tg.PeerUser{UserID: id}, Users: []tg.UserClass{c.e.userView(c.user.id, u)}}, nil, nil
	}
	ch := c.e.channels[id]
	return &tg.ContactsResolvedPeer{Peer: &tg.PeerChannel{ChannelID: id}, Chats: []tg.ChatClass{c.e.channelView(c.user.id, ch)}}, nil, nil
}

func channelsGetChannels(c *call, obj bin.Object) (bin.Encoder, []pending, error) {
	r := obj.(*tg.ChannelsGetChannelsRequest)
	var chats []tg.ChatClass
	for _, in := range r.ID {
		ch, err := c.e.inputChannel(c.user.id, in)
		if err != nil {
			return nil, nil, err
		}
		chats = append(chats, c.e.channelView(c.user.id, ch))
	}
	return &tg.MessagesChats{Chats: chats}, nil, nil
}

func (c *call) channelMessages(ch *channel, msgs []*message, count int) *tg.MessagesChannelMessages {
	out := &tg.MessagesChannelMessages{Pts: ch.pts, Count: count, Chats: []tg.ChatClass{c.e.channelView(c.user.id, ch)}}
	for _, m := range msgs {
		out.Messages = append(out.Messages, c.e.messageView(c.user.id, ch, m))
	}
	return out
}

func channelsGetMessages(c *call, obj bin.Object) (bin.Encoder, []pending, error) {
	r := obj.(*tg.ChannelsGetMessagesRequest)
	ch, err := c.e.inputChannel(c.user.id, r.Channel)
	if err != nil {
		return nil, nil, err
	}
	if err := c.e.readable(c.user.id, ch); err != nil {
		return nil, nil, err
	}
	out := c.channelMessages(ch, nil, 0)
	for _, in := range r.ID {
		id := 0
		if v, ok := in.(*tg.InputMessageID); ok {
			id = v.ID
		}
		if id >= 1 && id <= len(ch.msgs) {
			out.Messages = append(out.Messages, c.e.messageView(c.user.id, ch, ch.msgs[id-1]))
		} else {
			out.Messages = append(out.Messages, &tg.MessageEmpty{ID: id})
		}
	}
	out.Count = len(out.Messages)
	return out, nil, nil
}

func channelsJoinChannel(c *call, obj bin.Object) (bin.Encoder, []pending, error) {
	r := obj.(*tg.ChannelsJoinChannelRequest)
	ch, err := c.e.inputChannel(c.user.id, r.Channel)
	if err != nil {
		return nil, nil, err
	}
	if ch.members[c.user.id] != roleNone {
		return nil, nil, tgerr.New(400, "USER_ALREADY_PARTICIPANT")
	}
	if ch.username == "" {
		return nil, nil, tgerr.New(400, "CHANNEL_PRIVATE")
	}
	ch.members[c.user.id] = roleMember
	c.e.dirty = true
	return &tg.MessagesChatInviteJoinResultOk{Updates: &tg.Updates{Chats: []tg.ChatClass{c.e.channelView(c.user.id, ch)}, Date: now()}}, nil, nil
}

func messagesCheckChatInvite(c *call, obj bin.Object) (bin.Encoder, []pending, error) {
	r := obj.(*tg.MessagesCheckChatInviteRequest)
	ch := c.e.invites[r.Hash]
	if ch == nil {
		return nil, nil, tgerr.New(400, "INVITE_HASH_EXPIRED")
	}
	if ch.members[c.user.id] != roleNone {
		return &tg.ChatInviteAlready{Chat: c.e.channelView(c.user.id, ch)}, nil, nil
	}
	return &tg.ChatInvite{Channel: true, Broadcast: !ch.forum, Megagroup: ch.forum, Public: ch.username != "", RequestNeeded: ch.joinReq,
		Title: ch.title, Photo: &tg.PhotoEmpty{}, ParticipantsCount: len(ch.members)}, nil, nil
}

func messagesImportChatInvite(c *call, obj bin.Object) (bin.Encoder, []pending, error) {
	r := obj.(*tg.MessagesImportChatInviteRequest)
	ch := c.e.invites[r.Hash]
	if ch == nil {
		return nil, nil, tgerr.New(400, "INVITE_HASH_EXPIRED")
	}
	if ch.members[c.user.id] != roleNone {
		return nil, nil, tgerr.New(400, "USER_ALREADY_PARTICIPANT")
	}
	if ch.joinReq {
		return nil, nil, tgerr.New(400, "INVITE_REQUEST_SENT")
	}
	ch.members[c.user.id] = roleMember
	c.e.dirty = true
	return &tg.MessagesChatInviteJoinResultOk{Updates: &tg.Updates{Chats: []tg.ChatClass{c.e.channelView(c.user.id, ch)}, Date: now()}}, nil, nil
}

// page applies the platform's paging to sel (ascending ids) and returns the
// page newest first.
func page(sel []*message, offsetID, addOffset, limit, maxID, minID int) []*message {
	var desc []*message
	for i := len(sel) - 1; i >= 0; i-- {
		m := sel[i]
		if m.deleted || (maxID != 0 && m.id >= maxID) || (minID != 0 && m.id <= minID) {
			continue
		}
		desc = append(desc, m)
	}
	start := 0
	if offsetID != 0 {
		start = len(desc)
		for i, m := range desc {
			if m.id < offsetID {
				start = i
				break
			}
		}
	}
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	// The window is [offset, offset+limit) with offset = offsetFromID +
	// add_offset (core.telegram.org/api/offsets); a negative offset cuts
	// the window short rather than moving it: offset_id = W+1 with
	// add_offset = -limit is "the limit messages just after W", the
	// ones newer than W only, which reverse iteration relies on
	// (Telethon's _MessagesIter with reverse=True).
	start += addOffset
	end := min(start+limit, len(desc))
	start = max(start, 0)
	if start >= end {
		return nil
	}
	return desc[start:end]
}

func (c *call) readableChannel(in tg.InputPeerClass) (*channel, error) {
	p, err := c.e.inputPeer(c.user.id, in)
	if err != nil {
		return nil, err
	}
	if p.c == nil {
		return nil, tgerr.New(400, "PEER_ID_INVALID")
	}
	if err := c.e.readable(c.user.id, p.c); err != nil {
		return nil, err
	}
	return p.c, nil
}

func messagesGetHistory(c *call, obj bin.Object) (bin.Encoder, []pending, error) {
	r := obj.(*tg.MessagesGetHistoryRequest)
	if p, err := c.e.inputPeer(c.user.id, r.Peer); err == nil && p.u != nil {
		return c.privateHistory(p.u, r), nil, nil
	}
	ch, err := c.readableChannel(r.Peer)
	if err != nil {
		return nil, nil, err
	}
	return c.channelMessages(ch, page(ch.msgs, r.OffsetID, r.AddOffset, r.Limit, r.MaxID, r.MinID), len(ch.msgs)), nil, nil
}

// privateHistory pages the caller's private chat with other.
func (c *call) privateHistory(other *user, r *tg.MessagesGetHistoryRequest) *tg.MessagesMessagesSlice {
	var sel []*message
	for _, m := range c.user.box {
		if m.peer == other.id {
			sel = append(sel, m)
		}
	}
	out := &tg.MessagesMessagesSlice{Count: len(sel),
		Users: []tg.UserClass{c.e.userView(c.user.id, other), c.e.userView(c.user.id, c.user)}}
	seen := map[int64]bool{}
	for _, m := range page(sel, r.OffsetID, r.AddOffset, r.Limit, r.MaxID, r.MinID) {
		out.Messages = append(out.Messages, c.e.privateView(c.user, m))
		if ch := c.e.channels[m.fwdFrom]; ch != nil && !seen[ch.id] {
			seen[ch.id] = true
			out.Chats = append(out.Chats, c.e.channelView(c.user.id, ch))
		}
	}
	return out
}

func messagesGetReplies(c *call, obj bin.Object) (bin.Encoder, []pending, error) {
	r := obj.(*tg.MessagesGetRepliesRequest)
	ch, err := c.readableChannel(r.Peer)
	if err != nil {
		return nil, nil, err
	}
	var sel []*message
	for _, m := range ch.msgs {
		if m.id == r.MsgID {
			continue
		}
		if (ch.forum && m.topicID == r.MsgID) || (!ch.forum && m.replyTo == r.MsgID) {
			sel = append(sel, m)
		}
	}
	return c.channelMessages(ch, page(sel, r.OffsetID, r.AddOffset, r.Limit, r.MaxID, r.MinID), len(sel)), nil, nil
}

// channelsDeleteMessages deletes posts of a channel the caller may post
// in; ids that are not there (or deleted already) are left alone.
func channelsDeleteMessages(c *call, obj bin.Object) (bin.Encoder, []pending, error) {
	r := obj.(*tg.ChannelsDeleteMessagesRequest)
	ch, err := c.e.inputChannel(c.user.id, r.Channel)
	if err != nil {
		return nil, nil, err
	}
	if err := c.e.writable(c.user.id, ch); err != nil {
		return nil, nil, err
	}
	n := 0
	for _, id := range r.ID {
		if ch.deletePost(id) {
			n++
		}
	}
	if n > 0 {
		c.e.dirty = true
	}
	return &tg.MessagesAffectedMessages{Pts: ch.pts, PtsCount: 0}, nil, nil
}

func messagesSearch(c *call, obj bin.Object) (bin.Encoder, []pending, error) {
	r := obj.(*tg.MessagesSearchRequest)
	ch, err := c.readableChannel(r.Peer)
	if err != nil {
		return nil, nil, err
	}
	q := strings.ToLower(r.Q)
	var sel []*message
	for _, m := range ch.msgs {
		if m.deleted || m.action != nil || (r.TopMsgID != 0 && m.topicID != r.TopMsgID) {
			continue
		}
		switch r.Filter.(type) {
		case *tg.InputMessagesFilterDocument:
			if m.doc == 0 {
				continue
			}
		case *tg.InputMessagesFilterPhotos:
			if m.photo == 0 {
				continue
			}
		}
		if q != "" {
			name := ""
			if d := c.e.docs[m.doc]; d != nil {
				name = d.name
			}
			if !strings.Contains(strings.ToLower(m.text), q) && !strings.Contains(strings.ToLower(name), q) {
				continue
			}
		}
		if (r.MinDate != 0 && m.date < r.MinDate) || (r.MaxDate != 0 && m.date > r.MaxDate) {
			continue
		}
		sel = append(sel, m)
	}
	return c.channelMessages(ch, page(sel, r.OffsetID, r.AddOffset, r.Limit, r.MaxID, r.MinID), len(sel)), nil, nil
}

// messagesGetForumTopics lists a forum's topics in the platform's order,
// one page after the cursor (see forumTopicPage).
func messagesGetForumTopics(c *call, obj bin.Object) (bin.Encoder, []pending, error) {
	r := obj.(*tg.MessagesGetForumTopicsRequest)
	ch, err := c.readableChannel(r.Peer)
	if err != nil {
		return nil, nil, err
	}
	if !ch.forum {
		return nil, nil, tgerr.New(400, "CHANNEL_FORUM_MISSING")
	}
	all := ch.topicsByActivity(r.Q)
	out := &tg.MessagesForumTopics{Count: len(all), Pts: ch.pts, Chats: []tg.ChatClass{c.e.channelView(c.user.id, ch)}}
	for _, t := range forumTopicPage(all, r) {
		out.Topics = append(out.Topics, &tg.ForumTopic{
			ID: t.id, Date: t.date, Peer: &tg.PeerChannel{ChannelID: ch.id}, Title: t.title, IconColor: 0x6FB9F0,
			TopMessage: t.top.id, FromID: &tg.PeerChannel{ChannelID: ch.id}, NotifySettings: tg.PeerNotifySettings{},
			Pinned: t.pin > 0,
		})
		out.Messages = append(out.Messages, c.e.messageView(c.user.id, ch, t.top))
	}
	return out, nil, nil
}

// randomKey dedupes sends by (sender, random_id).
func randomKey(u *user, id int64) string {
	return strconv.FormatInt(u.id, 10) + "/" + strconv.FormatInt(id, 10)
}

// postChannel appends m to ch and returns the sender's result and the pushes
// to the other members. Called under e.mu.
func (c *call) postChannel(ch *channel, m *message, randomID int64) (*tg.Updates, []pending) {
	c.e.appendMessage(ch, m)
	if randomID != 0 {
		c.e.rememberRandomID(randomKey(c.user, randomID), m.id)
	}
	res := &tg.Updates{Date: now(), Updates: []tg.UpdateClass{
		&tg.UpdateMessageID{ID: m.id, RandomID: randomID},
		&tg.UpdateNewChannelMessage{Message: c.e.messageView(c.user.id, ch, m), Pts: m.pts, PtsCount: 1},
	}, Chats: []tg.ChatClass{c.e.channelView(c.user.id, ch)}}
	var pend []pending
	for uid, r := range ch.members {
		if uid == c.user.id || r == roleNone {
			continue
		}
		pend = append(pend, pending{userID: uid, updates: &tg.Updates{Date: now(), Updates: []tg.UpdateClass{
			&tg.UpdateNewChannelMessage{Message: c.e.messageView(uid, ch, m), Pts: m.pts, PtsCount: 1},
		}, Chats: []tg.ChatClass{c.e.channelView(uid, ch)}}})
	}
	return res, pend
}

// sendPrivate stores a private message in both boxes. Called under e.mu.
func (e *Emulator) sendPrivate(c *call, from, to *user, m *message) (*tg.Updates, []pending) {
	mine := *m
	mine.out, mine.peer = true, to.id
	theirs := *m
	theirs.out, theirs.peer = false, from.id
	e.appendPrivate(from, &mine)
	e.appendPrivate(to, &theirs)
	mine.twin, theirs.twin = theirs.id, mine.id
	res := &tg.Updates{Date: now(), Updates: []tg.UpdateClass{
		&tg.UpdateNewMessage{Message: e.privateView(from, &mine), Pts: mine.pts, PtsCount: 1},
	}, Users: []tg.UserClass{e.userView(from.id, to), e.userView(from.id, from)}}
	pend := []pending{{userID: to.id, updates: &tg.Updates{Date: now(), Updates: []tg.UpdateClass{
		&tg.UpdateNewMessage{Message: e.privateView(to, &theirs), Pts: theirs.pts, PtsCount: 1},
	}, Users: []tg.UserClass{e.userView(to.id, from), e.userView(to.id, to)}}}}
	return res, pend
}

// deliverTo posts m to a resolved peer. Called under e.mu.
func (c *call) deliverTo(p peer, m *message, randomID int64) (*tg.Updates, []pending, error) {
	if p.c != nil {
		if err := c.e.writable(c.user.id, p.c); err != nil {
			return nil, nil, err
		}
		if p.c.forum {
			m.topicID = 1
			m.from = c.user.id
		}
		res, pend := c.postChannel(p.c, m, randomID)
		return res, pend, nil
	}
	if p.u == nil || p.u.id == c.user.id {
		return nil, nil, tgerr.New(400, "PEER_ID_INVALID")
	}
	if p.u.blocked[c.user.id] {
		return nil, nil, tgerr.New(400, "USER_IS_BLOCKED")
	}
	if c.user.blocked[p.u.id] {
		return nil, nil, tgerr.New(400, "YOU_BLOCKED_USER")
	}
	res, pend := c.e.sendPrivate(c, c.user, p.u, m)
	if randomID != 0 {
		upd := res.Updates[0].(*tg.UpdateNewMessage)
		id := upd.Message.(*tg.Message).ID
		c.e.rememberRandomID(randomKey(c.user, randomID), id)
		res.Updates = append([]tg.UpdateClass{&tg.UpdateMessageID{ID: id, RandomID: randomID}}, res.Updates...)
	}
	return res, pend, nil
}

func replyTo(in tg.InputReplyToClass) int {
	if r, ok := in.(*tg.InputReplyToMessage); ok {
		return r.ReplyToMsgID
	}
	return 0
}

func messagesSendMessage(c *call, obj bin.Object) (bin.Encoder, []pending, error) {
	r := obj.(*tg.MessagesSendMessageRequest)
	if strings.TrimSpace(r.Message) == "" {
		return nil, nil, tgerr.New(400, "MESSAGE_EMPTY")
	}
	if utf16Len(r.Message) > maxMessageText {
		return nil, nil, tgerr.New(400, "MESSAGE_TOO_LONG")
	}
	if _, dup := c.e.randomIDs[randomKey(c.user, r.RandomID)]; dup && r.RandomID != 0 {
		return nil, nil, tgerr.New(400, "RANDOM_ID_DUPLICATE")
	}
	rm, err := c.inlineMarkup(r.ReplyMarkup)
	if err != nil {
		return nil, nil, err
	}
	p, err := c.e.inputPeer(c.user.id, r.Peer)
	if err != nil {
		return nil, nil, err
	}
	if err := c.e.botFlood(c.user, p.id(), 1); err != nil {
		return nil, nil, err
	}
	return c.deliverTo(p, &message{text: r.Message, entities: r.Entities, date: now(), replyTo: replyTo(r.ReplyTo), markup: rm}, r.RandomID)
}

// Text limits of the platform, in UTF-16 code units.
const (
	maxMessageText = 4096
	maxCaption     = 1024
	maxButtonData  = 64
)

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// inlineMarkup checks the reply markup of a message: bots may attach an
// inline keyboard of callback and URL buttons (data up to 64 bytes); a
// user's markup is ignored, as the platform does.
func (c *call) inlineMarkup(in tg.ReplyMarkupClass) (*tg.ReplyInlineMarkup, error) {
	if in == nil || !c.user.bot {
		return nil, nil
	}
	rm, ok := in.(*tg.ReplyInlineMarkup)
	if !ok {
		return nil, tgerr.New(400, "REPLY_MARKUP_INVALID")
	}
	for _, row := range rm.Rows {
		for _, b := range row.Buttons {
			if b.Text == "" {
				return nil, tgerr.New(400, "BUTTON_TEXT_INVALID")
			}
			switch t := b.Type.(type) {
			case *tg.InlineButtonTypeCallback:
				if len(t.Data) == 0 || len(t.Data) > maxButtonData {
					return nil, tgerr.New(400, "BUTTON_DATA_INVALID")
				}
			case *tg.InlineButtonTypeURL:
				if !strings.HasPrefix(t.URL, "https://") && !strings.HasPrefix(t.URL, "http://") && !strings.HasPrefix(t.URL, "tg://") {
					return nil, tgerr.New(400, "BUTTON_URL_INVALID")
				}
			default:
				return nil, tgerr.New(400, "BUTTON_TYPE_INVALID")
			}
		}
	}
	return rm, nil
}

// messagesForwardMessages forwards (or, with DropAuthor, copies) posts of
// a channel: see checkForwardIDs and forwardable for which it refuses and
// which it skips.
func messagesForwardMessages(c *call, obj bin.Object) (bin.Encoder, []pending, error) {
	r := obj.(*tg.MessagesForwardMessagesRequest)
	if err := checkForwardIDs(r); err != nil {
		return nil, nil, err
	}
	from, err := c.readableChannel(r.FromPeer)
	if err != nil {
		return nil, nil, err
	}
	if c.user.bot && from.members[c.user.id] < roleAdmin {
		// A bot reads a channel only as its administrator.
		return nil, nil, tgerr.New(400, "CHANNEL_PRIVATE")
	}
	if from.protected {
		return nil, nil, tgerr.New(400, "CHAT_FORWARDS_RESTRICTED")
	}
	to, err := c.e.inputPeer(c.user.id, r.ToPeer)
	if err != nil {
		return nil, nil, err
	}
	src, rids, err := c.forwardable(from, r)
	if err != nil {
		return nil, nil, err
	}
	if err := c.e.botFlood(c.user, to.id(), len(src)); err != nil {
		return nil, nil, err
	}
	res := &tg.Updates{Date: now()}
	var pend []pending
	for i, s := range src {
		m := &message{text: s.text, entities: s.entities, doc: s.doc, photo: s.photo, date: now(), groupedID: s.groupedID}
		if r.DropMediaCaptions && (s.doc != 0 || s.photo != 0) {
			m.text, m.entities = "", nil
		}
		if !r.DropAuthor {
			m.fwdFrom, m.fwdPost, m.fwdDate = from.id, s.id, s.date
		}
		u, p, err := c.deliverTo(to, m, rids[i])
		if err != nil {
			return nil, nil, err
		}
		res.Updates = append(res.Updates, u.Updates...)
		if i == 0 {
			res.Users, res.Chats = u.Users, u.Chats
		}
		pend = append(pend, p...)
	}
	if c.user.bot {
		at := time.Now()
		for range src {
			c.e.botForwards[to.id()] = append(c.e.botForwards[to.id()], at)
		}
	}
	if slices.IndexFunc(res.Chats, func(ch tg.ChatClass) bool { return ch.GetID() == from.id }) < 0 {
		res.Chats = append(res.Chats, c.e.channelView(c.user.id, from))
	}
	return res, pend, nil
}

func updatesGetState(c *call, _ bin.Object) (bin.Encoder, []pending, error) {
	c.track()
	return &tg.UpdatesState{Pts: c.user.pts, Qts: c.user.qts, Date: now()}, nil, nil
}

func updatesGetDifference(c *call, obj bin.Object) (bin.Encoder, []pending, error) {
	r := obj.(*tg.UpdatesGetDifferenceRequest)
	c.track()
	state := tg.UpdatesState{Pts: c.user.pts, Qts: c.user.qts, Date: now()}
	if r.Pts >= c.user.pts && r.Qts >= c.user.qts {
		return &tg.UpdatesDifferenceEmpty{Date: now()}, nil, nil
	}
	out := &tg.UpdatesDifference{State: state}
	seen := map[int64]bool{}
	for _, ev := range c.user.qtsLog {
		if ev.Qts <= r.Qts {
			continue
		}
		out.OtherUpdates = append(out.OtherUpdates, c.e.participantUpdate(c.user, ev))
		if ch := c.e.channels[ev.ChannelID]; ch != nil && !seen[ch.id] {
			seen[ch.id] = true
			out.Chats = append(out.Chats, c.e.channelView(c.user.id, ch))
		}
		if u := c.e.users[ev.ActorID]; u != nil && !seen[u.id] {
			seen[u.id] = true
			out.Users = append(out.Users, c.e.userView(c.user.id, u))
		}
	}
	for _, m := range c.user.box {
		if m.pts <= r.Pts {
			continue
		}
		out.NewMessages = append(out.NewMessages, c.e.privateView(c.user, m))
		if u := c.e.users[m.peer]; u != nil && !seen[u.id] {
			seen[u.id] = true
			out.Users = append(out.Users, c.e.userView(c.user.id, u))
		}
		if ch := c.e.channels[m.fwdFrom]; ch != nil && !seen[ch.id] {
			seen[ch.id] = true
			out.Chats = append(out.Chats, c.e.channelView(c.user.id, ch))
		}
	}
	return out, nil, nil
}

func updatesGetChannelDifference(c *call, obj bin.Object) (bin.Encoder, []pending, error) {
	r := obj.(*tg.UpdatesGetChannelDifferenceRequest)
	ch, err := c.e.inputChannel(c.user.id, r.Channel)
	if err != nil {
		return nil, nil, err
	}
	if err := c.e.readable(c.user.id, ch); err != nil {
		return nil, nil, err
	}
	limit := r.Limit
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	var msgs []tg.MessageClass
	final := true
	pts := ch.pts
	for _, m := range ch.msgs {
		if m.pts <= r.Pts {
			continue
		}
		if len(msgs) == limit {
			final = false
			break
		}
		msgs = append(msgs, c.e.messageView(c.user.id, ch, m))
		pts = m.pts
	}
	if len(msgs) == 0 {
		return &tg.UpdatesChannelDifferenceEmpty{Final: true, Pts: ch.pts}, nil, nil
	}
	return &tg.UpdatesChannelDifference{Final: final, Pts: pts, NewMessages: msgs,
		Chats: []tg.ChatClass{c.e.channelView(c.user.id, ch)}}, nil, nil
}

// Files.

const (
	partMax  = 512 << 10
	chunkMax = 1 << 20
)

// maxParts is the most parts one upload of u may have: 4,000, or 8,000
// with Premium (SetPartCaps scales them down for tests). Called under e.mu.
func (e *Emulator) maxParts(u *user) int {
	if u.premium {
		return cmp.Or(e.partCaps[1], 8000)
	}
	return cmp.Or(e.partCaps[0], 4000)
}

// fileMigrate is the platform's answer to a file request on a DC that
// does not hold the file.
func fileMigrate(dc int) error { return tgerr.New(303, fmt.Sprintf("FILE_MIGRATE_%d", dc)) }

func uploadGetFile(c *call, obj bin.Object) (bin.Encoder, []push, error) {
	r := obj.(*tg.UploadGetFileRequest)
	if r.Limit <= 0 || r.Limit > chunkMax {
		return nil, nil, tgerr.New(400, "LIMIT_INVALID")
	}
	if r.Offset < 0 {
		return nil, nil, tgerr.New(400, "OFFSET_INVALID")
	}
	if r.Precise {
		if r.Offset%1024 != 0 || r.Limit%1024 != 0 {
			return nil, nil, tgerr.New(400, "LIMIT_INVALID")
		}
	} else if r.Offset%4096 != 0 || r.Limit%4096 != 0 || chunkMax%r.Limit != 0 {
		return nil, nil, tgerr.New(400, "LIMIT_INVALID")
	}
	if r.Offset/chunkMax != (r.Offset+int64(r.Limit)-1)/chunkMax {
		return nil, nil, tgerr.New(400, "LIMIT_INVALID")
	}
	c.e.mu.Lock()
	var (
		doc      document
		fileType tg.StorageFileTypeClass = &tg.StorageFilePartial{}
	)
	switch loc := r.Location.(type) {
	case *tg.InputDocumentFileLocation:
		d := c.e.docs[loc.ID]
		switch {
		case d == nil || loc.AccessHash != c.e.accessHash(0, d.id):
			c.e.mu.Unlock()
			return nil, nil, tgerr.New(400, "FILE_ID_INVALID")
		case d.dc != c.dc:
			c.e.mu.Unlock()
			return nil, nil, fileMigrate(d.dc)
		case string(loc.FileReference) != string(c.e.fileReference("d", d.id, d.refVer)):
			c.e.mu.Unlock()
			return nil, nil, tgerr.New(400, "FILE_REFERENCE_EXPIRED")
		case loc.ThumbSize != "":
			c.e.mu.Unlock()
			return nil, nil, tgerr.New(400, "LOCATION_INVALID")
		}
		doc = *d
	case *tg.InputPhotoFileLocation:
		p := c.e.photos[loc.ID]
		switch {
		case p == nil || loc.AccessHash != c.e.accessHash(0, p.id):
			c.e.mu.Unlock()
			return nil, nil, tgerr.New(400, "FILE_ID_INVALID")
		case p.dc != c.dc:
			c.e.mu.Unlock()
			return nil, nil, fileMigrate(p.dc)
		case string(loc.FileReference) != string(c.e.fileReference("p", p.id, p.refVer)):
			c.e.mu.Unlock()
			return nil, nil, tgerr.New(400, "FILE_REFERENCE_EXPIRED")
		case loc.ThumbSize != "x":
			c.e.mu.Unlock()
			return nil, nil, tgerr.New(400, "LOCATION_INVALID")
		}
		doc = document{size: p.size, path: p.path}
		fileType = &tg.StorageFileJpeg{}
	default:
		c.e.mu.Unlock()
		return nil, nil, tgerr.New(400, "LOCATION_INVALID")
	}
	c.e.mu.Unlock()
	buf := make([]byte, r.Limit)
	n, err := readDoc(&doc, buf, r.Offset)
	if err != nil {
		return nil, nil, fmt.Errorf("read document %d: %w", doc.id, err)
	}
	return &tg.UploadFile{Type: fileType, Mtime: now(), Bytes: buf[:n]}, nil, nil
}

func uploadSavePart(c *call, obj bin.Object) (bin.Encoder, []push, error) {
	var (
		fileID      int64
		part, total int
		data        []byte
		big         bool
	)
	switch r := obj.(type) {
	case *tg.UploadSaveFilePartRequest:
		fileID, part, data = r.FileID, r.FilePart, r.Bytes
	case *tg.UploadSaveBigFilePartRequest:
		fileID, part, total, data, big = r.FileID, r.FilePart, r.FileTotalParts, r.Bytes, true
	}
	c.e.mu.Lock()
	maxParts := c.e.maxParts(c.user)
	switch {
	case len(data) == 0:
		c.e.mu.Unlock()
		return nil, nil, tgerr.New(400, "FILE_PART_EMPTY")
	case len(data) > partMax:
		c.e.mu.Unlock()
		return nil, nil, tgerr.New(400, "FILE_PART_TOO_BIG")
	case big && (total <= 0 || total > maxParts):
		c.e.mu.Unlock()
		return nil, nil, tgerr.New(400, "FILE_PARTS_INVALID")
	case part < 0 || part >= maxParts || (big && part >= total):
		c.e.mu.Unlock()
		return nil, nil, tgerr.New(400, "FILE_PART_INVALID")
	}
	last := big && part == total-1
	if big && !last && (len(data)%1024 != 0 || partMax%len(data) != 0) {
		c.e.mu.Unlock()
		return nil, nil, tgerr.New(400, "FILE_PART_SIZE_INVALID")
	}
	key := uploadKey(c.user.id, c.dc, fileID)
	u := c.e.uploads[key]
	if u == nil {
		u = &upload{dir: filepath.Join(c.e.dir, "uploads", key), big: big, total: total, parts: map[int]int{}, stored: map[int]time.Time{}}
		c.e.uploads[key] = u
	}
	if big && u.total != total {
		c.e.mu.Unlock()
		return nil, nil, tgerr.New(400, "FILE_PARTS_INVALID")
	}
	if !last && u.big {
		if u.partSize == 0 {
			u.partSize = len(data)
		} else if u.partSize != len(data) {
			c.e.mu.Unlock()
			return nil, nil, tgerr.New(400, "FILE_PART_SIZE_CHANGED")
		}
	}
	dir := u.dir
	c.e.mu.Unlock()

	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(part)), data, 0o644); err != nil {
		return nil, nil, err
	}
	c.e.mu.Lock()
	if cur := c.e.uploads[key]; cur == u {
		u.parts[part], u.stored[part] = len(data), time.Now()
	}
	c.e.mu.Unlock()
	r, _ := encode(&tg.BoolTrue{})
	return r, nil, nil
}

// takeUpload validates an uploaded file and removes it from the pending
// uploads. Called under e.mu.
func (c *call) takeUpload(in tg.InputFileClass) (*upload, int, string, error) {
	var (
		id    int64
		parts int
		name  string
	)
	switch f := in.(type) {
	case *tg.InputFile:
		id, parts, name = f.ID, f.Parts, f.Name
	case *tg.InputFileBig:
		id, parts, name = f.ID, f.Parts, f.Name
	default:
		return nil, 0, "", tgerr.New(400, "FILE_ID_INVALID")
	}
	key := uploadKey(c.user.id, c.dc, id)
	u := c.e.uploads[key]
	if parts <= 0 {
		return nil, 0, "", tgerr.New(400, "FILE_PARTS_INVALID")
	}
	if u == nil {
		return nil, 0, "", tgerr.New(400, "FILE_PART_0_MISSING") // nothing stored under this id (or all of it expired)
	}
	if u.big && parts != u.total {
		return nil, 0, "", tgerr.New(400, "FILE_PARTS_INVALID")
	}
	size := 0
	for i := range parts {
		n, ok := u.parts[i]
		if !ok || c.e.partGone(u, i) {
			return nil, 0, "", tgerr.New(400, fmt.Sprintf("FILE_PART_%d_MISSING", i))
		}
		if i == 0 {
			size = n
		} else if i < parts-1 && n != size {
			// Small uploads: parts must be equal except the last; only
			// known here, when the total is.
			return nil, 0, "", tgerr.New(400, "FILE_PART_SIZE_INVALID")
		}
	}
	if !u.big && (size%1024 != 0 || partMax%size != 0) && parts > 1 {
		return nil, 0, "", tgerr.New(400, "FILE_PART_SIZE_INVALID")
	}
	delete(c.e.uploads, key)
	return u, parts, name, nil
}

func messagesSendMedia(c *call, obj bin.Object) (bin.Encoder, []push, error) {
	r := obj.(*tg.MessagesSendMediaRequest)
	c.e.mu.Lock()
	if id, dup := c.e.randomIDs[randomKey(c.user, r.RandomID)]; dup && r.RandomID != 0 {
		c.e.mu.Unlock()
		_ = id
		return nil, nil, tgerr.New(400, "RANDOM_ID_DUPLICATE")
	}
	p, err := c.e.inputPeer(c.user.id, r.Peer)
	if err == nil && p.c != nil {
		err = c.e.writable(c.user.id, p.c)
	}
	if err != nil {
		c.e.mu.Unlock()
		return nil, nil, err
	}
	if utf16Len(r.Message) > maxCaption {
		c.e.mu.Unlock()
		return nil, nil, tgerr.New(400, "MEDIA_CAPTION_TOO_LONG")
	}
	rm, err := c.inlineMarkup(r.ReplyMarkup)
	if err == nil {
		err = c.e.botFlood(c.user, p.id(), 1)
	}
	if err != nil {
		c.e.mu.Unlock()
		return nil, nil, err
	}
	m := &message{text: r.Message, entities: r.Entities, date: now(), replyTo: replyTo(r.ReplyTo), markup: rm}
	var (
		up    *upload
		parts int
		name  string
		mime  string
		photo bool
	)
	switch media := r.Media.(type) {
	case *tg.InputMediaDocument:
		in, ok := media.ID.(*tg.InputDocument)
		d := (*document)(nil)
		if ok {
			d = c.e.docs[in.ID]
		}
		if d == nil || in.AccessHash != c.e.accessHash(0, d.id) {
			c.e.mu.Unlock()
			return nil, nil, tgerr.New(400, "MEDIA_INVALID")
		}
		if string(in.FileReference) != string(c.e.fileReference("d", d.id, d.refVer)) {
			c.e.mu.Unlock()
			return nil, nil, tgerr.New(400, "FILE_REFERENCE_EXPIRED")
		}
		m.doc = d.id
	case *tg.InputMediaUploadedDocument:
		up, parts, name, err = c.takeUpload(media.File)
		mime = media.MimeType
		for _, a := range media.Attributes {
			if fn, ok := a.(*tg.DocumentAttributeFilename); ok {
				name = fn.FileName
			}
		}
	case *tg.InputMediaUploadedPhoto:
		up, parts, name, err = c.takeUpload(media.File)
		photo = true
	default:
		err = tgerr.New(400, "MEDIA_INVALID")
	}
	c.e.mu.Unlock()
	if err != nil {
		return nil, nil, err
	}
	if up != nil {
		id := c.e.newIDLocked()
		path := filepath.Join(c.e.dir, "files", strconv.FormatInt(id, 10))
		size, err := up.assemble(parts, path)
		if err != nil {
			return nil, nil, fmt.Errorf("assemble upload: %w", err)
		}
		c.e.mu.Lock()
		if photo {
			ph, err := c.e.newPhoto(path, now(), c.dc)
			if err != nil {
				c.e.mu.Unlock()
				return nil, nil, tgerr.New(400, "PHOTO_INVALID_DIMENSIONS")
			}
			ph.uploaded = true
			m.photo = ph.id
		} else {
			if mime == "" {
				mime = mimeOf(name)
			}
			d := &document{id: id, name: name, mime: mime, size: size, path: path, date: now(), dc: c.dc, uploaded: true}
			c.e.docs[id] = d
			m.doc = id
		}
		c.e.mu.Unlock()
	}
	c.e.mu.Lock()
	return c.finishAndSave(c.deliverTo(p, m, r.RandomID))
}

func (e *Emulator) newIDLocked() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.newID()
}
