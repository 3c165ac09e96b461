package emulator

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/gotd/td/tg"
)

// listedTopic is a topic as messages.getForumTopics lists it: with its top
// message, the newest message in it, whose date is the topic's activity.
type listedTopic struct {
	*topic
	top *message
}

// pinnedTopics counts the pinned topics of c.
func pinnedTopics(c *channel) int {
	n := 0
	for _, t := range c.topics {
		if t.pin > 0 {
			n++
		}
	}
	return n
}

// topicsByActivity returns the topics of a forum whose title contains q
// (any case; every topic for ""), in the platform's order: pinned topics
// first, in their pinned order, then the others by last activity, newest
// first — the date of the topic's newest message, then its id, then the
// topic's id (the order tdlib's and the official clients' paging assume:
// the next page starts after the last topic's top message date, top
// message id and topic id). Deleted messages do not count; a topic with
// nothing else left is as active as its creation. Called under e.mu.
func (c *channel) topicsByActivity(q string) []listedTopic {
	q = strings.ToLower(q)
	var out []listedTopic
	for _, t := range c.topics {
		if q != "" && !strings.Contains(strings.ToLower(t.title), q) {
			continue
		}
		out = append(out, listedTopic{topic: t, top: c.msgs[t.id-1]})
	}
	index := make(map[int]int, len(out))
	for i, t := range out {
		index[t.id] = i
	}
	for _, m := range c.msgs {
		if m.deleted || m.topicID == 0 {
			continue
		}
		if i, ok := index[m.topicID]; ok && m.id > out[i].top.id {
			out[i].top = m
		}
	}
	slices.SortFunc(out, func(a, b listedTopic) int {
		switch {
		case a.pin > 0 || b.pin > 0:
			return cmp.Compare(pinRank(a.pin), pinRank(b.pin))
		case a.top.date != b.top.date:
			return cmp.Compare(b.top.date, a.top.date)
		case a.top.id != b.top.id:
			return cmp.Compare(b.top.id, a.top.id)
		}
		return cmp.Compare(b.id, a.id)
	})
	return out
}

// pinRank orders pinned topics first.
func pinRank(pin int) int {
	if pin == 0 {
		return math.MaxInt
	}
	return pin
}

// forumTopicPage returns the page of all (in topicsByActivity's order)
// that r asks for: at most r.Limit topics (1–100, default 100) after the
// cursor. Without a cursor (offset_date, offset_id and offset_topic all 0)
// the list starts at the top, pinned topics first. A cursor is the last
// topic of the previous page: when it names a pinned topic the page goes
// on after it (the other pinned topics, then the rest); otherwise it
// holds the unpinned topics that come after (offset_date, offset_id,
// offset_topic) in the activity order — a value, so a topic that moved
// meanwhile does not shift the page — and an offset left 0 does not limit
// (tdlib: "Use 0 or any date in the future to get results from the last
// topic").
func forumTopicPage(all []listedTopic, r *tg.MessagesGetForumTopicsRequest) []listedTopic {
	limit := r.Limit
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	from := 0
	if r.OffsetDate != 0 || r.OffsetID != 0 || r.OffsetTopic != 0 {
		from = len(all)
		if i := slices.IndexFunc(all, func(t listedTopic) bool { return t.id == r.OffsetTopic && t.pin > 0 }); i >= 0 {
			from = i + 1
		} else if i := slices.IndexFunc(all, func(t listedTopic) bool { return t.pin == 0 && afterCursor(t, r) }); i >= 0 {
			from = i
		}
	}
	return all[from:min(from+limit, len(all))]
}

// afterCursor reports whether an unpinned topic comes after the cursor of
// r in the activity order.
func afterCursor(t listedTopic, r *tg.MessagesGetForumTopicsRequest) bool {
	orMax := func(v int) int {
		if v == 0 {
			return math.MaxInt
		}
		return v
	}
	key := [3]int{t.top.date, t.top.id, t.id}
	cur := [3]int{orMax(r.OffsetDate), orMax(r.OffsetID), orMax(r.OffsetTopic)}
	return slices.Compare(key[:], cur[:]) < 0
}
