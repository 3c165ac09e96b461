package emulator

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math"
	"regexp"
	"slices"
	"time"

	"github.com/gotd/td/bin"
	"github.com/gotd/td/tg"
	"github.com/gotd/td/tgerr"
)

// What the platform does for bots and the users who talk to them: button
// presses (callback queries) answered by the bot while the user waits,
// edits, deep-link starts, blocking, the command list, administrators made
// with channels.editAdmin (the bot learns the channel from a qts update),
// and the bot's flood model.

// BotFlood is the bot's flood model: every message the bot sends, forwards,
// copies or edits takes a token from a bucket of its chat (PerChat per
// second, up to PerChatBurst saved) and from the bot's overall bucket
// (Global per second, up to GlobalBurst); a request that finds too few
// answers FLOOD_WAIT_X and delivers nothing. Zero fields take the values of
// DefaultBotFlood.
type BotFlood struct {
	// Off switches the model off.
	Off          bool
	PerChat      float64
	PerChatBurst int
	Global       float64
	GlobalBurst  int
	// Slack lets a request in up to this much early: the jitter between a
	// client's pacer and the platform's clock. Default 250 ms.
	Slack time.Duration
}

// DefaultBotFlood is the platform's documented bot limits: one message a
// second per chat with a burst of three, thirty a second overall.
var DefaultBotFlood = BotFlood{PerChat: 1, PerChatBurst: 3, Global: 30, GlobalBurst: 30, Slack: 250 * time.Millisecond}

func (f BotFlood) withDefaults() BotFlood {
	d := DefaultBotFlood
	if f.PerChat <= 0 {
		f.PerChat = d.PerChat
	}
	if f.PerChatBurst <= 0 {
		f.PerChatBurst = d.PerChatBurst
	}
	if f.Global <= 0 {
		f.Global = d.Global
	}
	if f.GlobalBurst <= 0 {
		f.GlobalBurst = max(d.GlobalBurst, int(f.Global))
	}
	if f.Slack <= 0 {
		f.Slack = d.Slack
	}
	return f
}

// bucket is a token bucket of the flood model.
type bucket struct {
	tokens float64
	last   time.Time
}

// refill brings b up to now; a new bucket starts full.
func (e *Emulator) refill(key int64, now time.Time, rate float64, burst int) *bucket {
	b := e.floodBuckets[key]
	if b == nil {
		b = &bucket{tokens: float64(burst), last: now}
		e.floodBuckets[key] = b
	}
	b.tokens = math.Min(float64(burst), b.tokens+now.Sub(b.last).Seconds()*rate)
	b.last = now
	return b
}

// botFlood takes n messages to chatID from the buckets of sender u, or
// answers FLOOD_WAIT_X (X: seconds until both buckets hold enough). Only
// bots are limited. Called under e.mu.
func (e *Emulator) botFlood(u *user, chatID int64, n int) error {
	f := e.flood
	if !u.bot || f.Off || n == 0 {
		return nil
	}
	now := time.Now()
	chat := e.refill(chatID, now, f.PerChat, f.PerChatBurst)
	global := e.refill(0, now, f.Global, f.GlobalBurst)
	slack := f.Slack.Seconds()
	wait := math.Max((float64(n)-chat.tokens)/f.PerChat, (float64(n)-global.tokens)/f.Global) - slack
	if wait > 0 {
		e.floodTrips++
		e.log.Info("emulator: bot flood model tripped", "chat", chatID, "messages", n, "wait", wait)
		return tgerr.New(420, fmt.Sprintf("FLOOD_WAIT_%d", max(1, int(math.Ceil(wait+slack)))))
	}
	chat.tokens -= float64(n)
	global.tokens -= float64(n)
	return nil
}

// SetBotFlood replaces the bot's flood model (BotFlood{Off: true} switches
// it off) and refills its buckets.
func (e *Emulator) SetBotFlood(f BotFlood) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.flood = f.withDefaults()
	e.floodBuckets = map[int64]*bucket{}
}

// BotFloodTrips returns how many of the bot's requests the flood model
// refused.
func (e *Emulator) BotFloodTrips() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.floodTrips
}

