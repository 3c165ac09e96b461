package telegram

import (
	"time"

	"github.com/gotd/td/tg"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
)

// Text from the platform is made storable here, where it enters hoard
// (DESIGN.md): NUL and invalid UTF-8 replaced, lengths bounded to what the
// schema holds, so that no store method, JSONB job argument or index can
// fail on a stranger's post. Direction overrides and other invisible
// characters are kept; pages and bot replies show them neutralised
// (hoard.DisplayText).

// platformTitle makes a channel or topic title, user name or username
// storable.
func platformTitle(s string) string { return hoard.StorableText(s, hoard.MaxTitleLen) }

// platformText makes a caption or message text storable.
func platformText(s string) string { return hoard.StorableLongText(s, hoard.MaxCaptionLen) }

func convertUser(u *tg.User) messenger.User {
	return messenger.User{ID: u.ID, Username: platformTitle(u.Username), FirstName: platformTitle(u.FirstName),
		LastName: platformTitle(u.LastName), Phone: platformTitle(u.Phone), Premium: u.Premium, Bot: u.Bot}
}

func convertChannel(c *tg.Channel) messenger.Channel {
	return messenger.Channel{ID: c.ID, AccessHash: c.AccessHash, Title: platformTitle(c.Title), Username: platformTitle(c.Username),
		Forum: c.Forum, Protected: c.Noforwards, Broadcast: c.Broadcast, Member: !c.Left}
}

// findChannel returns the channel with id among chats.
func findChannel(chats []tg.ChatClass, id int64) (tg.ChatClass, bool) {
	for _, c := range chats {
		if c.GetID() == id {
			return c, true
		}
	}
	return nil, false
}

func inputChannel(ch messenger.Channel) *tg.InputChannel {
	return &tg.InputChannel{ChannelID: ch.ID, AccessHash: ch.AccessHash}
}

func inputPeer(ch messenger.Channel) *tg.InputPeerChannel {
	return &tg.InputPeerChannel{ChannelID: ch.ID, AccessHash: ch.AccessHash}
}

// convertMessage converts a channel message; ok is false for service and
// empty messages.
func convertMessage(m any, forum bool, protected bool) (messenger.Message, bool) {
	msg, ok := m.(*tg.Message)
	if !ok {
		return messenger.Message{}, false
	}
	out := messenger.Message{
		ID: msg.ID, Date: time.Unix(int64(msg.Date), 0).UTC(), GroupedID: msg.GroupedID,
		Text: platformText(msg.Message), Protected: msg.Noforwards || protected,
	}
	if forum {
		out.TopicID = messenger.GeneralTopicID
	}
	if h, ok := msg.ReplyTo.(*tg.MessageReplyHeader); ok {
		switch {
		case h.ForumTopic && h.ReplyToTopID != 0:
			// A reply inside a topic.
			out.TopicID, out.ReplyToID = h.ReplyToTopID, h.ReplyToMsgID
		case h.ForumTopic:
			out.TopicID = h.ReplyToMsgID
		default:
			out.ReplyToID = h.ReplyToMsgID
		}
	}
	switch media := msg.Media.(type) {
	case *tg.MessageMediaDocument:
		if d, ok := media.Document.(*tg.Document); ok {
			out.Document = convertDocument(d)
		}
	case *tg.MessageMediaPhoto:
		if p, ok := media.Photo.(*tg.Photo); ok {
			out.Photo = convertPhoto(p)
		}
	}
	return out, true
}

func convertDocument(d *tg.Document) *messenger.Document {
	doc := &messenger.Document{ID: d.ID, AccessHash: d.AccessHash, FileReference: d.FileReference,
		DCID: d.DCID, Size: d.Size, MimeType: platformTitle(d.MimeType)}
	for _, a := range d.Attributes {
		if fn, ok := a.(*tg.DocumentAttributeFilename); ok {
			doc.FileName = hoard.StorableFileName(fn.FileName)
		}
	}
	return doc
}

func convertPhoto(p *tg.Photo) *messenger.Photo {
	ph := &messenger.Photo{ID: p.ID, AccessHash: p.AccessHash, FileReference: p.FileReference, DCID: p.DCID}
	for _, s := range p.Sizes {
		switch v := s.(type) {
		case *tg.PhotoSize:
			if int64(v.Size) >= ph.Size {
				ph.Thumb, ph.Width, ph.Height, ph.Size = v.Type, v.W, v.H, int64(v.Size)
			}
		case *tg.PhotoSizeProgressive:
			if n := len(v.Sizes); n > 0 && int64(v.Sizes[n-1]) >= ph.Size {
				ph.Thumb, ph.Width, ph.Height, ph.Size = v.Type, v.W, v.H, int64(v.Sizes[n-1])
			}
		}
	}
	return ph
}

// updatesOf is the list of updates an answer carries (none for the short
// forms).
func updatesOf(u tg.UpdatesClass) []tg.UpdateClass {
	switch v := u.(type) {
	case *tg.Updates:
		return v.Updates
	case *tg.UpdatesCombined:
		return v.Updates
	}
	return nil
}

// sentMessageID finds the id of the message created by a send with randomID.
func sentMessageID(u tg.UpdatesClass, randomID int64) (int, bool) {
	if v, ok := u.(*tg.UpdateShortSentMessage); ok {
		return v.ID, true
	}
	ups := updatesOf(u)
	for _, up := range ups {
		if m, ok := up.(*tg.UpdateMessageID); ok && m.RandomID == randomID {
			return m.ID, true
		}
	}
	for _, up := range ups {
		switch m := up.(type) {
		case *tg.UpdateNewChannelMessage:
			return m.Message.GetID(), true
		case *tg.UpdateNewMessage:
			return m.Message.GetID(), true
		}
	}
	return 0, false
}
