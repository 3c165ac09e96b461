-- Rebuilds of the catalog from the destination channel (SPEC rule 19): one
-- row per run with the live progress the admin page polls. The counters and
-- last_message_id advance in the transaction that creates a page's package
-- rows, so a restarted run continues after last_message_id, exactly once.

CREATE TABLE rebuild_runs (
    id                BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    status            TEXT        NOT NULL DEFAULT 'RUNNING' CHECK (status IN ('RUNNING', 'COMPLETED', 'FAILED')),
    dest_channel_id   BIGINT      REFERENCES messenger_channels (id) ON DELETE SET NULL,
    messages_scanned  INTEGER     NOT NULL DEFAULT 0 CHECK (messages_scanned >= 0),
    packages_created  INTEGER     NOT NULL DEFAULT 0 CHECK (packages_created >= 0),
    packages_existing INTEGER     NOT NULL DEFAULT 0 CHECK (packages_existing >= 0),
    -- Sets that could not be indexed: parts missing, or held by a
    -- publication still in flight.
    sets_skipped      INTEGER     NOT NULL DEFAULT 0 CHECK (sets_skipped >= 0),
    -- Every destination message up to this id is accounted for above.
    last_message_id   BIGINT      NOT NULL DEFAULT 0 CHECK (last_message_id >= 0),
    error_message     TEXT        NOT NULL DEFAULT '',
    river_job_id      BIGINT,
    started_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    finished_at       TIMESTAMPTZ,
    CHECK ((status = 'RUNNING') = (finished_at IS NULL))
);
-- One rebuild at a time.
CREATE UNIQUE INDEX rebuild_runs_one_running_idx ON rebuild_runs ((true)) WHERE status = 'RUNNING';
CREATE UNIQUE INDEX rebuild_runs_river_job_idx ON rebuild_runs (river_job_id) WHERE river_job_id IS NOT NULL;
CREATE INDEX rebuild_runs_started_at_idx ON rebuild_runs (started_at DESC, id DESC);

-- A rebuild asks, for every set it finds, whether a package already holds
-- one of the set's destination messages.
CREATE INDEX packages_dest_message_ids_idx ON packages USING gin (dest_message_ids);
