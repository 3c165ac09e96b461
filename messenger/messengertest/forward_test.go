package messengertest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/telegram"
)

// TestBotCopySkipsMissing copies destination posts of which some were
// deleted: the platform skips those and forwards the rest, and Copy counts
// what arrived from the answer, not from the call's success.
func TestBotCopySkipsMissing(t *testing.T) {
	t.Parallel()
	b := newBotEnv(t, func(cfg *telegram.Config) { cfg.BotLimits.PerChatBurst = 2 }) // batches of two
	ctx := ctxT(t)
	in := b.hello(t)
	ids := postDocuments(t, b.fixture, 5)
	waitCanRead(t, b.bot, b.dest.ID)
	if err := b.acc.DeleteMessages(ctx, b.dest, []int{ids[1], ids[3]}); err != nil {
		t.Fatal(err)
	}
	type result struct {
		Lead     int      // leading messages delivered
		Skipped  []int    // NotForwardedError's ids
		Received []string // documents Alice got
		Copies   int      // messages the emulator forwarded
		Calls    int      // messages.forwardMessages requests
	}
	for _, tc := range []struct {
		name string
		msgs []int
		req  int64 // random ids derive from it
		want result
	}{
		{"two of five deleted", ids, 1, result{Lead: 1, Skipped: []int{ids[1], ids[3]},
			Received: []string{"part1.zip", "part3.zip", "part5.zip"}, Copies: 3, Calls: 5}}, // 3 batches, each deleted post asked alone
		{"the same again: nothing twice", ids, 1, result{Lead: 1, Skipped: []int{ids[1], ids[3]}, Calls: 7}},
		{"only deleted ones", []int{ids[1], ids[3]}, 2, result{Skipped: []int{ids[1], ids[3]}, Calls: 3}},
		{"out of order, kept", []int{ids[4], ids[0], ids[2]}, 3, result{Lead: 3,
			Received: []string{"part5.zip", "part1.zip", "part3.zip"}, Copies: 3, Calls: 2}}, // batches [5] [1 3]
	} {
		t.Run(tc.name, func(t *testing.T) {
			rids := make([]int64, len(tc.msgs))
			for i, id := range tc.msgs {
				rids[i] = messenger.DeriveRandomID(tc.req, int64(id))
			}
			before, copies, calls := len(received(t, b.alice)), b.env.Emu.BotForwards(b.aliceID), b.env.Emu.Calls("messages.forwardMessages")
			n, err := b.bot.Copy(ctx, in.ChatID, b.dest.ID, tc.msgs, rids)
			got := result{Lead: n, Copies: b.env.Emu.BotForwards(b.aliceID) - copies, Calls: b.env.Emu.Calls("messages.forwardMessages") - calls}
			var skipped *messenger.NotForwardedError
			if errors.As(err, &skipped) {
				got.Skipped = skipped.MsgIDs
				if !errors.Is(err, messenger.ErrNotFound) {
					t.Errorf("%v is not ErrNotFound", err)
				}
			} else if err != nil {
				t.Fatalf("Copy: %v", err)
			}
			for _, m := range received(t, b.alice)[before:] {
				got.Received = append(got.Received, m.Document)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	if n := b.env.Emu.BotFloodTrips(); n != 0 {
		t.Fatalf("the bot tripped the flood model %d times", n)
	}
}
