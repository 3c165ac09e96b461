package bot

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// queue queues packages for a user's link, as the web does, and returns
// the job args it made.
func (e *env) queue(u *hoard.User, title string, pkgs ...*hoard.Package) []hoard.BotSendArgs {
	e.t.Helper()
	link, err := e.db.FindMessengerLink(context.Background(), u.ID)
	e.must(err)
	ids := make([]int64, len(pkgs))
	for i, p := range pkgs {
		ids[i] = p.ID
	}
	var jobs []hoard.BotSendArgs
	_, err = e.db.QueueBotSends(context.Background(), store.SendOrder{UserID: u.ID, PlatformUserID: link.PlatformUserID,
		PackageIDs: ids, Title: title}, func(_ pgx.Tx, j []hoard.BotSendArgs) error { jobs = j; return nil })
	e.must(err)
	return jobs
}

// work runs the send worker once on a job at an attempt.
func (e *env) work(args hoard.BotSendArgs, attempt int) error {
	w := &SendWorker{deps: e.svc.deps}
	return w.Work(context.Background(), &river.Job[hoard.BotSendArgs]{
		JobRow: &rivertype.JobRow{ID: 1, Attempt: attempt, MaxAttempts: hoard.BotSendArgs{}.InsertOpts().MaxAttempts}, Args: args})
}

// copies lists what a chat received: copies as "channel/message", other
// messages by their first line.
func (e *env) received(chat int64) []string {
	var out []string
	for _, m := range e.bot.messages(chat) {
		if m.Copy != "" {
			out = append(out, m.Copy)
		} else {
			first, _, _ := strings.Cut(m.HTML, "\n")
			out = append(out, first)
		}
	}
	return out
}

// statuses lists a user's requests as "package:STATUS:sent/total", oldest first.
func (e *env) statuses(u *hoard.User) []string {
	reqs, err := e.db.ListBotSendRequests(context.Background(), u.ID, 100)
	e.must(err)
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[len(reqs)-1-i] = fmt.Sprintf("%d:%s:%d/%d", r.PackageID, r.Status, r.PartsSent, r.PartsTotal)
	}
	return out
}

func parts(p *hoard.Package) []string {
	out := make([]string, len(p.DestMessageIDs))
	for i, id := range p.DestMessageIDs {
		out[i] = fmt.Sprintf("777/%d", id)
	}
	return out
}

func TestDeliveryInOrderExactlyOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const chat = 91
	u := e.user("deliver@example.com", chat)
	a, b := e.pkg("A.part1.rar", 3), e.pkg("B.zip", 1)
	jobs := e.queue(u, "🗂 Set", a, b)
	if len(jobs) != 1 || jobs[0].BatchID == 0 {
		t.Fatalf("jobs = %+v", jobs)
	}

	// The platform fails after two parts; the retry resumes and delivers
	// each part once.
	e.bot.failCopy(2, errors.New("connection reset"))
	if err := e.work(jobs[0], 1); err == nil {
		t.Fatal("the failed attempt reported success")
	}
	mid := e.statuses(u)
	if want := []string{fmt.Sprintf("%d:SENDING:2/3", a.ID), fmt.Sprintf("%d:SENDING:0/1", b.ID)}; !reflect.DeepEqual(mid, want) {
		t.Fatalf("after the failure: %v, want %v", mid, want)
	}
	e.must(e.work(jobs[0], 2))
	e.must(e.work(jobs[0], 3)) // a duplicate run changes nothing
	want := append(append([]string{"📬 <b>🗂 Set</b>"}, parts(a)...), parts(b)...)
	if got := e.received(chat); !reflect.DeepEqual(got, want) {
		t.Fatalf("received:\n got  %q\n want %q", got, want)
	}
	if got, want := e.statuses(u), []string{fmt.Sprintf("%d:SENT:3/3", a.ID), fmt.Sprintf("%d:SENT:1/1", b.ID)}; !reflect.DeepEqual(got, want) {
		t.Fatalf("statuses = %v, want %v", got, want)
	}
	if _, got := e.told.counts(); !maps.Equal(got, map[string]int{DeliverySent: 2}) {
		t.Fatalf("deliveries counted %v, want 2 sent", got)
	}

	// A lost progress record (a crash after the copy): the parts' random
	// ids keep the platform from delivering them again.
	c := e.pkg("C.zip", 2)
	jobs = e.queue(u, "", c)
	e.must(e.work(jobs[0], 1))
	reqs, err := e.db.ListBotSendRequests(context.Background(), u.ID, 0)
	e.must(err)
	var lost int
	for _, r := range reqs {
		if r.PackageID == c.ID {
			e.must(e.db.SetBotSendStatus(context.Background(), r.ID, hoard.SendSending, ""))
			e.must(e.db.SetBotSendProgress(context.Background(), r.ID, 0))
			lost++
		}
	}
	if lost != 1 {
		t.Fatalf("%d requests of C.zip, want 1", lost)
	}
	e.must(e.work(jobs[0], 2))
	if got := e.received(chat)[len(want):]; !reflect.DeepEqual(got, parts(c)) {
		t.Fatalf("after a lost progress record: %q, want %q", got, parts(c))
	}
}

func TestDeliveryFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		setup     func(e *env, u *hoard.User, chat int64)
		attempt   int
		wantErr   string // "" none; "snooze"; or part of the error
		wantState string
		wantMsg   string
		paused    bool
		outcome   string // the delivery's outcome counted, "" none
	}{
		{name: "unlinked between request and delivery", attempt: 1,
			setup:     func(e *env, u *hoard.User, _ int64) { e.must(e.db.DeleteMessengerLink(ctx, u.ID)) },
			wantState: "FAILED", wantMsg: msgUnlinked, outcome: DeliveryUnlinked},
		{name: "linked to another account meanwhile", attempt: 1,
			setup: func(e *env, u *hoard.User, _ int64) {
				_, err := e.db.ConsumeLinkCode(ctx, hoard.LinkCodeHash(e.linkCode(u)), 4242, 1, "")
				e.must(err)
			}, wantState: "FAILED", wantMsg: msgUnlinked, outcome: DeliveryUnlinked},
		{name: "blocked the bot", attempt: 1,
			setup:     func(e *env, _ *hoard.User, chat int64) { e.bot.blocked[chat] = true },
			wantState: "FAILED", wantMsg: msgBlocked, paused: true, outcome: DeliveryBlocked},
		{name: "flood wait", attempt: 1, wantErr: "snooze",
			setup: func(e *env, _ *hoard.User, _ int64) {
				e.bot.failCopy(1, &messenger.FloodWait{RetryAfter: 3 * time.Second})
			}, wantState: "SENDING"},
		{name: "platform error, attempts left", attempt: 1, wantErr: "CHANNEL_PRIVATE",
			setup:     func(e *env, _ *hoard.User, _ int64) { e.bot.failCopy(0, errors.New("CHANNEL_PRIVATE")) },
			wantState: "SENDING"},
		{name: "platform error, last attempt", attempt: hoard.BotSendArgs{}.InsertOpts().MaxAttempts, wantErr: "CHANNEL_PRIVATE",
			setup:     func(e *env, _ *hoard.User, _ int64) { e.bot.failCopy(0, errors.New("CHANNEL_PRIVATE")) },
			wantState: "FAILED", wantMsg: "The delivery failed", outcome: DeliveryFailed},
		{name: "unpublished meanwhile", attempt: 1,
			setup: func(e *env, u *hoard.User, _ int64) {
				reqs, err := e.db.ListBotSendRequests(ctx, u.ID, 0)
				e.must(err)
				for _, r := range reqs {
					e.must(e.db.ClearPackageDestination(ctx, r.PackageID))
				}
			}, wantState: "FAILED", wantMsg: msgUnpublished, outcome: DeliveryUnpublished},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			const chat = 92
			u := e.user("fail@example.com", chat)
			_, err := e.db.CreateSubscription(ctx, u.ID, "dragon")
			e.must(err)
			jobs := e.queue(u, "", e.pkg("P.zip", 2))
			tc.setup(e, u, chat)
			err = e.work(jobs[0], tc.attempt)
			var snooze *river.JobSnoozeError
			switch {
			case tc.wantErr == "snooze":
				if !errors.As(err, &snooze) || snooze.Duration < 3*time.Second {
					t.Fatalf("err = %v, want a snooze of at least the flood wait", err)
				}
			case tc.wantErr == "" && err != nil, tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			reqs, err := e.db.ListBotSendRequests(ctx, u.ID, 1)
			e.must(err)
			if string(reqs[0].Status) != tc.wantState || !strings.HasPrefix(reqs[0].ErrorMessage, tc.wantMsg) {
				t.Fatalf("request %s %q, want %s %q", reqs[0].Status, reqs[0].ErrorMessage, tc.wantState, tc.wantMsg)
			}
			subs, err := e.db.ListSubscriptions(ctx, u.ID)
			e.must(err)
			if (subs[0].PausedAt != nil) != tc.paused {
				t.Fatalf("subscription paused = %v, want %v", subs[0].PausedAt != nil, tc.paused)
			}
			want := map[string]int{}
			if tc.outcome != "" {
				want[tc.outcome] = 1
			}
			if _, got := e.told.counts(); !maps.Equal(got, want) {
				t.Fatalf("deliveries counted %v, want %v", got, want)
			}
			if tc.wantState == "FAILED" && len(e.received(chat)) != 0 {
				t.Fatalf("a failed delivery delivered %q", e.received(chat))
			}
		})
	}
}