// BotForwards returns how many messages the bot forwarded or copied into a
// chat (a user's id).
func (e *Emulator) BotForwards(chatID int64) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.botForwards[chatID])
}

// BotForwardTimes returns when each message the bot forwarded or copied
// into a chat arrived (the flood model's clock), from the from-th on.
func (e *Emulator) BotForwardTimes(chatID int64, from int) []time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.botForwards[chatID][min(max(from, 0), len(e.botForwards[chatID])):])
}

// SetBlocked makes a user block the bot (its messages then answer
// USER_IS_BLOCKED) or unblock it; starting the bot also unblocks it.
func (e *Emulator) SetBlocked(userID int64, blocked bool) error {
	return e.changeWorld(func() error {
		u := e.users[userID]
		if u == nil || e.bot == nil {
			return fmt.Errorf("emulator: no user %d or no bot", userID)
		}
		if blocked {
			u.blocked[e.bot.id] = true
		} else {
			delete(u.blocked, e.bot.id)
		}
		return nil
	})
}

// SetCallbackTimeout changes how long a button press waits for the bot's
// answer (Options.CallbackTimeout).
func (e *Emulator) SetCallbackTimeout(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.opts.CallbackTimeout = d
}

// BotCommand is an entry of the bot's command list.
type BotCommand struct {
	Command     string `json:"command"`
	Description string `json:"description"`
}

// BotCommands returns the command list the bot set (bots.setBotCommands).
func (e *Emulator) BotCommands() []BotCommand {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]BotCommand(nil), e.botCommands...)
}

var botCommandName = regexp.MustCompile(`^[a-z0-9_]{1,32}$`)

func botsSetBotCommands(c *call, obj bin.Object) (bin.Encoder, []pending, error) {
	r := obj.(*tg.BotsSetBotCommandsRequest)
	if !c.user.bot {
		return nil, nil, tgerr.New(400, "USER_BOT_REQUIRED")
	}
	cmds := make([]BotCommand, len(r.Commands))
	for i, cmd := range r.Commands {
		if !botCommandName.MatchString(cmd.Command) {
			return nil, nil, tgerr.New(400, "BOT_COMMAND_INVALID")
		}
		if n := utf16Len(cmd.Description); n == 0 || n > 256 {
			return nil, nil, tgerr.New(400, "BOT_COMMAND_DESCRIPTION_INVALID")
		}
		cmds[i] = BotCommand{Command: cmd.Command, Description: cmd.Description}
	}
	c.e.botCommands = cmds
	c.e.dirty = true
	return &tg.BoolTrue{}, nil, nil
}

// inputUser resolves a user for viewer.
func (e *Emulator) inputUser(viewer int64, in tg.InputUserClass) (*user, error) {
	switch v := in.(type) {
	case *tg.InputUser:
		if u := e.users[v.UserID]; u != nil && v.AccessHash == e.accessHash(viewer, u.id) {
			return u, nil
		}
	case *tg.InputUserSelf:
		return e.users[viewer], nil
	}
	return nil, tgerr.New(400, "USER_ID_INVALID")
}

var startParam = regexp.MustCompile(`^[A-Za-z0-9_-]{0,64}$`)

// messagesStartBot is a user pressing Start, maybe through a deep link
// t.me/<bot>?start=<param>: the bot receives "/start <param>".
func messagesStartBot(c *call, obj bin.Object) (bin.Encoder, []pending, error) {
	r := obj.(*tg.MessagesStartBotRequest)
	bot, err := c.e.inputUser(c.user.id, r.Bot)
	if err != nil || !bot.bot {
		return nil, nil, tgerr.New(400, "BOT_INVALID")
	}
	p, err := c.e.inputPeer(c.user.id, r.Peer)
	if err != nil || p.u != bot {
		return nil, nil, tgerr.New(400, "PEER_ID_INVALID")
	}
	if !startParam.MatchString(r.StartParam) {
		return nil, nil, tgerr.New(400, "START_PARAM_INVALID")
	}
	if _, dup := c.e.randomIDs[randomKey(c.user, r.RandomID)]; dup && r.RandomID != 0 {
		return nil, nil, tgerr.New(400, "RANDOM_ID_DUPLICATE")
	}
	delete(c.user.blocked, bot.id)
	text := "/start"
	if r.StartParam != "" {
		text += " " + r.StartParam
	}
	return c.deliverTo(p, &message{text: text, date: now()}, r.RandomID)
}

