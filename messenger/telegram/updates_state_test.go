package telegram

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/hoard/hoard/messenger"
)

// gatedSessions is a SessionStore whose saves wait until the gate opens.
type gatedSessions struct {
	*messenger.MemorySessionStore
	gate  chan struct{}
	mu    sync.Mutex
	saves int
}

func (g *gatedSessions) SaveSession(ctx context.Context, key string, data []byte) error {
	<-g.gate
	g.mu.Lock()
	g.saves++
	g.mu.Unlock()
	return g.MemorySessionStore.SaveSession(ctx, key, data)
}

// TestUpdatesStateWritesBehind checks that while the writer runs a change
// does not wait for the database, and that stopping it saves the last
// state; without the writer every change is saved before it returns.
func TestUpdatesStateWritesBehind(t *testing.T) {
	ctx := context.Background()
	store := &gatedSessions{MemorySessionStore: messenger.NewMemorySessionStore(), gate: make(chan struct{})}
	s := &updatesState{store: store, key: "bot/updates", data: stateData{ChannelPts: map[int64]int{}}}
	stop := s.writeBehind(ctx, slog.New(slog.NewTextHandler(io.Discard, nil)))
	changed := make(chan struct{})
	go func() {
		for pts := 1; pts <= 100; pts++ {
			if err := s.SetPts(ctx, 7, pts); err != nil {
				t.Error(err)
			}
		}
		close(changed)
	}()
	select {
	case <-changed: // 100 changes while no save could finish
	case <-time.After(10 * time.Second):
		t.Fatal("a change waited for the database while the writer ran")
	}
	close(store.gate)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	var saved stateData
	blob, err := store.LoadSession(ctx, "bot/updates")
	if err != nil || json.Unmarshal(blob, &saved) != nil {
		t.Fatalf("load the saved state: %v", err)
	}
	if saved.UserID != 7 || saved.State.Pts != 100 {
		t.Fatalf("saved user %d pts %d, want user 7 pts 100", saved.UserID, saved.State.Pts)
	}
	if store.saves > 3 {
		t.Errorf("%d saves for 100 changes made while one save waited, want at most 3", store.saves)
	}
	before := store.saves
	if err := s.SetPts(ctx, 7, 101); err != nil {
		t.Fatal(err)
	}
	if store.saves != before+1 {
		t.Errorf("after stop a change made %d saves, want 1 (written through)", store.saves-before)
	}
}

// TestUpdatesStateSavesABurstTogether: changes a few milliseconds apart,
// as a burst of commands makes them, are saved together, not one by one.
func TestUpdatesStateSavesABurstTogether(t *testing.T) {
	ctx := context.Background()
	store := &gatedSessions{MemorySessionStore: messenger.NewMemorySessionStore(), gate: make(chan struct{})}
	close(store.gate)
	s := &updatesState{store: store, key: "bot/updates", data: stateData{ChannelPts: map[int64]int{}}}
	stop := s.writeBehind(ctx, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for pts := 1; pts <= 20; pts++ { // 20 changes over about 100 ms
		if err := s.SetPts(ctx, 7, pts); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	// The first change, the ones since (saved when the writer stops), and
	// stop's own save.
	if store.saves > 3 {
		t.Errorf("%d saves for 20 changes within %v, want at most 3", store.saves, updatesStateEvery)
	}
}
