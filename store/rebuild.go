package store

import (
	"context"
	"slices"

	"github.com/hoard/hoard"
)

const rebuildColumns = `id, status, coalesce(dest_channel_id, 0) AS dest_channel_id, messages_scanned, packages_created,
	packages_existing, sets_skipped, last_message_id, error_message, coalesce(river_job_id, 0) AS river_job_id,
	started_at, updated_at, finished_at`

// StartRebuild creates a RUNNING rebuild of the destination channel
// destChannelID. Call it in the transaction that inserts the rebuild's job,
// then SetRebuildJob. A RUNNING rebuild whose River job is gone or final
// (the worker could not record the end) is marked FAILED first; a rebuild
// that is still under way makes StartRebuild fail with ECONFLICT.
func (db *DB) StartRebuild(ctx context.Context, destChannelID int64) (*hoard.RebuildRun, error) {
	if _, err := db.q.Exec(ctx, `UPDATE rebuild_runs r SET status = 'FAILED', finished_at = now(), updated_at = now(),
		error_message = 'The rebuild was interrupted before it finished.'
		WHERE r.status = 'RUNNING' AND NOT EXISTS (SELECT 1 FROM river_job j WHERE j.id = r.river_job_id
			AND j.state IN ('available', 'pending', 'running', 'retryable', 'scheduled'))`); err != nil {
		return nil, wrap("start rebuild: fail stale rebuilds", err)
	}
	run, err := getOne[hoard.RebuildRun](ctx, db.q, "start rebuild",
		`INSERT INTO rebuild_runs (dest_channel_id) VALUES ($1) RETURNING `+rebuildColumns, destChannelID)
	if hoard.ErrorCode(err) == hoard.ECONFLICT {
		return nil, hoard.WrapError(hoard.ECONFLICT, err, "A rebuild is already running.")
	}
	return run, err
}

// SetRebuildJob records the River job that works a rebuild.
func (db *DB) SetRebuildJob(ctx context.Context, id, jobID int64) error {
	tag, err := db.q.Exec(ctx, `UPDATE rebuild_runs SET river_job_id = $2, updated_at = now() WHERE id = $1`, id, jobID)
	return notFoundIfNone("set rebuild job", tag, err)
}

// FindRebuild returns a rebuild.
func (db *DB) FindRebuild(ctx context.Context, id int64) (*hoard.RebuildRun, error) {
	return getOne[hoard.RebuildRun](ctx, db.q, "find rebuild", `SELECT `+rebuildColumns+` FROM rebuild_runs WHERE id = $1`, id)
}

// FindLatestRebuild returns the most recently started rebuild; ENOTFOUND
// when there has been none.
func (db *DB) FindLatestRebuild(ctx context.Context) (*hoard.RebuildRun, error) {
	return getOne[hoard.RebuildRun](ctx, db.q, "find latest rebuild",
		`SELECT `+rebuildColumns+` FROM rebuild_runs ORDER BY started_at DESC, id DESC LIMIT 1`)
}

// AdvanceRebuild adds d to a running rebuild's counters and moves its resume
// point to lastMessageID (never back). Run it in the transaction that
// creates the rows it counts. ENOTFOUND when the rebuild is not RUNNING.
func (db *DB) AdvanceRebuild(ctx context.Context, id int64, d hoard.RebuildCounters, lastMessageID int64) error {
	tag, err := db.q.Exec(ctx, `UPDATE rebuild_runs SET messages_scanned = messages_scanned + $2,
		packages_created = packages_created + $3, packages_existing = packages_existing + $4, sets_skipped = sets_skipped + $5,
		last_message_id = greatest(last_message_id, $6), updated_at = now() WHERE id = $1 AND status = 'RUNNING'`,
		id, d.MessagesScanned, d.PackagesCreated, d.PackagesExisting, d.SetsSkipped, lastMessageID)
	return notFoundIfNone("advance rebuild", tag, err)
}

// SetRebuildError records the error of a failed attempt on a running
// rebuild that will be retried, for the progress display.
func (db *DB) SetRebuildError(ctx context.Context, id int64, message string) error {
	_, err := db.q.Exec(ctx, `UPDATE rebuild_runs SET error_message = $2, updated_at = now() WHERE id = $1 AND status = 'RUNNING'`,
		id, message)
	return wrap("set rebuild error", err)
}