// privateMessage finds message id of u's box in the chat with peer.
func privateMessage(u *user, peerID int64, id int) *message {
	if id < 1 || id > len(u.box) || u.box[id-1].peer != peerID {
		return nil
	}
	return u.box[id-1]
}

// messagesEditMessage edits one of the caller's private messages: text (or
// caption), entities and inline keyboard, in both boxes, each side getting
// an updateEditMessage with its own pts.
func messagesEditMessage(c *call, obj bin.Object) (bin.Encoder, []pending, error) {
	r := obj.(*tg.MessagesEditMessageRequest)
	p, err := c.e.inputPeer(c.user.id, r.Peer)
	if err != nil {
		return nil, nil, err
	}
	if p.u == nil {
		c.e.log.Error("emulator: messages.editMessage of a channel post is not modelled")
		return nil, nil, tgerr.New(400, "PEER_ID_INVALID")
	}
	m := privateMessage(c.user, p.u.id, r.ID)
	switch {
	case m == nil:
		return nil, nil, tgerr.New(400, "MESSAGE_ID_INVALID")
	case !m.out:
		return nil, nil, tgerr.New(403, "MESSAGE_AUTHOR_REQUIRED")
	case r.Media != nil:
		return nil, nil, tgerr.New(400, "MEDIA_INVALID")
	case p.u.blocked[c.user.id]:
		return nil, nil, tgerr.New(400, "USER_IS_BLOCKED")
	}
	if err := checkText(r.Message, m.doc != 0 || m.photo != 0); err != nil {
		return nil, nil, err
	}
	rm, err := c.inlineMarkup(r.ReplyMarkup)
	if err != nil {
		return nil, nil, err
	}
	if m.text == r.Message && sameTL(m.entities, r.Entities) && sameTL(markupList(m.markup), markupList(rm)) {
		return nil, nil, tgerr.New(400, "MESSAGE_NOT_MODIFIED")
	}
	if err := c.e.botFlood(c.user, p.u.id, 1); err != nil {
		return nil, nil, err
	}
	twin := privateMessage(p.u, c.user.id, m.twin)
	res := c.e.editPrivate(c.user, p.u, m, r.Message, r.Entities, rm)
	var pend []pending
	if twin != nil {
		pend = append(pend, pending{userID: p.u.id, updates: c.e.editPrivate(p.u, c.user, twin, r.Message, r.Entities, rm)})
	}
	return res, pend, nil
}

// editPrivate changes m of owner's box (the chat with other) and returns
// owner's update. Called under e.mu.
func (e *Emulator) editPrivate(owner, other *user, m *message, text string, ents []tg.MessageEntityClass, rm *tg.ReplyInlineMarkup) *tg.Updates {
	e.dirty = true
	owner.unsaved.note(m)
	m.text, m.entities, m.markup, m.editDate = text, ents, rm, now()
	owner.pts++
	m.editPts = owner.pts
	return &tg.Updates{Date: now(), Updates: []tg.UpdateClass{
		&tg.UpdateEditMessage{Message: e.privateView(owner, m), Pts: m.editPts, PtsCount: 1},
	}, Users: []tg.UserClass{e.userView(owner.id, other), e.userView(owner.id, owner)}}
}

// checkText applies the platform's length limits to a text or a caption.
func checkText(text string, caption bool) error {
	switch {
	case caption && utf16Len(text) > maxCaption:
		return tgerr.New(400, "MEDIA_CAPTION_TOO_LONG")
	case caption:
		return nil
	case utf16Len(text) > maxMessageText:
		return tgerr.New(400, "MESSAGE_TOO_LONG")
	case len(bytes.TrimSpace([]byte(text))) == 0:
		return tgerr.New(400, "MESSAGE_EMPTY")
	}
	return nil
}

func markupList(rm *tg.ReplyInlineMarkup) []*tg.ReplyInlineMarkup {
	if rm == nil {
		return nil
	}
	return []*tg.ReplyInlineMarkup{rm}
}

