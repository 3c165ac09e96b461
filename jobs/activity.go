package jobs

import (
	"context"
	"sync"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

// activity writes a run's live activity at most every 2 s (and always for
// a new step), so progress callbacks cost no more than that.
type activity struct {
	deps  *Deps
	db    *store.DB
	runID int64
	mu    sync.Mutex
	last  time.Time
	step  string
}

func (a *activity) set(ctx context.Context, act hoard.RunActivity) {
	if a == nil || a.runID == 0 {
		return
	}
	a.mu.Lock()
	now := time.Now()
	if act.Step == a.step && now.Sub(a.last) < 2*time.Second {
		a.mu.Unlock()
		return
	}
	a.last, a.step = now, act.Step
	a.mu.Unlock()
	if err := a.db.SetRunActivity(ctx, a.runID, act); err != nil {
		a.deps.Logger.Debug("set run activity", "run", a.runID, "err", err)
	}
}
