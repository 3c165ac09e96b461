package store

import (
	"context"
	"time"

	"github.com/hoard/hoard"
	"github.com/jackc/pgx/v5"
)

// River's own table, read (and in RequeueJobsOf written) directly: the
// worker waits on the jobs of a run, reports the ones that failed, and
// resumes the jobs a stopped worker left running.

// unfinishedJobStates are the river_job states of a job that is not final
// yet, as a PostgreSQL array literal.
const unfinishedJobStates = "{available,pending,running,retryable,scheduled}"

// CountUnfinishedRunJobs counts the River jobs of the given kinds whose args
// carry an ingestion run's run_id and that are not final yet, leaving out
// those waiting (retryable or scheduled) until dueBefore or later: a retry
// left for a later cycle does not hold its run open.
func (db *DB) CountUnfinishedRunJobs(ctx context.Context, runID int64, dueBefore time.Time, kinds ...string) (int, error) {
	var n int
	err := db.q.QueryRow(ctx, `SELECT count(*) FROM river_job
		WHERE state = ANY('`+unfinishedJobStates+`') AND kind = ANY($2)
		  AND args @> jsonb_build_object('run_id', $1::bigint)
		  AND NOT (state IN ('retryable', 'scheduled') AND scheduled_at >= $3)`, runID, kinds, dueBefore).Scan(&n)
	return n, wrap("count unfinished run jobs", err)
}