// FinishRebuild moves a RUNNING rebuild to COMPLETED (errorMessage "") or
// FAILED. It reports false when the rebuild was already final, which makes
// the end exactly-once.
func (db *DB) FinishRebuild(ctx context.Context, id int64, status hoard.RunStatus, errorMessage string) (bool, error) {
	if status != hoard.RunCompleted && status != hoard.RunFailed {
		return false, hoard.Errorf(hoard.EINVALID, "finish rebuild: %s is not a final status", status)
	}
	tag, err := db.q.Exec(ctx, `UPDATE rebuild_runs SET status = $2, error_message = $3, finished_at = now(), updated_at = now()
		WHERE id = $1 AND status = 'RUNNING'`, id, string(status), errorMessage)
	if err != nil {
		return false, wrap("finish rebuild", err)
	}
	return tag.RowsAffected() == 1, nil
}

// RebuildOutcome is what CreateRebuiltPackage did with a set.
type RebuildOutcome string

// Outcomes of CreateRebuiltPackage.
const (
	// RebuildCreated: a new package row holds the set.
	RebuildCreated RebuildOutcome = "created"
	// RebuildExisting: a package already holds one of the set's messages.
	RebuildExisting RebuildOutcome = "existing"
	// RebuildInFlight: the messages belong to a publication that has not
	// been indexed (it is in flight, or failed after posting), or may be a
	// part it is posting right now; the publication owns them.
	RebuildInFlight RebuildOutcome = "in_flight"
)

// CreateRebuiltPackage indexes a part set found in the destination channel:
// p carries what the destination tells (file name, total size, archive
// type, DestChannelID, DestMessageIDs in part order, caption, creator from
// the name). p.DestMessageID and p.PartCount are set from DestMessageIDs.
// The content hash must be empty: a rebuilt row never read the bytes, and
// its content_hash stays NULL. reposts are other messages that carry the
// same parts (re-posts): a package holding one of those also holds the set.
//
// It is idempotent: when a package of the channel already holds one of the
// messages it creates nothing and reports RebuildExisting; a set owned by an
// unindexed publication reports RebuildInFlight. The checks and the insert
// are separate statements in the caller's transaction, which is safe
// because one rebuild runs at a time and ingestion indexes only messages
// its publications hold (and those are RebuildInFlight here).
func (db *DB) CreateRebuiltPackage(ctx context.Context, p *hoard.Package, reposts []int64) (RebuildOutcome, error) {
	switch {
	case p.ContentHash != "":
		return "", hoard.Errorf(hoard.EINVALID, "create rebuilt package %s: a rebuilt package has no content hash", p.FileName)
	case p.DestChannelID == 0 || len(p.DestMessageIDs) == 0:
		return "", hoard.Errorf(hoard.EINVALID, "create rebuilt package %s: no destination messages", p.FileName)
	}
	p.DestMessageID = p.DestMessageIDs[0]
	p.PartCount = len(p.DestMessageIDs)
	all := append(slices.Clone(p.DestMessageIDs), reposts...)
	var held bool
	if err := db.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM packages WHERE dest_channel_id = $1
		AND (dest_message_ids && $2 OR dest_message_id = ANY ($2)))`, p.DestChannelID, all).Scan(&held); err != nil {
		return "", wrap("create rebuilt package: find holder", err)
	}
	if held {
		return RebuildExisting, nil
	}
	// A part being posted whose id is not recorded yet can be any message
	// after the destination's newest id when posting began.
	newest := slices.Max(all)
	if err := db.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM transfer_parts tp JOIN transfers t ON t.id = tp.transfer_id
		WHERE t.dest_channel_id = $1 AND (tp.dest_message_id = ANY ($2)
			OR (t.status IN ('PUBLISHING', 'VERIFYING') AND tp.dest_message_id IS NULL AND tp.dest_after_id < $3)))`,
		p.DestChannelID, all, newest).Scan(&held); err != nil {
		return "", wrap("create rebuilt package: find publication", err)
	}
	if held {
		return RebuildInFlight, nil
	}
	if err := db.CreatePackage(ctx, p); err != nil {
		return "", err
	}
	return RebuildCreated, nil
}
