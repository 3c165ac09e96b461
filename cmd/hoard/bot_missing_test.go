package main

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
)

// TestBotDeliveryMissingPart is the issue's acceptance "a package with one
// destination post deleted: its send ends FAILED naming the missing part,
// never SENT": the destination loses part 2 of a three-part package, a
// user asks the bot for it (`/package`, Send) and the running `hoard bot`
// delivers what exists; the request ends FAILED with a message the user
// can act on, and the administrators get a MISSING_PART notification.
func TestBotDeliveryMissingPart(t *testing.T) {
	// Waits on flood windows and retries more than it computes: it
	// shares the machine with the other waiting tests.
	t.Parallel()
	w := newBotWorld(t, botSeedOptions{}, fastBotLimits)
	w.ingest(t)
	castle := w.packageID(t, "Castle Walls.zip")
	p, err := w.db.FindPackageByID(context.Background(), castle)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.DestMessageIDs) != 3 {
		t.Fatalf("the package has %d destination posts, want 3", len(p.DestMessageIDs))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	acc := w.env.Account(t, w.env.Config("admin"))
	dest, err := acc.ResolveChannel(ctx, messenger.ChannelRef{Username: "hoardarchive"})
	if err != nil {
		t.Fatal(err)
	}
	if err := acc.DeleteMessages(ctx, dest, []int{int(p.DestMessageIDs[1])}); err != nil {
		t.Fatal(err)
	}

	bot := w.startBot(t, "bot-m")
	w.waitAnswering(t, bot)
	alice := w.chat(t, botUsers[0])
	user := w.link(t, alice, "alice@example.com")
	shown := alice.say(fmt.Sprintf("/package %d", castle))
	if n := alice.press(shown, "Send"); !strings.Contains(n, "On its way") {
		t.Fatalf("Send: %q", n)
	}
	var req hoard.BotSendRequest
	waitUntil(t, "the request to end", time.Minute, func() bool {
		reqs, err := w.db.ListBotSendRequests(context.Background(), user.ID, 10)
		if err != nil || len(reqs) > 1 {
			t.Fatalf("requests: %v, %v", reqs, err)
		}
		if len(reqs) == 0 {
			return false // the press is answered just before the request commits
		}
		req = reqs[0]
		if req.Status == hoard.SendSent {
			t.Fatalf("the request ended SENT with part 2 missing: %+v", req)
		}
		return req.Status.Final()
	})
	// Nothing more happens to it (a retry would have had time to run).
	time.Sleep(2 * time.Second)
	notes, err := w.db.ListNotifications(context.Background(), 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		Status       hoard.SendStatus
		Error        string
		Sent         string
		Documents    []string
		Copies       int
		Notification string
		Jobs         int
	}
	got := outcome{Status: req.Status, Error: req.ErrorMessage, Sent: fmt.Sprintf("%d/%d", req.PartsSent, req.PartsTotal),
		Documents: alice.documents(), Copies: w.env.Emu.BotForwards(alice.id), Jobs: w.unfinishedJobs(t, hoard.BotSendArgs{}.Kind())}
	for _, n := range notes {
		if n.PackageID == castle {
			got.Notification = string(n.Type) + ": " + n.Message
		}
	}
	want := outcome{Status: hoard.SendFailed,
		Error: "Part 2 of 3 of Castle Walls.zip could not be delivered: it is missing from the archive channel. " +
			"An administrator has been told; send the package again once it is repaired.",
		Sent: "2/3", Documents: []string{"Castle Walls.zip.001", "Castle Walls.zip.003"}, Copies: 2,
		Notification: "MISSING_PART: Part 2 of 3 of Castle Walls.zip is no longer in the destination channel, " +
			"so a delivery to a user failed. Repair re-publishes the package."}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	if r, err := w.db.FindBotSendRequest(context.Background(), req.ID); err != nil || r.Status != hoard.SendFailed {
		t.Fatalf("the request is now %+v, %v", r, err)
	}
}
