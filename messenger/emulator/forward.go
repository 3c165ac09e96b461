package emulator

import (
	"slices"

	"github.com/gotd/td/tg"
	"github.com/gotd/td/tgerr"
)

// maxForward is the most message ids one messages.forwardMessages takes
// (the Bot API's forwardMessages: "1-100"; tdlib's forwardMessages: "At
// most 100 messages can be forwarded simultaneously").
const maxForward = 100

// checkForwardIDs checks the ids and random ids of a forward before
// anything is looked up. Ids must be strictly increasing, as tdlib and
// the Bot API require: the platform's answer to other orders is not
// documented, and the emulator refuses the whole batch with
// MESSAGE_ID_INVALID so that a client sending them fails in tests. More
// than maxForward ids are refused with MESSAGE_IDS_TOO_MUCH (the
// emulator's name: the platform's error is not documented either).
func checkForwardIDs(r *tg.MessagesForwardMessagesRequest) error {
	switch {
	case len(r.ID) == 0:
		return tgerr.New(400, "MESSAGE_IDS_EMPTY")
	case len(r.ID) != len(r.RandomID):
		return tgerr.New(400, "RANDOM_ID_INVALID")
	case len(r.ID) > maxForward:
		return tgerr.New(400, "MESSAGE_IDS_TOO_MUCH")
	}
	for i := 1; i < len(r.ID); i++ {
		if r.ID[i] <= r.ID[i-1] {
			return tgerr.New(400, "MESSAGE_ID_INVALID")
		}
	}
	return nil
}

// forwardable picks the messages of a forward that from holds and that can
// be forwarded, with their random ids. The platform skips the others
// (missing, deleted, service messages) without an error and forwards the
// rest; only a forward of which nothing is left fails, MESSAGE_ID_INVALID
// (Telethon's forward_messages: "if all messages are invalid (i.e.
// deleted) the call will fail with MessageIdInvalidError. If only some
// are invalid, the list will have None instead of those messages"). One
// forward is all or nothing about random ids: a batch holding a random id
// already used (or twice) delivers none of its messages. Called under e.mu.
func (c *call) forwardable(from *channel, r *tg.MessagesForwardMessagesRequest) ([]*message, []int64, error) {
	var src []*message
	var rids []int64
	for i, id := range r.ID {
		if r.RandomID[i] == 0 {
			return nil, nil, tgerr.New(400, "RANDOM_ID_INVALID")
		}
		if _, dup := c.e.randomIDs[randomKey(c.user, r.RandomID[i])]; dup || slices.Index(r.RandomID[:i], r.RandomID[i]) >= 0 {
			return nil, nil, tgerr.New(400, "RANDOM_ID_DUPLICATE")
		}
		if id < 1 || id > len(from.msgs) || from.msgs[id-1].deleted || from.msgs[id-1].action != nil {
			continue
		}
		src = append(src, from.msgs[id-1])
		rids = append(rids, r.RandomID[i])
	}
	if len(src) == 0 {
		return nil, nil, tgerr.New(400, "MESSAGE_ID_INVALID")
	}
	return src, rids, nil
}
