package sessionlease

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hoard/hoard/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

func TestOneProcessHoldsASession(t *testing.T) {
	db := storetest.NewDB(t)
	ctx := context.Background()
	a, b := New(db, "worker-a", time.Minute, nil), New(db, "worker-b", time.Minute, nil)
	t.Cleanup(func() { a.Close(ctx); b.Close(ctx) })

	la, err := a.Take(ctx, "account:1")
	if err != nil {
		t.Fatal(err)
	}
	if again, err := a.Take(ctx, "account:1"); err != nil || again != la {
		t.Fatalf("taking a held lease again: %v, %v", again, err)
	}
	_, err = b.Take(ctx, "account:1")
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), a.ID()) {
		t.Fatalf("second process: %v, want ErrBusy naming %s", err, a.ID())
	}
	if _, err := b.Take(ctx, "account:2"); err != nil {
		t.Fatalf("another session: %v", err)
	}
	la.Release(ctx)
	select {
	case <-la.Ended():
	default:
		t.Fatal("a released lease has not ended")
	}
	select {
	case <-la.Lost():
		t.Fatal("a released lease was lost")
	default:
	}
	if _, err := b.Take(ctx, "account:1"); err != nil {
		t.Fatalf("after the release: %v", err)
	}
}

func TestACrashedHoldersLeaseExpiresAndItsClientIsToldItLostIt(t *testing.T) {
	db := storetest.NewDB(t)
	ctx := context.Background()
	const ttl = 800 * time.Millisecond
	a, b := New(db, "worker-a", ttl, nil), New(db, "worker-b", ttl, nil)
	t.Cleanup(func() { a.Close(ctx); b.Close(ctx) })
	la, err := a.Take(ctx, "bot")
	if err != nil {
		t.Fatal(err)
	}
	// A renews while it lives: the lease outlives its ttl.
	time.Sleep(2 * ttl)
	if _, err := b.Take(ctx, "bot"); !errors.Is(err, ErrBusy) {
		t.Fatalf("while A renews: %v, want ErrBusy", err)
	}
	// A stops renewing, as a process that hangs.
	la.stop()
	<-la.kept
	start := time.Now()
	if _, err := b.Wait(ctx, "bot"); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited > 2*ttl {
		t.Fatalf("B waited %s for a lease of %s", waited, ttl)
	}
	// A's next renewal finds the lease taken: its client must stop.
	if _, ok := la.renew(ctx, time.Now()); ok {
		t.Fatal("A renewed a lease B holds")
	}
	select {
	case <-la.Lost():
	default:
		t.Fatal("A was not told it lost the lease")
	}
}

// TestAHolderWhoseDatabaseHangsLetsGoBeforeTheLeaseExpires: renewals that
// block (the lease's row locked, as a database that hangs) end at their
// deadline, and Lost closes while the lease still has life in it, so the
// client is closed before another process can take the session.
func TestAHolderWhoseDatabaseHangsLetsGoBeforeTheLeaseExpires(t *testing.T) {
	db := storetest.NewDB(t)
	ctx := context.Background()
	const ttl = 2 * time.Second
	a := New(db, "worker-a", ttl, nil)
	t.Cleanup(func() { a.Close(ctx) })
	la, err := a.Take(ctx, "account:7")
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT 1 FROM leases WHERE name = 'session:account:7' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	select {
	case <-la.Lost():
	case <-time.After(ttl):
		t.Fatalf("no Lost within %s of renewals that hang", ttl)
	}
	var left time.Duration
	if err := db.Pool().QueryRow(ctx, `SELECT (EXTRACT(EPOCH FROM expires_at - clock_timestamp()) * 1e9)::bigint FROM leases
		WHERE name = 'session:account:7'`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left < ttl/4 {
		t.Fatalf("Lost came with %s of the lease left, want at least %s for the client to close", left, ttl/4)
	}
}

func TestEachBotProcessTakesASlotOfItsOwn(t *testing.T) {
	db := storetest.NewDB(t)
	ctx := context.Background()
	var got []string
	for _, name := range []string{"bot-a", "bot-b", "bot-c"} {
		h := New(db, name, time.Minute, nil)
		t.Cleanup(func() { h.Close(ctx) })
		l, err := h.TakeSlot(ctx, "bot", 3)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, l.Key())
	}
	if want := "bot bot#2 bot#3"; strings.Join(got, " ") != want {
		t.Fatalf("slots %q, want %q", got, want)
	}
	full, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancel()
	if _, err := New(db, "bot-d", time.Minute, nil).TakeSlot(full, "bot", 3); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a fourth process with three slots: %v, want it to wait", err)
	}
}