// FailedRunJobErrors returns the last error of each River job of the given
// kinds that belongs to run runID and ended discarded (its attempts spent),
// oldest first.
func (db *DB) FailedRunJobErrors(ctx context.Context, runID int64, kinds ...string) ([]string, error) {
	rows, err := db.q.Query(ctx, `SELECT coalesce(errors[array_length(errors, 1)] ->> 'error', 'no error recorded')
		FROM river_job WHERE state = 'discarded' AND kind = ANY($2) AND args @> jsonb_build_object('run_id', $1::bigint)
		ORDER BY id`, runID, kinds)
	if err != nil {
		return nil, wrap("failed run jobs", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return out, wrap("failed run jobs", err)
}

// CountUnfinishedJobs counts the River jobs of the given kinds that are not
// final yet.
func (db *DB) CountUnfinishedJobs(ctx context.Context, kinds ...string) (int, error) {
	var n int
	err := db.q.QueryRow(ctx, `SELECT count(*) FROM river_job
		WHERE state = ANY('`+unfinishedJobStates+`') AND kind = ANY($1)`, kinds).Scan(&n)
	return n, wrap("count unfinished jobs", err)
}

// HasUnfinishedJob reports whether a River job of kind whose args contain
// args (a JSON object, matched with @>) is not final yet: the page of what
// it works on says it is under way instead of showing a result not there.
func (db *DB) HasUnfinishedJob(ctx context.Context, kind string, args any) (bool, error) {
	var yes bool
	err := db.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM river_job
		WHERE state = ANY('`+unfinishedJobStates+`') AND kind = $1 AND args @> $2::jsonb)`, kind, args).Scan(&yes)
	return yes, wrap("unfinished job", err)
}

// RequeueJobsOf makes the River jobs that the worker clientID left running
// (it stopped without finishing them: a crash or a kill) available again
// at once, instead of after River's rescue delay. The interrupted attempt
// is given back (attempt − 1): the interruption was not the job's failure,
// so its next run has the same attempt number and the attempt counters
// mirrored on skipped packages end as they would without the crash. Call
// it before that worker's client starts.
func (db *DB) RequeueJobsOf(ctx context.Context, clientID string) (int64, error) {
	tag, err := db.q.Exec(ctx, `UPDATE river_job SET state = 'available', scheduled_at = now(),
		attempt = greatest(attempt - 1, 0),
		errors = array_append(errors, jsonb_build_object('at', now(), 'attempt', attempt,
			'error', 'the worker stopped while the job ran', 'trace', ''))
		WHERE state = 'running' AND attempted_by[array_length(attempted_by, 1)] = $1`, clientID)
	if err != nil {
		return 0, wrap("requeue interrupted jobs", err)
	}
	return tag.RowsAffected(), nil
}

// WaitingJobIDs returns the ids of the River jobs of kind whose args hold
// match (a JSON object compared with @>) and that wait for a later attempt
// or the end of a snooze (retryable or scheduled), oldest first.
func (db *DB) WaitingJobIDs(ctx context.Context, kind string, match map[string]any) ([]int64, error) {
	rows, err := db.q.Query(ctx, `SELECT id FROM river_job
		WHERE state IN ('retryable', 'scheduled') AND kind = $1 AND args @> $2::jsonb ORDER BY id`, kind, match)
	if err != nil {
		return nil, wrap("waiting jobs", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	return out, wrap("waiting jobs", err)
}

// JobStateCount is how many River jobs of one kind are in one state.
type JobStateCount struct {
	Kind  string
	State string // River's state name: available, pending, scheduled, running, retryable or discarded
	Count int64
}

// CountJobsByKindAndState counts the River jobs that are waiting, running,
// waiting for a retry or discarded, by kind and state, in one grouped
// query (completed and cancelled jobs are history, not load, and are left
// out). Rows come ordered by kind, then state.
func (db *DB) CountJobsByKindAndState(ctx context.Context) ([]JobStateCount, error) {
	rows, err := db.q.Query(ctx, `SELECT kind, state::text, count(*) FROM river_job
		WHERE state = ANY('{available,pending,scheduled,running,retryable,discarded}')
		GROUP BY kind, state ORDER BY kind, state::text`)
	if err != nil {
		return nil, wrap("count jobs by kind and state", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[JobStateCount])
	return out, wrap("count jobs by kind and state", err)
}

// TopicInProgress is a forum topic the worker is working on right now.
type TopicInProgress struct {
	AccountChannelMapID int64
	TopicID             int64
	TopicName           string
	ChannelID           int64
	ChannelTitle        string
}

// ListTopicsInProgress returns the forum topics that running scan_topic and
// ingest_message jobs work on (several run at once), and the running
// cycle's current topic, once each and ordered by channel and topic name.
// Topics whose fetching is off already are left out: what is in flight
// there finishes, nothing more starts.
func (db *DB) ListTopicsInProgress(ctx context.Context) ([]TopicInProgress, error) {
	return getAll[TopicInProgress](ctx, db.q, "list topics in progress", `
		WITH t AS (
			SELECT (args->>'map_id')::bigint AS map_id, (args->>'topic_id')::bigint AS topic_id FROM river_job
			WHERE state = 'running' AND kind = ANY($1) AND args ? 'topic_id'
			UNION
			SELECT current_account_channel_map_id, current_topic_id FROM ingestion_runs
			WHERE status = 'RUNNING' AND current_topic_id IS NOT NULL AND current_account_channel_map_id IS NOT NULL)
		SELECT t.map_id AS account_channel_map_id, t.topic_id, coalesce(tp.topic_name, '') AS topic_name,
			c.id AS channel_id, c.title AS channel_title
		FROM t JOIN account_channel_maps m ON m.id = t.map_id JOIN messenger_channels c ON c.id = m.channel_id
		LEFT JOIN topic_progress tp ON tp.account_channel_map_id = t.map_id AND tp.topic_id = t.topic_id
		WHERE t.topic_id <> 0 AND coalesce(tp.fetch_enabled, true)
		ORDER BY c.title, topic_name, t.topic_id`,
		[]string{hoard.ScanTopicArgs{}.Kind(), hoard.IngestMessageArgs{}.Kind()})
}

// fileProgressKinds are the kinds of job that move a file in flight.
var fileProgressKinds = []string{hoard.IngestMessageArgs{}.Kind(), hoard.UploadPartArgs{}.Kind(), hoard.VerifyTransferArgs{}.Kind()}

// SetJobFileProgress records the progress of the file a running job moves
// in the job's own River metadata (key "file_progress"), stamped with the
// database's clock: it lives exactly as long as the job runs, so a file
// leaves the worker panel when its job ends, however it ends. A job that
// is no longer running is left alone.
func (db *DB) SetJobFileProgress(ctx context.Context, jobID int64, p hoard.FileProgress) error {
	_, err := db.q.Exec(ctx, `UPDATE river_job SET metadata = jsonb_set(metadata, '{file_progress}',
			$2::jsonb || jsonb_build_object('updated_at', clock_timestamp(),
				'phase_started_at', CASE WHEN metadata->'file_progress'->>'phase' IS NOT DISTINCT FROM $3
					AND (metadata->'file_progress'->>'part')::int IS NOT DISTINCT FROM $4::int
					THEN metadata->'file_progress'->'phase_started_at' ELSE to_jsonb(clock_timestamp()) END,
				'start_bytes', CASE WHEN metadata->'file_progress'->>'phase' IS NOT DISTINCT FROM $3
					AND (metadata->'file_progress'->>'part')::int IS NOT DISTINCT FROM $4::int
					THEN metadata->'file_progress'->'start_bytes' ELSE to_jsonb($5::bigint) END))
		WHERE id = $1 AND state = 'running'`, jobID, p, string(p.Phase), nullPart(p.Part), p.Bytes)
	return wrap("set job file progress", err)
}

func nullPart(part int) *int {
	if part == 0 {
		return nil
	}
	return &part
}

// ListFilesInFlight returns the progress of every file a running
// ingest_message, upload_part or verify job moves, oldest job first.
func (db *DB) ListFilesInFlight(ctx context.Context) ([]hoard.FileProgress, error) {
	rows, err := db.q.Query(ctx, `SELECT metadata->'file_progress' FROM river_job
		WHERE state = 'running' AND kind = ANY($1) AND metadata ? 'file_progress' ORDER BY id`, fileProgressKinds)
	if err != nil {
		return nil, wrap("list files in flight", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[hoard.FileProgress])
	return out, wrap("list files in flight", err)
}
