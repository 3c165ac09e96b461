package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/hoard/hoard/store"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"
)

// Tests read and stage River's jobs in river_job directly, as the store
// does (store/riverjobs.go): a test that checks what a handler queued, or
// that needs a job in a state only a running worker would give it, has no
// River client to ask.

// JobOpts describes a River job row for Job. Defaults: Args {}, Queue
// "default", State running (attempt 1, attempted now), MaxAttempts 5,
// Metadata {}.
type JobOpts struct {
	Kind        string // required
	Args        any    // marshalled to JSON
	Queue       string
	State       rivertype.JobState
	Attempt     int
	MaxAttempts int
	Metadata    any // marshalled to JSON
}

// Job stores a River job row as it is, without a client (no unique-key
// check, no notification), and returns its id.
func Job(t testing.TB, db *store.DB, o JobOpts) int64 {
	t.Helper()
	if o.Kind == "" {
		t.Fatal("storetest.Job: no kind")
	}
	if o.Queue == "" {
		o.Queue = "default"
	}
	if o.State == "" {
		o.State = rivertype.JobStateRunning
	}
	if o.Attempt == 0 && o.State == rivertype.JobStateRunning {
		o.Attempt = 1
	}
	if o.MaxAttempts == 0 {
		o.MaxAttempts = 5
	}
	args, meta := jsonObject(t, o.Args), jsonObject(t, o.Metadata)
	var id int64
	if err := q(db).QueryRow(context.Background(), `
		INSERT INTO river_job (kind, args, queue, state, max_attempts, priority, attempt, attempted_at, metadata)
		VALUES ($1, $2, $3, $4::text::river_job_state, $5, 1, $6::int, CASE WHEN $6::int > 0 THEN now() END, $7) RETURNING id`,
		o.Kind, args, o.Queue, string(o.State), o.MaxAttempts, o.Attempt, meta).Scan(&id); err != nil {
		t.Fatalf("storetest.Job: %v", err)
	}
	return id
}

func jsonObject(t testing.TB, v any) []byte {
	t.Helper()
	if v == nil {
		return []byte(`{}`)
	}
	if b, ok := v.(string); ok {
		return []byte(b)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("storetest: marshal %T: %v", v, err)
	}
	if string(b) == "null" { // a nil map or pointer in an interface
		return []byte(`{}`)
	}
	return b
}

// JobMatch selects River jobs: zero fields match every job. Args matches
// the jobs whose args contain it (JSON containment, @>); a nil or empty
// Args matches any.
type JobMatch struct {
	ID   int64
	Kind string
	Args any
}

func (m JobMatch) where(t testing.TB) (string, []any) {
	var args any
	if m.Args != nil {
		args = jsonObject(t, m.Args)
	}
	return `($1::bigint = 0 OR id = $1::bigint) AND ($2::text = '' OR kind = $2::text) AND ($3::jsonb IS NULL OR args @> $3::jsonb)`,
		[]any{m.ID, m.Kind, args}
}

// JobRow is a River job as tests check it. Args and Metadata are decoded
// into maps (JSON numbers become float64); RawArgs is the args as stored.
type JobRow struct {
	ID          int64
	Kind        string
	Queue       string
	State       rivertype.JobState
	Attempt     int
	MaxAttempts int
	Args        map[string]any
	RawArgs     json.RawMessage
	Metadata    map[string]any
	Errors      []string // the error of each failed attempt, oldest first
	CreatedAt   time.Time
	ScheduledAt time.Time
	FinalizedAt time.Time // zero until the job is final
}

