package jobs

import (
	"context"
	"fmt"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/riverqueue/river"
)

// CleanupWorker removes expired sessions, link codes, stale sign-in
// throttles and long-dismissed notifications.
type CleanupWorker struct {
	river.WorkerDefaults[hoard.CleanupArgs]
	deps Deps
}

// Work implements river.Worker.
func (w *CleanupWorker) Work(ctx context.Context, job *river.Job[hoard.CleanupArgs]) error {
	c, err := w.deps.DB.DeleteExpired(ctx, w.deps.KeepDismissedNotifications)
	if err != nil {
		return fmt.Errorf("cleanup: %w", err)
	}
	if c != (store.CleanupCounts{}) {
		w.deps.Logger.Info("cleanup removed expired rows", "sessions", c.Sessions, "link_codes", c.LinkCodes,
			"throttles", c.Throttles, "notifications", c.Notifications, "login_secrets", c.LoginSecrets)
	}
	return river.RecordOutput(ctx, c)
}
