package bot

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
)

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestOneProcessAnswers runs two services of one bot: one holds the lease
// and listens, the other stands by and takes over when the first stops.
func TestOneProcessAnswers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	other := NewService(e.svc.deps, e.svc.queue, "second")
	e.svc.deps.AddToChannel = func(_ context.Context, ch hoard.Channel, bot string) error {
		e.bot.mu.Lock()
		defer e.bot.mu.Unlock()
		if bot != "hoard_bot" {
			t.Errorf("AddToChannel for bot %q", bot)
		}
		e.bot.readable[ch.PlatformID] = true
		return nil
	}
	firstCtx, stopFirst := context.WithCancel(ctx)
	firstDone := make(chan error, 1)
	go func() { firstDone <- e.svc.Run(firstCtx) }()
	waitFor(t, "the first process to answer", 10*time.Second, func() bool {
		h, _ := e.db.LeaseHolder(ctx, leaseName)
		return h == "test"
	})
	secondCtx, stopSecond := context.WithCancel(ctx)
	defer stopSecond()
	go func() { _ = other.Run(secondCtx) }()
	waitFor(t, "the status row", 10*time.Second, func() bool {
		st, err := e.db.FindBotStatus(ctx)
		return err == nil && st.CanReadDest != nil
	})
	st, err := e.db.FindBotStatus(ctx)
	e.must(err)
	type status struct {
		Holder, Username, SetupHint string
		SignedIn, CanReadDest       bool
	}
	if diff := cmp.Diff(status{Holder: "test", Username: "hoard_bot", SignedIn: true, CanReadDest: true},
		status{st.Holder, st.Username, st.SetupHint, st.SignedIn, *st.CanReadDest}); diff != "" {
		t.Fatalf("status (-want +got):\n%s", diff)
	}
	e.bot.mu.Lock()
	listening, commands := e.bot.listening, len(e.bot.commands)
	e.bot.mu.Unlock()
	if listening != 1 || commands != len(Commands) {
		t.Fatalf("%d processes listening, %d commands set", listening, commands)
	}

	stopFirst()
	if err := <-firstDone; err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the standby to take over", 5*time.Second, func() bool {
		h, _ := e.db.LeaseHolder(ctx, leaseName)
		return h == "second"
	})
	waitFor(t, "the standby to listen", 5*time.Second, func() bool {
		e.bot.mu.Lock()
		defer e.bot.mu.Unlock()
		return e.bot.listening == 1
	})
}

// TestSetupHint: a destination the bot cannot read and cannot be added to
// says what to do.
func TestSetupHint(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	got := e.svc.checkSetup(context.Background())
	if got.canRead == nil || *got.canRead || got.hint == "" {
		t.Fatalf("setup = %+v", got)
	}
	for _, want := range []string{"@hoard_bot", "Hoard Archive", "administrator"} {
		if !strings.Contains(got.hint, want) {
			t.Errorf("hint %q lacks %q", got.hint, want)
		}
	}
}
