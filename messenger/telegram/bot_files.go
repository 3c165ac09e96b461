package telegram

import (
	"context"
	"fmt"
	"io"

	"github.com/gotd/td/tg"

	"github.com/hoard/hoard/messenger"
)

var _ messenger.FileReader = (*Bot)(nil)

// Posts implements messenger.FileReader with one channels.getMessages
// (bots may fetch messages by id, not read a history) in a channel the
// bot knows; a channel it never saw is messenger.ErrNotFound.
func (b *Bot) Posts(ctx context.Context, channelID int64, ids []int) ([]messenger.Message, error) {
	op := fmt.Sprintf("bot: posts of %d", channelID)
	peer, ok, err := b.channelPeer(ctx, channelID)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if !ok {
		return nil, fmt.Errorf("%s: the bot has not seen this channel (make it an administrator there): %w", op, messenger.ErrNotFound)
	}
	in := make([]tg.InputMessageClass, len(ids))
	for i, id := range ids {
		in[i] = &tg.InputMessageID{ID: id}
	}
	ch := &tg.InputChannel{ChannelID: channelID, AccessHash: peer.AccessHash}
	res, err := b.conn.api.ChannelsGetMessages(ctx, &tg.ChannelsGetMessagesRequest{Channel: ch, ID: in})
	if err != nil {
		return nil, mapErr(op, err)
	}
	mm, ok := res.AsModified()
	if !ok {
		return nil, fmt.Errorf("%s: unexpected answer %T", op, res)
	}
	var out []messenger.Message
	for _, m := range mm.GetMessages() {
		if msg, ok := convertMessage(m, false, false); ok {
			out = append(out, msg)
		}
	}
	return out, nil
}

// Download implements messenger.FileReader as Account.Download does, over
// the bot's own connection pools (a file on another DC is asked there,
// after the bot's authorization is exported to it once); req.Channel needs
// only its ID.
func (b *Bot) Download(ctx context.Context, req messenger.DownloadRequest, w io.WriterAt) error {
	refetch := func(ctx context.Context, ch messenger.Channel, msgID int) (*messenger.Document, error) {
		msgs, err := b.Posts(ctx, ch.ID, []int{msgID})
		if err != nil {
			return nil, fmt.Errorf("refresh file reference: %w", err)
		}
		if len(msgs) == 0 || msgs[0].Document == nil {
			return nil, fmt.Errorf("refresh file reference of message %d: %w", msgID, messenger.ErrNotFound)
		}
		return msgs[0].Document, nil
	}
	return (&fileReader{conn: b.conn, cfg: &b.cfg, refetch: refetch}).download(ctx, req, w)
}