// Jobs returns the River jobs m selects, oldest first.
func Jobs(t testing.TB, db *store.DB, m JobMatch) []JobRow {
	t.Helper()
	where, args := m.where(t)
	rows, err := q(db).Query(context.Background(), `SELECT id, kind, queue, state::text, attempt, max_attempts, args, metadata,
		coalesce(ARRAY(SELECT coalesce(e ->> 'error', '') FROM unnest(errors) e), '{}'), created_at, scheduled_at,
		coalesce(finalized_at, '0001-01-01 00:00:00+00')
		FROM river_job WHERE `+where+` ORDER BY id`, args...)
	if err != nil {
		t.Fatalf("storetest.Jobs: %v", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (JobRow, error) {
		var j JobRow
		var state string
		var meta []byte
		if err := row.Scan(&j.ID, &j.Kind, &j.Queue, &state, &j.Attempt, &j.MaxAttempts, &j.RawArgs, &meta, &j.Errors,
			&j.CreatedAt, &j.ScheduledAt, &j.FinalizedAt); err != nil {
			return j, err
		}
		j.State = rivertype.JobState(state)
		if err := json.Unmarshal(j.RawArgs, &j.Args); err != nil {
			return j, err
		}
		return j, json.Unmarshal(meta, &j.Metadata)
	})
	if err != nil {
		t.Fatalf("storetest.Jobs: %v", err)
	}
	return out
}

// SetJobState moves the River jobs m selects to state, as their worker
// would: running ones get an attempt and attempted_at, final ones
// (completed, cancelled, discarded) finalized_at. It returns how many
// jobs it moved.
func SetJobState(t testing.TB, db *store.DB, m JobMatch, state rivertype.JobState) int {
	t.Helper()
	where, args := m.where(t)
	tag, err := q(db).Exec(context.Background(), `UPDATE river_job SET state = $4::text::river_job_state,
		attempt = CASE WHEN $4::text = 'running' THEN attempt + 1 ELSE attempt END,
		attempted_at = CASE WHEN $4::text = 'running' THEN now() ELSE attempted_at END,
		finalized_at = CASE WHEN $4::text IN ('completed', 'cancelled', 'discarded') THEN now() END
		WHERE `+where, append(args, string(state))...)
	if err != nil {
		t.Fatalf("storetest.SetJobState: %v", err)
	}
	return int(tag.RowsAffected())
}

// JobChange is what UpdateJobs sets: zero fields are left as they are.
type JobChange struct {
	State       rivertype.JobState
	Attempt     int
	ScheduledAt time.Time
}

// UpdateJobs stages the River jobs m selects as a worker and River's
// scheduler would have left them (a job that failed twice and waits, say)
// and returns how many it changed. A final State sets finalized_at.
func UpdateJobs(t testing.TB, db *store.DB, m JobMatch, c JobChange) int {
	t.Helper()
	where, args := m.where(t)
	var at *time.Time
	if !c.ScheduledAt.IsZero() {
		at = &c.ScheduledAt
	}
	tag, err := q(db).Exec(context.Background(), `UPDATE river_job SET
		state = coalesce(nullif($4::text, '')::river_job_state, state),
		attempt = CASE WHEN $5::int > 0 THEN $5::int ELSE attempt END,
		scheduled_at = coalesce($6::timestamptz, scheduled_at),
		finalized_at = CASE WHEN $4::text IN ('completed', 'cancelled', 'discarded') THEN now()
			WHEN $4::text = '' THEN finalized_at END
		WHERE `+where, append(args, string(c.State), c.Attempt, at)...)
	if err != nil {
		t.Fatalf("storetest.UpdateJobs: %v", err)
	}
	return int(tag.RowsAffected())
}

// DeleteJobs deletes the River jobs m selects (as River's cleaner does
// with old final jobs) and returns how many it deleted.
func DeleteJobs(t testing.TB, db *store.DB, m JobMatch) int {
	t.Helper()
	where, args := m.where(t)
	tag, err := q(db).Exec(context.Background(), `DELETE FROM river_job WHERE `+where, args...)
	if err != nil {
		t.Fatalf("storetest.DeleteJobs: %v", err)
	}
	return int(tag.RowsAffected())
}
