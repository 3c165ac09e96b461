package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// index indexes a package as the worker does (it enters the notifier's
// inbox).
func (e *env) index(name string) *hoard.Package {
	e.t.Helper()
	n := e.nextID.Add(1)
	p := &hoard.Package{FileName: name, FileSize: 2048, ArchiveType: hoard.ArchiveZIP, ContentHash: fmt.Sprintf("%064x", n),
		DestChannelID: e.dest.ID, DestMessageIDs: []int64{n}, DestMessageID: n}
	_, err := e.db.IndexPackage(context.Background(), p, nil)
	e.must(err)
	return p
}

// notify runs the notifier once.
func (e *env) notify() error {
	w := &NotifyWorker{deps: e.svc.deps}
	return w.Work(context.Background(), &river.Job[hoard.NotifySubscribersArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: 1}})
}

// settle makes the inbox look quiet, as it will be notifyQuiet later.
func (e *env) settle() { storetest.AgeNotifyInbox(e.t, e.db, time.Minute) }

func TestNotifySubscribers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	const alice, bob = 101, 102
	ua, ub := e.user("alice@example.com", alice), e.user("bob@example.com", bob)
	for _, s := range []struct {
		u       *hoard.User
		pattern string
	}{{ua, "dragon"}, {ub, "castle"}, {ub, "tower"}} {
		_, err := e.db.CreateSubscription(ctx, s.u.ID, s.pattern)
		e.must(err)
	}

	// One matching package: one notice with a Send button, after the
	// burst settled.
	red := e.index("Red Dragon.zip")
	e.index("Spaceship.zip")
	var snooze *river.JobSnoozeError
	if err := e.notify(); !errors.As(err, &snooze) || snooze.Duration > notifyQuiet {
		t.Fatalf("notify right after indexing = %v, want a short snooze", err)
	}
	e.settle()
	e.must(e.notify())
	got := e.bot.messages(alice)
	if len(got) != 1 || !strings.Contains(got[0].HTML, "Red Dragon.zip") || !strings.Contains(got[0].HTML, fmt.Sprintf("/package %d", red.ID)) ||
		len(got[0].Keyboard) != 1 {
		t.Fatalf("alice got %+v", got)
	}
	if n := len(e.bot.messages(bob)); n != 0 {
		t.Fatalf("bob got %d messages for nothing of his", n)
	}
	// Re-runs, and the same package indexed again, notify nobody again.
	e.must(e.notify())
	storetest.QueueNotice(t, e.db, red.ID, time.Minute)
	e.must(e.notify())
	if n := len(e.bot.messages(alice)); n != 1 {
		t.Fatalf("alice has %d notices for one package", n)
	}

	// Thirty matches at once: one digest.
	for i := range 30 {
		e.index(fmt.Sprintf("Castle Tower %02d.stl", i))
	}
	e.settle()
	e.must(e.notify())
	digest := e.bot.messages(bob)
	if len(digest) != 1 || !strings.Contains(digest[0].HTML, "30 new packages") ||
		!strings.Contains(digest[0].HTML, "“castle”") || !strings.Contains(digest[0].HTML, "“tower”") {
		t.Fatalf("bob got %d messages: %+v", len(digest), digest)
	}
	if n := strings.Count(digest[0].HTML, "/package"); n != 30 {
		t.Fatalf("the digest lists %d packages", n)
	}

	// A user who blocked the bot: the digest is dropped and the
	// subscriptions pause.
	e.bot.blocked[alice] = true
	e.index("Blue Dragon.zip")
	e.settle()
	e.must(e.notify())
	subs, err := e.db.ListSubscriptions(ctx, ua.ID)
	e.must(err)
	if subs[0].PausedAt == nil {
		t.Fatal("alice's subscription is not paused")
	}
	if rest, err := e.db.ListUnsentDigests(ctx, 10); err != nil || len(rest) != 0 {
		t.Fatalf("unsent digests = %+v, %v", rest, err)
	}
}

func TestSettleWait(t *testing.T) {
	for _, tc := range []struct {
		in   store.NotifyInbox
		want time.Duration
	}{
		{store.NotifyInbox{Packages: 1, SinceOldest: 0, SinceNewest: 0}, notifyQuiet},
		{store.NotifyInbox{Packages: 3, SinceOldest: 10 * time.Second, SinceNewest: time.Second}, notifyQuiet - time.Second},
		{store.NotifyInbox{Packages: 3, SinceOldest: notifyMaxDelay - time.Second, SinceNewest: 0}, time.Second},
		{store.NotifyInbox{Packages: 3, SinceOldest: notifyMaxDelay, SinceNewest: 0}, 0},
		{store.NotifyInbox{Packages: 3, SinceOldest: 5 * time.Second, SinceNewest: notifyQuiet}, 0},
	} {
		if got := settleWait(tc.in); got != tc.want {
			t.Errorf("settleWait(%+v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
