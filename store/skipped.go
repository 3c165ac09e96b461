package store

import (
	"context"

	"github.com/hoard/hoard"
)

const skippedColumns = `id, source_channel_id, source_message_id, coalesce(source_topic_id, 0) AS source_topic_id,
	coalesce(account_channel_map_id, 0) AS account_channel_map_id, file_name, file_size, part_count, reason, status,
	attempt_count, max_attempts, last_error, coalesce(river_job_id, 0) AS river_job_id, created_at, updated_at`

// UpsertSkippedPackage records a failed attempt for a source message: a new
// record, or the existing one (same channel and message) with the new
// attempt count, reason, status, error and job. s is filled with the stored
// row.
func (db *DB) UpsertSkippedPackage(ctx context.Context, s *hoard.SkippedPackage) error {
	if s.Status == "" {
		s.Status = hoard.SkipRetrying
	}
	if s.PartCount == 0 {
		s.PartCount = 1
	}
	if s.MaxAttempts == 0 {
		s.MaxAttempts = 5
	}
	got, err := getOne[hoard.SkippedPackage](ctx, db.q, "record skipped package", `
		INSERT INTO skipped_packages (source_channel_id, source_message_id, source_topic_id, account_channel_map_id, file_name,
			file_size, part_count, reason, status, attempt_count, max_attempts, last_error, river_job_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
		ON CONFLICT (source_channel_id, source_message_id) DO UPDATE SET
			source_topic_id = EXCLUDED.source_topic_id, account_channel_map_id = EXCLUDED.account_channel_map_id,
			file_name = EXCLUDED.file_name, file_size = EXCLUDED.file_size, part_count = EXCLUDED.part_count,
			reason = EXCLUDED.reason, status = EXCLUDED.status, attempt_count = EXCLUDED.attempt_count,
			max_attempts = EXCLUDED.max_attempts, last_error = EXCLUDED.last_error,
			river_job_id = coalesce(EXCLUDED.river_job_id, skipped_packages.river_job_id), updated_at = now()
		RETURNING `+skippedColumns,
		s.SourceChannelID, s.SourceMessageID, nullInt(s.SourceTopicID), nullInt(s.AccountChannelMapID), s.FileName, s.FileSize,
		s.PartCount, string(s.Reason), string(s.Status), s.AttemptCount, s.MaxAttempts, s.LastError, nullInt(s.RiverJobID))
	if err != nil {
		return err
	}
	*s = *got
	return nil
}

// FindSkippedPackage returns a skipped package record.
func (db *DB) FindSkippedPackage(ctx context.Context, id int64) (*hoard.SkippedPackage, error) {
	return getOne[hoard.SkippedPackage](ctx, db.q, "find skipped package",
		`SELECT `+skippedColumns+` FROM skipped_packages WHERE id = $1`, id)
}

// FindSkippedBySource returns the record of one source message.
func (db *DB) FindSkippedBySource(ctx context.Context, channelID, messageID int64) (*hoard.SkippedPackage, error) {
	return getOne[hoard.SkippedPackage](ctx, db.q, "find skipped package by source",
		`SELECT `+skippedColumns+` FROM skipped_packages WHERE source_channel_id = $1 AND source_message_id = $2`, channelID, messageID)
}

// ListSkippedPackages returns records, newest record first (by id, which
// keyset paging with beforeID needs; 0 = from the start); reason "" lists
// every reason.
func (db *DB) ListSkippedPackages(ctx context.Context, reason hoard.SkipReason, beforeID int64, limit int) ([]hoard.SkippedPackage, error) {
	if limit <= 0 || limit > 500 {
		limit = 50
	}
	return getAll[hoard.SkippedPackage](ctx, db.q, "list skipped packages",
		`SELECT `+skippedColumns+` FROM skipped_packages WHERE ($1 = '' OR reason = $1) AND ($2::bigint = 0 OR id < $2)
		 ORDER BY id DESC LIMIT $3`, string(reason), beforeID, limit)
}

// CountPendingSkipped counts records of a channel that River still retries;
// a channel with pending work is never skipped by cold-channel backoff.
func (db *DB) CountPendingSkipped(ctx context.Context, channelID int64) (int64, error) {
	var n int64
	err := db.q.QueryRow(ctx, `SELECT count(*) FROM skipped_packages WHERE source_channel_id = $1 AND status = 'RETRYING'`,
		channelID).Scan(&n)
	return n, wrap("count pending skipped packages", err)
}

// DeleteSkippedBySource removes the record of a source message once it is
// ingested (or found to be a duplicate); no record is fine.
func (db *DB) DeleteSkippedBySource(ctx context.Context, channelID, messageID int64) error {
	_, err := db.q.Exec(ctx, `DELETE FROM skipped_packages WHERE source_channel_id = $1 AND source_message_id = $2`, channelID, messageID)
	return wrap("delete skipped package", err)
}

// DeleteSkippedPackage removes a record by id.
func (db *DB) DeleteSkippedPackage(ctx context.Context, id int64) error {
	tag, err := db.q.Exec(ctx, `DELETE FROM skipped_packages WHERE id = $1`, id)
	return notFoundIfNone("delete skipped package", tag, err)
}

// RestartSkippedPackage gives a record a fresh attempt budget for a manual
// retry: attempt count 0, status RETRYING, the new job's id.
func (db *DB) RestartSkippedPackage(ctx context.Context, id, riverJobID int64) error {
	tag, err := db.q.Exec(ctx, `UPDATE skipped_packages SET attempt_count = 0, status = 'RETRYING', river_job_id = $2,
		updated_at = now() WHERE id = $1`, id, nullInt(riverJobID))
	return notFoundIfNone("restart skipped package", tag, err)
}
