package emulator

import (
	"reflect"
	"strconv"
	"testing"

	"github.com/gotd/td/tg"
)

// TestForwardSkips checks messages.forwardMessages against the platform's
// rules: ids it cannot forward are skipped and the rest forwarded, a
// forward left with nothing fails, and ids out of order or too many are
// refused whole.
func TestForwardSkips(t *testing.T) {
	e := seededEmulator(t, `{"account": {"phone": "+15550000001"}, "destination": {"title": "D"},
		"users": [{"phone": "+15550000101", "username": "alice"}]}`, t.TempDir())
	alice := e.users[e.UserID("+15550000101")]
	post := map[int]int{} // post number → message id (the channel has a message of its own first)
	for n := 1; n <= 5; n++ {
		post[n] = e.appendMessage(e.dest, &message{text: "p" + strconv.Itoa(n), date: now()}).id
	}
	e.dest.deletePost(post[2])
	e.dest.deletePost(post[4])
	posts := func(ns ...int) []int {
		ids := make([]int, len(ns))
		for i, n := range ns {
			ids[i] = post[n]
		}
		return ids
	}
	c := &call{e: e, user: e.account, method: "messages.forwardMessages"}
	from := &tg.InputPeerChannel{ChannelID: e.dest.id, AccessHash: e.accessHash(e.account.id, e.dest.id)}
	to := &tg.InputPeerUser{UserID: alice.id, AccessHash: e.accessHash(e.account.id, alice.id)}
	e.rememberRandomID(randomKey(e.account, 999), 1)

	type result struct {
		Err       string
		Forwarded []string // texts alice received
		Answered  []int64  // random ids the answer names
	}
	many := make([]int, maxForward+1)
	for i := range many {
		many[i] = i + 1
	}
	for n, tc := range []struct {
		name string
		ids  []int
		rids []int64 // default 1, 2, …
		want result
	}{
		{"all there", posts(1, 3, 5), nil, result{Forwarded: []string{"p1", "p3", "p5"}, Answered: []int64{1, 2, 3}}},
		{"deleted ones skipped", posts(1, 2, 3, 4), nil, result{Forwarded: []string{"p1", "p3"}, Answered: []int64{1, 3}}},
		{"never posted skipped", []int{post[5], 77}, nil, result{Forwarded: []string{"p5"}, Answered: []int64{1}}},
		{"nothing left", posts(2, 4), nil, result{Err: "MESSAGE_ID_INVALID"}},
		{"decreasing", posts(3, 1), nil, result{Err: "MESSAGE_ID_INVALID"}},
		{"repeated", posts(1, 1), nil, result{Err: "MESSAGE_ID_INVALID"}},
		{"none", []int{}, []int64{}, result{Err: "MESSAGE_IDS_EMPTY"}},
		{"more than 100", many, nil, result{Err: "MESSAGE_IDS_TOO_MUCH"}},
		{"random id used before", posts(1, 3), []int64{1, 999}, result{Err: "RANDOM_ID_DUPLICATE"}},
	} {
		base := int64(n+1) * 1000 // random ids of this case only
		t.Run(tc.name, func(t *testing.T) {
			rids := tc.rids
			if rids == nil {
				for i := range tc.ids {
					rids = append(rids, int64(i+1))
				}
			}
			for i := range rids {
				if rids[i] != 999 {
					rids[i] += base
				}
			}
			before := len(alice.box)
			e.mu.Lock()
			res, _, err := messagesForwardMessages(c, &tg.MessagesForwardMessagesRequest{FromPeer: from, ID: tc.ids, RandomID: rids, ToPeer: to})
			e.mu.Unlock()
			got := result{Err: rpcType(err)}
			for _, m := range alice.box[before:] {
				got.Forwarded = append(got.Forwarded, m.text)
			}
			if u, ok := res.(*tg.Updates); ok {
				for _, up := range u.Updates {
					if m, ok := up.(*tg.UpdateMessageID); ok {
						got.Answered = append(got.Answered, m.RandomID-base)
					}
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("forward %v: got %+v, want %+v", tc.ids, got, tc.want)
			}
		})
	}
}
