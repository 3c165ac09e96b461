package store

import (
	"context"

	"github.com/hoard/hoard"
)

const runColumns = `id, status, trigger, current_activity, current_step, coalesce(current_channel_id, 0) AS current_channel_id,
	coalesce(current_topic_id, 0) AS current_topic_id, coalesce(current_account_channel_map_id, 0) AS current_account_channel_map_id,
	current_file, current_bytes, current_total_bytes, messages_scanned, archives_found, duplicates, ingested, skipped,
	held_back, error_message, started_at, updated_at, finished_at`

// CreateRun starts an ingestion run (RUNNING). While another run is RUNNING
// it fails with ECONFLICT: at most one cycle is active at a time.
func (db *DB) CreateRun(ctx context.Context, trigger hoard.RunTrigger) (*hoard.IngestionRun, error) {
	return getOne[hoard.IngestionRun](ctx, db.q, "create ingestion run",
		`INSERT INTO ingestion_runs (trigger) VALUES ($1) RETURNING `+runColumns, string(trigger))
}

// FindRun returns an ingestion run.
func (db *DB) FindRun(ctx context.Context, id int64) (*hoard.IngestionRun, error) {
	return getOne[hoard.IngestionRun](ctx, db.q, "find ingestion run", `SELECT `+runColumns+` FROM ingestion_runs WHERE id = $1`, id)
}

// FindRunningRun returns the run in progress; ENOTFOUND when none is.
func (db *DB) FindRunningRun(ctx context.Context) (*hoard.IngestionRun, error) {
	return getOne[hoard.IngestionRun](ctx, db.q, "find running ingestion run",
		`SELECT `+runColumns+` FROM ingestion_runs WHERE status = 'RUNNING'`)
}

// ListRuns returns the newest runs first.
func (db *DB) ListRuns(ctx context.Context, limit int) ([]hoard.IngestionRun, error) {
	if limit <= 0 || limit > 200 {
		limit = 20
	}
	return getAll[hoard.IngestionRun](ctx, db.q, "list ingestion runs",
		`SELECT `+runColumns+` FROM ingestion_runs ORDER BY started_at DESC, id DESC LIMIT $1`, limit)
}

// SetRunActivity updates the live activity of a running run; a finished run
// is left alone.
func (db *DB) SetRunActivity(ctx context.Context, id int64, a hoard.RunActivity) error {
	_, err := db.q.Exec(ctx, `UPDATE ingestion_runs SET current_activity = $2, current_step = $3, current_channel_id = $4,
		current_topic_id = $5, current_account_channel_map_id = $6, current_file = $7, current_bytes = $8,
		current_total_bytes = $9, updated_at = now() WHERE id = $1 AND status = 'RUNNING'`,
		id, a.Activity, a.Step, nullInt(a.ChannelID), nullInt(a.TopicID), nullInt(a.AccountChannelMapID), a.File, a.Bytes, a.TotalBytes)
	return wrap("set run activity", err)
}

// AddRunCounters adds d to a run's counters atomically.
func (db *DB) AddRunCounters(ctx context.Context, id int64, d hoard.RunCounters) error {
	tag, err := db.q.Exec(ctx, `UPDATE ingestion_runs SET messages_scanned = messages_scanned + $2,
		archives_found = archives_found + $3, duplicates = duplicates + $4, ingested = ingested + $5, skipped = skipped + $6,
		held_back = held_back + $7, updated_at = now() WHERE id = $1`,
		id, d.MessagesScanned, d.ArchivesFound, d.Duplicates, d.Ingested, d.Skipped, d.HeldBack)
	return notFoundIfNone("add run counters", tag, err)
}

// FinishRun moves a RUNNING run to a final status with an error message ("" on
// success) and clears its live activity. It reports false when the run was
// already final, which makes completion exactly-once.
func (db *DB) FinishRun(ctx context.Context, id int64, status hoard.RunStatus, errorMessage string) (bool, error) {
	if status == hoard.RunRunning {
		return false, hoard.Errorf(hoard.EINVALID, "finish run: %s is not a final status", status)
	}
	tag, err := db.q.Exec(ctx, `UPDATE ingestion_runs SET status = $2, error_message = $3, finished_at = now(), updated_at = now(),
		current_activity = '', current_step = '', current_file = '', current_bytes = 0, current_total_bytes = 0,
		current_channel_id = NULL, current_topic_id = NULL, current_account_channel_map_id = NULL
		WHERE id = $1 AND status = 'RUNNING'`, id, string(status), errorMessage)
	if err != nil {
		return false, wrap("finish run", err)
	}
	return tag.RowsAffected() == 1, nil
}

// FindLastFinishedRun returns the most recently finished run; ENOTFOUND
// when no run has finished yet.
func (db *DB) FindLastFinishedRun(ctx context.Context) (*hoard.IngestionRun, error) {
	return getOne[hoard.IngestionRun](ctx, db.q, "find last finished run",
		`SELECT `+runColumns+` FROM ingestion_runs WHERE finished_at IS NOT NULL ORDER BY finished_at DESC, id DESC LIMIT 1`)
}

// HasRuns reports whether any ingestion run was ever started.
func (db *DB) HasRuns(ctx context.Context) (bool, error) {
	var yes bool
	err := db.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM ingestion_runs)`).Scan(&yes)
	return yes, wrap("any run", err)
}

// FindRunByJob returns the ingestion run owned by a cycle's River job.
func (db *DB) FindRunByJob(ctx context.Context, jobID int64) (*hoard.IngestionRun, error) {
	return getOne[hoard.IngestionRun](ctx, db.q, "find run of job",
		`SELECT `+runColumns+` FROM ingestion_runs WHERE river_job_id = $1`, jobID)
}