// sameTL reports whether two lists of TL objects encode alike.
func sameTL[T bin.Encoder](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, err1 := encode(a[i])
		y, err2 := encode(b[i])
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
			return false
		}
	}
	return true
}

// callbackQuery is a button press waiting for the bot's answer.
type callbackQuery struct {
	botID  int64
	answer chan *tg.MessagesBotCallbackAnswer
}

// messagesGetBotCallbackAnswer is a user pressing an inline button: the bot
// gets an updateBotCallbackQuery, and the user's request is answered with
// what the bot passes to messages.setBotCallbackAnswer, or with
// BOT_RESPONSE_TIMEOUT when it does not answer in Options.CallbackTimeout.
func messagesGetBotCallbackAnswer(c *call, obj bin.Object) (bin.Encoder, []push, error) {
	r := obj.(*tg.MessagesGetBotCallbackAnswerRequest)
	c.e.mu.Lock()
	qid, q, pend, err := c.pressButton(r)
	pushes := c.encodePushes(pend)
	timeout := c.e.opts.CallbackTimeout
	c.e.mu.Unlock()
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		c.e.mu.Lock()
		delete(c.e.queries, qid)
		c.e.mu.Unlock()
	}()
	c.deliver(pushes)
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case a := <-q.answer:
		return a, nil, nil
	case <-t.C:
		return nil, nil, tgerr.New(400, "BOT_RESPONSE_TIMEOUT")
	case <-c.ctx.Done():
		return nil, nil, tgerr.New(400, "BOT_RESPONSE_TIMEOUT")
	}
}

