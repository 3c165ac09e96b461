package telegram

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf16"

	"github.com/gotd/td/telegram/message/entity"
	"github.com/gotd/td/telegram/message/html"
	"github.com/gotd/td/telegram/message/markup"
	"github.com/gotd/td/telegram/uploader"
	"github.com/gotd/td/tg"
	"github.com/gotd/td/tgerr"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
)

// Send implements messenger.Bot. m.HTML is parsed into text and entities
// here (errors name the problem); a RandomID of 0 gets a random one. A
// RandomID delivered before, by an earlier call or by an attempt of this
// one whose answer was lost, is messenger.ErrDuplicate (with id 0).
func (b *Bot) Send(ctx context.Context, chatID int64, m messenger.OutgoingMessage) (int, error) {
	op := fmt.Sprintf("bot send to %d", chatID)
	text, ents, rm, err := outgoing(m, len(m.Photo) > 0)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	peer, err := b.userPeer(ctx, chatID)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	rid := m.RandomID
	if rid == 0 {
		rid = randomID()
	}
	var media tg.InputMediaClass
	if len(m.Photo) > 0 {
		name := m.PhotoName
		if name == "" {
			name = "photo.jpg"
		}
		pool, err := b.conn.pools.get(ctx, 0)
		if err != nil {
			return 0, mapErr(op+": upload photo", err)
		}
		file, err := uploader.NewUploader(pool.transfer).WithPartSize(messenger.UploadPartSize).FromBytes(ctx, name, m.Photo)
		if err != nil {
			return 0, mapErr(op+": upload photo", err)
		}
		media = &tg.InputMediaUploadedPhoto{File: file}
	}
	if err := b.pace(ctx, chatID, 1); err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	var upd tg.UpdatesClass
	err = b.deliver(ctx, op, func(ctx context.Context) (err error) {
		if media != nil {
			upd, err = b.conn.api.MessagesSendMedia(ctx, &tg.MessagesSendMediaRequest{Peer: peer, Media: media,
				Message: text, Entities: ents, ReplyMarkup: rm, RandomID: rid})
			return err
		}
		upd, err = b.conn.api.MessagesSendMessage(ctx, &tg.MessagesSendMessageRequest{Peer: peer, Message: text,
			Entities: ents, ReplyMarkup: rm, RandomID: rid, NoWebpage: true})
		return err
	})
	if err != nil {
		return 0, mapErr(op, err)
	}
	id, ok := sentMessageID(upd, rid)
	if !ok {
		return 0, fmt.Errorf("%s: no message id in the answer", op)
	}
	return id, nil
}

// Edit implements messenger.Bot: the text (or a photo's caption) and the
// keyboard are replaced (no keyboard removes it); a message left as it was
// is not an error, so an unanswered attempt is simply repeated. Edits are
// paced like messages (the platform limits them alike).
func (b *Bot) Edit(ctx context.Context, chatID int64, messageID int, m messenger.OutgoingMessage) error {
	op := fmt.Sprintf("bot edit message %d in %d", messageID, chatID)
	if len(m.Photo) > 0 {
		return hoard.Errorf(hoard.EINVALID, "%s: an edit cannot replace a photo", op)
	}
	text, ents, rm, err := outgoing(m, false)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	peer, err := b.userPeer(ctx, chatID)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := b.pace(ctx, chatID, 1); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	err = b.deliver(ctx, op, func(ctx context.Context) error {
		// Repeating an edit is harmless: the same edit again changes nothing.
		_, err := b.conn.api.MessagesEditMessage(ctx, &tg.MessagesEditMessageRequest{Peer: peer, ID: messageID,
			Message: text, Entities: ents, ReplyMarkup: rm, NoWebpage: true})
		return err
	})
	if tgerr.Is(err, "MESSAGE_NOT_MODIFIED") {
		return nil
	}
	return mapErr(op, err)
}

// AnswerCallback implements messenger.Bot. An expired or unknown query is
// messenger.ErrNotFound.
func (b *Bot) AnswerCallback(ctx context.Context, queryID int64, text string) error {
	_, err := b.conn.api.MessagesSetBotCallbackAnswer(ctx, &tg.MessagesSetBotCallbackAnswerRequest{QueryID: queryID, Message: text})
	return mapErr("bot answer callback", err)
}

// SetCommands implements messenger.Bot (the default scope, every language).
func (b *Bot) SetCommands(ctx context.Context, cmds []messenger.BotCommand) error {
	in := make([]tg.BotCommand, len(cmds))
	for i, c := range cmds {
		in[i] = tg.BotCommand{Command: c.Command, Description: c.Description}
	}
	_, err := b.conn.api.BotsSetBotCommands(ctx, &tg.BotsSetBotCommandsRequest{Scope: &tg.BotCommandScopeDefault{}, Commands: in})
	return mapErr("bot set commands", err)
}

