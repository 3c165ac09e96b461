package emulator

import (
	"reflect"
	"testing"

	"github.com/gotd/td/tg"
)

// TestForumTopicOrder checks messages.getForumTopics against the
// platform's order (pinned first, then by last activity) and its paging by
// the last topic of the previous page.
func TestForumTopicOrder(t *testing.T) {
	at := func(min string) string { return `"date": "2024-01-01T00:` + min + `:00Z"` }
	e := seededEmulator(t, `{"account": {"phone": "+15550000001"}, "channels": [{"title": "F", "username": "f", "forum": true,
		"joined": true, "posts": [{"text": "general", `+at("10")+`}], "topics": [
		{"title": "Anvil", "posts": [{"text": "a", `+at("05")+`}]},
		{"title": "Bell", "posts": [{"text": "b", `+at("30")+`}]},
		{"title": "Crane", "pinned": true, "posts": [{"text": "c", `+at("01")+`}]},
		{"title": "Drum"},
		{"title": "Easel", "posts": [{"text": "e", `+at("20")+`}, {"text": "gone", `+at("40")+`}]},
		{"title": "Flute", "pinned": true, "posts": [{"text": "f", `+at("50")+`}]},
		{"title": "Gong", "posts": [{"text": "g", `+at("20")+`}]}]}]}`, t.TempDir())
	ch := e.channels[e.ChannelID("F")]
	for _, m := range ch.msgs {
		if m.text == "gone" {
			ch.deletePost(m.id) // Easel's activity is its post at :20
		}
	}
	c := &call{e: e, user: e.account, method: "messages.getForumTopics"}
	peer := &tg.InputPeerChannel{ChannelID: ch.id, AccessHash: e.accessHash(e.account.id, ch.id)}
	list := func(r tg.MessagesGetForumTopicsRequest) *tg.MessagesForumTopics {
		t.Helper()
		r.Peer = peer
		e.mu.Lock()
		res, _, err := messagesGetForumTopics(c, &r)
		e.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		return res.(*tg.MessagesForumTopics)
	}
	// cursor is the last topic of a page, as tdlib and hoard page.
	cursor := func(title string) tg.MessagesGetForumTopicsRequest {
		res := list(tg.MessagesGetForumTopicsRequest{})
		for _, tc := range res.Topics {
			ft := tc.(*tg.ForumTopic)
			if ft.Title != title {
				continue
			}
			for _, m := range res.Messages {
				if m.GetID() == ft.TopMessage {
					return tg.MessagesGetForumTopicsRequest{OffsetDate: m.(interface{ GetDate() int }).GetDate(), OffsetID: ft.TopMessage, OffsetTopic: ft.ID}
				}
			}
		}
		t.Fatalf("no topic %q", title)
		return tg.MessagesGetForumTopicsRequest{}
	}
	with := func(r tg.MessagesGetForumTopicsRequest, limit int, q string) tg.MessagesGetForumTopicsRequest {
		r.Limit, r.Q = limit, q
		return r
	}
	type page struct {
		Titles []string
		Pinned []string
		Count  int
	}
	all := []string{"Crane", "Flute", "Bell", "Gong", "Easel", "General", "Anvil", "Drum"}
	for _, tc := range []struct {
		name string
		req  tg.MessagesGetForumTopicsRequest
		want page
	}{
		{"first page", with(tg.MessagesGetForumTopicsRequest{}, 0, ""), page{all, []string{"Crane", "Flute"}, 8}},
		{"three", with(tg.MessagesGetForumTopicsRequest{}, 3, ""), page{all[:3], []string{"Crane", "Flute"}, 8}},
		{"after Bell", with(cursor("Bell"), 3, ""), page{all[3:6], nil, 8}},
		{"after Easel (same date as Gong)", with(cursor("Easel"), 0, ""), page{all[5:], nil, 8}},
		{"after pinned Crane", with(cursor("Crane"), 2, ""), page{all[1:3], []string{"Flute"}, 8}},
		{"after the last pinned", with(cursor("Flute"), 0, ""), page{all[2:], nil, 8}},
		{"after the last", with(cursor("Drum"), 0, ""), page{nil, nil, 8}},
		{"offset_topic alone does not limit", with(tg.MessagesGetForumTopicsRequest{OffsetTopic: 3}, 0, ""), page{all[2:], nil, 8}},
		{"search", with(tg.MessagesGetForumTopicsRequest{}, 0, "EL"), page{[]string{"Bell", "Easel"}, nil, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := list(tc.req)
			got := page{Count: res.Count}
			for _, tt := range res.Topics {
				ft := tt.(*tg.ForumTopic)
				got.Titles = append(got.Titles, ft.Title)
				if ft.Pinned {
					got.Pinned = append(got.Pinned, ft.Title)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