// pressButton checks a press and registers its query. Called under e.mu.
func (c *call) pressButton(r *tg.MessagesGetBotCallbackAnswerRequest) (int64, *callbackQuery, []pending, error) {
	p, err := c.e.inputPeer(c.user.id, r.Peer)
	if err != nil {
		return 0, nil, nil, err
	}
	if p.u == nil || !p.u.bot {
		return 0, nil, nil, tgerr.New(400, "PEER_ID_INVALID")
	}
	m := privateMessage(c.user, p.u.id, r.MsgID)
	if m == nil || m.out {
		return 0, nil, nil, tgerr.New(400, "MESSAGE_ID_INVALID")
	}
	if !hasCallback(m.markup, r.Data) {
		return 0, nil, nil, tgerr.New(400, "DATA_INVALID")
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	qid := int64(binary.LittleEndian.Uint64(b[:]) >> 1)
	q := &callbackQuery{botID: p.u.id, answer: make(chan *tg.MessagesBotCallbackAnswer, 1)}
	c.e.queries[qid] = q
	up := &tg.UpdateBotCallbackQuery{QueryID: qid, UserID: c.user.id, Peer: &tg.PeerUser{UserID: c.user.id},
		MsgID: m.twin, ChatInstance: c.e.accessHash(p.u.id, c.user.id), Data: r.Data}
	return qid, q, []pending{{userID: p.u.id, updates: &tg.Updates{Date: now(), Updates: []tg.UpdateClass{up},
		Users: []tg.UserClass{c.e.userView(p.u.id, c.user), c.e.userView(p.u.id, p.u)}}}}, nil
}

func hasCallback(rm *tg.ReplyInlineMarkup, data []byte) bool {
	if rm == nil {
		return false
	}
	for _, row := range rm.Rows {
		for _, b := range row.Buttons {
			if cb, ok := b.Type.(*tg.InlineButtonTypeCallback); ok && bytes.Equal(cb.Data, data) {
				return true
			}
		}
	}
	return false
}

func messagesSetBotCallbackAnswer(c *call, obj bin.Object) (bin.Encoder, []pending, error) {
	r := obj.(*tg.MessagesSetBotCallbackAnswerRequest)
	q := c.e.queries[r.QueryID]
	if q == nil || q.botID != c.user.id {
		return nil, nil, tgerr.New(400, "QUERY_ID_INVALID")
	}
	delete(c.e.queries, r.QueryID)
	q.answer <- &tg.MessagesBotCallbackAnswer{Alert: r.Alert, Message: r.Message, URL: r.URL, HasURL: r.URL != "", CacheTime: r.CacheTime}
	return &tg.BoolTrue{}, nil, nil
}

// participantEvent is a qts event of a user's box: their role in a channel
// changed (the bot made or unmade an administrator).
type participantEvent struct {
	Qts       int
	Date      int
	ChannelID int64
	ActorID   int64
	WasAdmin  bool
	Admin     bool
	Rights    tg.ChatAdminRights
}

// participantUpdate renders an event for its owner.
func (e *Emulator) participantUpdate(owner *user, ev *participantEvent) *tg.UpdateChannelParticipant {
	admin := func() tg.ChannelParticipantClass {
		return &tg.ChannelParticipantAdmin{UserID: owner.id, PromotedBy: ev.ActorID, Date: ev.Date, AdminRights: ev.Rights}
	}
	u := &tg.UpdateChannelParticipant{ChannelID: ev.ChannelID, Date: ev.Date, ActorID: ev.ActorID, UserID: owner.id, Qts: ev.Qts}
	if ev.WasAdmin {
		u.SetPrevParticipant(admin())
	}
	if ev.Admin {
		u.SetNewParticipant(admin())
	}
	return u
}

// channelsEditAdmin makes a user (typically the bot) an administrator of a
// channel, or unmakes one (no rights). Only the creator may; the target
// learns the channel, with its own access hash, from an
// updateChannelParticipant (qts: delivered by getDifference when missed).
func channelsEditAdmin(c *call, obj bin.Object) (bin.Encoder, []pending, error) {
	r := obj.(*tg.ChannelsEditAdminRequest)
	ch, err := c.e.inputChannel(c.user.id, r.Channel)
	if err != nil {
		return nil, nil, err
	}
	if err := c.e.readable(c.user.id, ch); err != nil {
		return nil, nil, err
	}
	if ch.members[c.user.id] != roleCreator {
		return nil, nil, tgerr.New(403, "CHAT_ADMIN_REQUIRED")
	}
	target, err := c.e.inputUser(c.user.id, r.UserID)
	if err != nil || target == c.user {
		return nil, nil, tgerr.New(400, "USER_ID_INVALID")
	}
	prev := ch.members[target.id]
	if !target.bot && prev == roleNone {
		return nil, nil, tgerr.New(400, "USER_NOT_PARTICIPANT")
	}
	rights := r.AdminRights
	rights.Flags = 0
	ev := &participantEvent{Date: now(), ChannelID: ch.id, ActorID: c.user.id, WasAdmin: prev == roleAdmin,
		Admin: rights != tg.ChatAdminRights{}, Rights: rights}
	switch {
	case ev.Admin:
		ch.members[target.id] = roleAdmin
		ch.rights[target.id] = rights
	case target.bot:
		delete(ch.members, target.id) // a bot is in a channel only as an administrator
		delete(ch.rights, target.id)
	default:
		ch.members[target.id] = roleMember
		delete(ch.rights, target.id)
	}
	target.qts++
	ev.Qts = target.qts
	target.qtsLog = append(target.qtsLog, ev)
	c.e.dirty = true
	res := &tg.Updates{Date: now(), Updates: []tg.UpdateClass{&tg.UpdateChannel{ChannelID: ch.id}},
		Chats: []tg.ChatClass{c.e.channelView(c.user.id, ch)}, Users: []tg.UserClass{c.e.userView(c.user.id, target)}}
	return res, []pending{{userID: target.id, updates: &tg.Updates{Date: now(),
		Updates: []tg.UpdateClass{c.e.participantUpdate(target, ev)},
		Chats:   []tg.ChatClass{c.e.channelView(target.id, ch)},
		Users:   []tg.UserClass{c.e.userView(target.id, c.user), c.e.userView(target.id, target)}}}}, nil
}

// userOnlyMethods are the methods the platform refuses to bots
// (BOT_METHOD_INVALID): a bot cannot read a history, search, or join a
// channel; it fetches posts by id (channels.getMessages) in channels it
// administers and downloads their files (upload.getFile). See
// notes/telegram.md §12.
var userOnlyMethods = map[string]bool{
	"messages.getHistory":       true,
	"messages.search":           true,
	"messages.getReplies":       true,
	"channels.joinChannel":      true,
	"messages.importChatInvite": true,
	"messages.checkChatInvite":  true,
}
