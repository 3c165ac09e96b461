-- Publications in flight (a downloaded source set or a manual upload file on
-- its way to the destination channel) and the River job that owns an
-- ingestion run.

ALTER TABLE ingestion_runs ADD COLUMN river_job_id BIGINT;
CREATE UNIQUE INDEX ingestion_runs_river_job_idx ON ingestion_runs (river_job_id) WHERE river_job_id IS NOT NULL;

CREATE TABLE transfers (
    id                    BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- A source set (channel + first part's message) or a manual upload file.
    source_channel_id     BIGINT      REFERENCES messenger_channels (id) ON DELETE CASCADE,
    source_message_id     BIGINT,
    manual_upload_file_id BIGINT      REFERENCES manual_upload_files (id) ON DELETE CASCADE,
    ingestion_run_id      BIGINT      REFERENCES ingestion_runs (id) ON DELETE SET NULL,
    account_id            BIGINT      NOT NULL REFERENCES messenger_accounts (id) ON DELETE CASCADE,
    dest_channel_id       BIGINT      NOT NULL REFERENCES messenger_channels (id) ON DELETE CASCADE,
    status                TEXT        NOT NULL DEFAULT 'PUBLISHING'
        CHECK (status IN ('PUBLISHING', 'VERIFYING', 'DONE', 'FAILED')),
    -- Server-chosen spool files (the parts in order); never built from
    -- names the platform or a user chose.
    spool_paths           TEXT[]      NOT NULL,
    keep_files            BOOLEAN     NOT NULL DEFAULT false,
    content_hash          TEXT        NOT NULL CHECK (content_hash ~ '^[0-9a-f]{64}$'),
    -- The package to index once every part is posted (root hoard.Package).
    draft                 JSONB       NOT NULL,
    preview_data          BYTEA,
    parts_total           INTEGER     NOT NULL CHECK (parts_total >= 1),
    error_message         TEXT        NOT NULL DEFAULT '',
    created_at            TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at            TIMESTAMPTZ NOT NULL DEFAULT now(),
    CHECK ((source_channel_id IS NULL) = (source_message_id IS NULL)),
    CHECK ((source_channel_id IS NULL) <> (manual_upload_file_id IS NULL))
);
CREATE UNIQUE INDEX transfers_source_idx ON transfers (source_channel_id, source_message_id) WHERE source_channel_id IS NOT NULL;
CREATE UNIQUE INDEX transfers_upload_file_idx ON transfers (manual_upload_file_id) WHERE manual_upload_file_id IS NOT NULL;
CREATE INDEX transfers_unfinished_idx ON transfers (id) WHERE status IN ('PUBLISHING', 'VERIFYING');
CREATE INDEX transfers_content_hash_idx ON transfers (content_hash);

CREATE TABLE transfer_parts (
    transfer_id       BIGINT  NOT NULL REFERENCES transfers (id) ON DELETE CASCADE,
    part_no           INTEGER NOT NULL CHECK (part_no >= 0),
    name              TEXT    NOT NULL,
    byte_offset       BIGINT  NOT NULL CHECK (byte_offset >= 0),
    length            BIGINT  NOT NULL CHECK (length > 0),
    -- The source message to re-send instead of uploading (no bytes move).
    resend_message_id BIGINT,
    -- The destination's newest known message id when posting began: after a
    -- crash, recovery looks for the part after it before posting again.
    dest_after_id     BIGINT,
    dest_message_id   BIGINT,
    PRIMARY KEY (transfer_id, part_no)
);