// TestDeliveryMissingPart delivers a batch whose first package lost a
// destination post: that request ends FAILED at once naming the part (the
// parts that exist delivered and counted), the administrators are told
// with a MISSING_PART notification, and the batch goes on.
func TestDeliveryMissingPart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	const chat = 93
	u := e.user("missing@example.com", chat)
	a, b, c := e.pkg("Walls.zip", 4), e.pkg("Roof.zip", 1), e.pkg("Door.zip", 3)
	e.bot.missing[int(a.DestMessageIDs[1])] = true
	e.bot.missing[int(a.DestMessageIDs[3])] = true
	e.bot.missing[int(b.DestMessageIDs[0])] = true
	e.bot.missing[int(c.DestMessageIDs[2])] = true
	jobs := e.queue(u, "", a, b, c)
	e.must(e.work(jobs[0], 1))
	e.must(e.work(jobs[0], 2)) // a run again changes nothing

	type outcome struct {
		Statuses      []string
		Errors        []string
		Received      []string
		Notifications []string
		Counted       map[string]int
	}
	reqs, err := e.db.ListBotSendRequests(ctx, u.ID, 10)
	e.must(err)
	got := outcome{Statuses: e.statuses(u), Received: e.received(chat)}
	for i := range reqs {
		got.Errors = append(got.Errors, reqs[len(reqs)-1-i].ErrorMessage)
	}
	ns, err := e.db.ListNotifications(ctx, 0, 10)
	e.must(err)
	for i := range ns {
		n := ns[len(ns)-1-i]
		got.Notifications = append(got.Notifications, fmt.Sprintf("%s %d %s | %s", n.Type, n.PackageID, n.Title, n.Message))
	}
	_, got.Counted = e.told.counts()
	tell := "An administrator has been told; send the package again once it is repaired."
	want := outcome{
		Statuses: []string{fmt.Sprintf("%d:FAILED:2/4", a.ID), fmt.Sprintf("%d:FAILED:0/1", b.ID), fmt.Sprintf("%d:FAILED:2/3", c.ID)},
		Errors: []string{
			"Parts 2 and 4 of 4 of Walls.zip could not be delivered: they are missing from the archive channel. " + tell,
			"Roof.zip could not be delivered: it is missing from the archive channel. " + tell,
			"Part 3 of 3 of Door.zip could not be delivered: it is missing from the archive channel. " + tell},
		Received: []string{parts(a)[0], parts(a)[2], parts(c)[0], parts(c)[1]},
		Notifications: []string{
			fmt.Sprintf("MISSING_PART %d Missing destination post: Walls.zip | Parts 2 and 4 of 4 of Walls.zip are no longer in the destination channel, so a delivery to a user failed. Repair re-publishes the package.", a.ID),
			fmt.Sprintf("MISSING_PART %d Missing destination post: Roof.zip | Roof.zip is no longer in the destination channel, so a delivery to a user failed. Repair re-publishes the package.", b.ID),
			fmt.Sprintf("MISSING_PART %d Missing destination post: Door.zip | Part 3 of 3 of Door.zip is no longer in the destination channel, so a delivery to a user failed. Repair re-publishes the package.", c.ID)},
		Counted: map[string]int{DeliveryMissingPart: 3},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}
