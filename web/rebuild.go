package web

import (
	"fmt"
	"net/http"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

// rebuildJSON is a rebuild from the destination as the admin panel shows it.
type rebuildJSON struct {
	ID               int64   `json:"id"`
	Status           string  `json:"status"`
	DestChannelID    int64   `json:"dest_channel_id,omitempty"`
	MessagesScanned  int     `json:"messages_scanned"`
	PackagesCreated  int     `json:"packages_created"`
	PackagesExisting int     `json:"packages_existing"`
	SetsSkipped      int     `json:"sets_skipped"`
	LastMessageID    int64   `json:"last_message_id"`
	Error            string  `json:"error_message,omitempty"`
	StartedAt        string  `json:"started_at"`
	UpdatedAt        string  `json:"updated_at"`
	FinishedAt       *string `json:"finished_at"`
}

func toRebuildJSON(run *hoard.RebuildRun) *rebuildJSON {
	if run == nil {
		return nil
	}
	out := &rebuildJSON{ID: run.ID, Status: string(run.Status), DestChannelID: run.DestChannelID,
		MessagesScanned: run.MessagesScanned, PackagesCreated: run.PackagesCreated, PackagesExisting: run.PackagesExisting,
		SetsSkipped: run.SetsSkipped, LastMessageID: run.LastMessageID, Error: run.ErrorMessage,
		StartedAt: run.StartedAt.UTC().Format(time.RFC3339), UpdatedAt: run.UpdatedAt.UTC().Format(time.RFC3339)}
	if run.FinishedAt != nil {
		v := run.FinishedAt.UTC().Format(time.RFC3339)
		out.FinishedAt = &v
	}
	return out
}

// handleStartRebuild starts a rebuild of the catalog from the destination
// channel (SPEC rule 19): the rebuild_runs row and its job are inserted in
// one transaction, so neither exists without the other. 409 while another
// rebuild is under way or when no destination channel is configured. A page
// form is redirected back to the admin page, where the panel polls the
// progress; an API caller gets 202 with the run.
func (s *Server) handleStartRebuild(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	var run *hoard.RebuildRun
	err := s.deps.DB.InTx(ctx, func(tx *store.DB) error {
		dest, err := tx.FindDestinationChannel(ctx)
		if hoard.ErrorCode(err) == hoard.ENOTFOUND {
			return hoard.Errorf(hoard.ECONFLICT, "No destination channel is configured: there is nothing to rebuild from.")
		}
		if err != nil {
			return err
		}
		if run, err = tx.StartRebuild(ctx, dest.ID); err != nil {
			return err
		}
		res, err := s.deps.Queue.InsertTx(ctx, tx.Tx(), hoard.RebuildFromDestinationArgs{RebuildID: run.ID}, nil)
		if err != nil {
			return fmt.Errorf("rebuild: queue job: %w", err)
		}
		if res.UniqueSkippedAsDuplicate {
			return hoard.Errorf(hoard.ECONFLICT, "A rebuild is already running.")
		}
		run.RiverJobID = res.Job.ID
		return tx.SetRebuildJob(ctx, run.ID, res.Job.ID)
	})
	if err != nil {
		return err
	}
	s.deps.Logger.Info("rebuild from destination started", "rebuild", run.ID, "job", run.RiverJobID)
	if wantsJSON(r) {
		writeJSON(w, http.StatusAccepted, map[string]any{"run": toRebuildJSON(run)})
		return nil
	}
	return redirect(w, r, "/admin/messenger?done=rebuild")
}

// handleRebuildStatus answers GET /api/rebuild/status with the latest
// rebuild: {"run": {…}} or {"run": null} when none has run.
func (s *Server) handleRebuildStatus(w http.ResponseWriter, r *http.Request) error {
	run, err := s.latestRebuild(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"run": toRebuildJSON(run)})
	return nil
}

// latestRebuild returns the latest rebuild, or nil when none has run.
func (s *Server) latestRebuild(r *http.Request) (*hoard.RebuildRun, error) {
	run, err := s.deps.DB.FindLatestRebuild(r.Context())
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		return nil, nil
	}
	return run, err
}