// CanRead implements messenger.Bot: the bot must know the channel (from an
// update: a post, or being made its administrator) and administer it. A
// channel it never saw or cannot read is false, not an error.
func (b *Bot) CanRead(ctx context.Context, channelID int64) (bool, error) {
	op := fmt.Sprintf("bot can read %d", channelID)
	peer, ok, err := b.channelPeer(ctx, channelID)
	if err != nil {
		return false, fmt.Errorf("%s: %w", op, err)
	}
	if !ok {
		return false, nil
	}
	res, err := b.conn.api.ChannelsGetChannels(ctx, []tg.InputChannelClass{&tg.InputChannel{ChannelID: channelID, AccessHash: peer.AccessHash}})
	if tgerr.Is(err, "CHANNEL_PRIVATE", "CHANNEL_INVALID") {
		return false, nil
	}
	if err != nil {
		return false, mapErr(op, err)
	}
	chat, _ := findChannel(res.GetChats(), channelID)
	c, ok := chat.(*tg.Channel)
	if !ok {
		return false, nil
	}
	_, admin := c.GetAdminRights()
	return !c.Left && (c.Creator || admin), nil
}

// Copy implements messenger.Bot with messages.forwardMessages (DropAuthor),
// in batches of strictly increasing ids (a step down starts a new batch,
// so the order given is kept) of at most the per-chat burst (and 100),
// each batch paced as a whole. A message counts as delivered only when the
// answer names its random id (UpdateMessageID): the platform skips what it
// cannot forward. A message the answer leaves out is sent again on its
// own, with the same random id: RANDOM_ID_DUPLICATE means it had arrived,
// MESSAGE_ID_INVALID that it cannot be forwarded. Such messages do not
// stop the copy; when they are all that went wrong, the error is a
// *messenger.NotForwardedError naming them.
func (b *Bot) Copy(ctx context.Context, chatID int64, channelID int64, msgIDs []int, randomIDs []int64) (int, error) {
	op := fmt.Sprintf("bot copy %d messages of %d to %d", len(msgIDs), channelID, chatID)
	if err := checkRandomIDs(msgIDs, randomIDs); err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	to, err := b.userPeer(ctx, chatID)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	from, ok, err := b.channelPeer(ctx, channelID)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	if !ok {
		return 0, fmt.Errorf("%s: the bot has not seen the channel (make it an administrator there): %w", op, messenger.ErrAccessLost)
	}
	limit := min(b.cfg.BotLimits.PerChatBurst, maxForward)
	lead, gap := 0, false // leading messages delivered; whether one before has not arrived
	var skipped []int
	for lo := 0; lo < len(msgIDs); {
		hi := forwardBatchEnd(msgIDs, lo, limit)
		if err := b.pace(ctx, chatID, hi-lo); err != nil {
			return lead, fmt.Errorf("%s: %w", op, err)
		}
		arrived, err := b.forward(ctx, chatID, from, to, msgIDs[lo:hi], randomIDs[lo:hi])
		for i, ok := range arrived {
			gap = gap || !ok
			if !gap {
				lead++
			}
			if !ok && err == nil {
				skipped = append(skipped, msgIDs[lo+i])
			}
		}
		if err != nil {
			return lead, mapErr(op, err)
		}
		lo = hi
	}
	if len(skipped) > 0 {
		return lead, fmt.Errorf("%s: %w", op, &messenger.NotForwardedError{MsgIDs: skipped})
	}
	return lead, nil
}

// maxForward is the most ids one messages.forwardMessages takes.
const maxForward = 100

// checkRandomIDs checks that there is one random id per message, each
// distinct and not 0.
func checkRandomIDs(msgIDs []int, randomIDs []int64) error {
	if len(msgIDs) != len(randomIDs) {
		return hoard.Errorf(hoard.EINVALID, "%d message ids but %d random ids", len(msgIDs), len(randomIDs))
	}
	seen := make(map[int64]bool, len(randomIDs))
	for _, r := range randomIDs {
		if r == 0 || seen[r] {
			return hoard.Errorf(hoard.EINVALID, "random ids must be distinct and not 0")
		}
		seen[r] = true
	}
	return nil
}

// forwardBatchEnd returns the end of the batch that starts at lo: at most
// limit ids, strictly increasing (the platform's rule).
func forwardBatchEnd(ids []int, lo, limit int) int {
	hi := lo + 1
	for hi < len(ids) && hi-lo < limit && ids[hi] > ids[hi-1] {
		hi++
	}
	return hi
}

// forward copies one batch and reports which of its messages arrived. On
// an error, the messages after those known to have arrived are reported
// as not arrived (unknown).
func (b *Bot) forward(ctx context.Context, chatID int64, from *tg.InputPeerChannel, to *tg.InputPeerUser, ids []int, rids []int64) ([]bool, error) {
	arrived := make([]bool, len(ids))
	if len(ids) == 1 {
		ok, err := b.forwardOne(ctx, from, to, ids[0], rids[0])
		arrived[0] = ok
		return arrived, err
	}
	upd, err := b.sendForward(ctx, from, to, ids, rids)
	switch {
	case err == nil:
		got := answeredRandomIDs(upd)
		for i, r := range rids {
			arrived[i] = got[r]
		}
	case tgerr.Is(err, "RANDOM_ID_DUPLICATE", "MESSAGE_ID_INVALID"):
		// Some arrived before, or none can be forwarded: each is asked
		// on its own below.
	default:
		return arrived, err
	}
	for i := range ids {
		if arrived[i] {
			continue
		}
		if err == nil {
			// Sent again alone: paced like a message of its own.
			if perr := b.pace(ctx, chatID, 1); perr != nil {
				return arrived, perr
			}
		}
		ok, ferr := b.forwardOne(ctx, from, to, ids[i], rids[i])
		if ferr != nil {
			return arrived, ferr
		}
		arrived[i] = ok
	}
	return arrived, nil
}

// forwardOne copies one message and reports whether it arrived, now or
// before (RANDOM_ID_DUPLICATE); MESSAGE_ID_INVALID means it cannot be
// forwarded (deleted or missing), which is not an error here.
func (b *Bot) forwardOne(ctx context.Context, from *tg.InputPeerChannel, to *tg.InputPeerUser, id int, rid int64) (bool, error) {
	_, err := b.sendForward(ctx, from, to, []int{id}, []int64{rid})
	switch {
	case err == nil, tgerr.Is(err, "RANDOM_ID_DUPLICATE"):
		return true, nil
	case tgerr.Is(err, "MESSAGE_ID_INVALID"):
		return false, nil
	default:
		return false, err
	}
}

// sendForward sends one messages.forwardMessages (see deliver).
func (b *Bot) sendForward(ctx context.Context, from *tg.InputPeerChannel, to *tg.InputPeerUser, ids []int, rids []int64) (tg.UpdatesClass, error) {
	var upd tg.UpdatesClass
	err := b.deliver(ctx, "forward", func(ctx context.Context) (err error) {
		upd, err = b.conn.api.MessagesForwardMessages(ctx, &tg.MessagesForwardMessagesRequest{
			FromPeer: from, ID: ids, RandomID: rids, ToPeer: to, DropAuthor: true})
		return err
	})
	return upd, err
}

// answeredRandomIDs returns the random ids an answer reports as sent
// (UpdateMessageID).
func answeredRandomIDs(u tg.UpdatesClass) map[int64]bool {
	got := map[int64]bool{}
	for _, up := range updatesOf(u) {
		if m, ok := up.(*tg.UpdateMessageID); ok {
			got[m.RandomID] = true
		}
	}
	return got
}

// outgoing parses m's HTML and keyboard and checks the platform's length
// limits (caption: the text of a photo).
func outgoing(m messenger.OutgoingMessage, caption bool) (string, []tg.MessageEntityClass, tg.ReplyMarkupClass, error) {
	text, ents, err := parseHTML(m.HTML)
	if err != nil {
		return "", nil, nil, err
	}
	limit, what := messenger.MaxMessageText, "text"
	if caption {
		limit, what = messenger.MaxCaption, "caption"
	}
	if n := utf16Len(text); n > limit {
		return "", nil, nil, hoard.Errorf(hoard.EINVALID, "the %s is %d UTF-16 units long, the limit is %d", what, n, limit)
	}
	if !caption && strings.TrimSpace(text) == "" {
		return "", nil, nil, hoard.Errorf(hoard.EINVALID, "the message text is empty")
	}
	rm, err := inlineMarkup(m.Keyboard)
	if err != nil {
		return "", nil, nil, err
	}
	return text, ents, rm, nil
}

// parseHTML turns the bot's HTML subset into text and entities.
func parseHTML(s string) (string, []tg.MessageEntityClass, error) {
	var b entity.Builder
	if err := html.HTML(strings.NewReader(s), &b, html.Options{}); err != nil {
		return "", nil, hoard.Errorf(hoard.EINVALID, "the message HTML does not parse: %v", err)
	}
	text, ents := b.Complete()
	return text, ents, nil
}

// utf16Len counts UTF-16 code units, as the platform's limits do.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// inlineMarkup builds the inline keyboard; nil for none.
func inlineMarkup(kb messenger.Keyboard) (tg.ReplyMarkupClass, error) {
	if len(kb) == 0 {
		return nil, nil
	}
	rm := &tg.ReplyInlineMarkup{}
	for i, row := range kb {
		var r tg.KeyboardInlineButtonRow
		for j, btn := range row {
			where := fmt.Sprintf("keyboard button %d of row %d", j+1, i+1)
			switch {
			case btn.Text == "":
				return nil, hoard.Errorf(hoard.EINVALID, "%s has no text", where)
			case (len(btn.Data) > 0) == (btn.URL != ""):
				return nil, hoard.Errorf(hoard.EINVALID, "%s needs exactly one of data and a URL", where)
			case len(btn.Data) > messenger.MaxButtonData:
				return nil, hoard.Errorf(hoard.EINVALID, "%s carries %d bytes of data, the limit is %d", where, len(btn.Data), messenger.MaxButtonData)
			case btn.URL != "":
				r.Buttons = append(r.Buttons, markup.URL(btn.Text, btn.URL))
			default:
				r.Buttons = append(r.Buttons, markup.Callback(btn.Text, btn.Data))
			}
		}
		if len(r.Buttons) > 0 {
			rm.Rows = append(rm.Rows, r)
		}
	}
	return rm, nil
}
