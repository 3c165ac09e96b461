-- Skipped source messages, system notifications and settings.

CREATE TABLE skipped_packages (
    id                     BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    source_channel_id      BIGINT      NOT NULL REFERENCES messenger_channels (id) ON DELETE CASCADE,
    source_message_id      BIGINT      NOT NULL,
    source_topic_id        BIGINT,
    account_channel_map_id BIGINT      REFERENCES account_channel_maps (id) ON DELETE SET NULL,
    file_name              TEXT        NOT NULL DEFAULT '',
    file_size              BIGINT      NOT NULL DEFAULT 0,
    part_count             INTEGER     NOT NULL DEFAULT 1,
    reason                 TEXT        NOT NULL
        CHECK (reason IN ('DOWNLOAD_FAILED', 'UPLOAD_FAILED', 'EXTRACT_FAILED', 'HASH_MISMATCH', 'INCOMPLETE_SET', 'SIZE_LIMIT', 'ACCESS_LOST', 'OTHER')),
    -- RETRYING while River still has attempts left, SKIPPED once it gave up.
    status                 TEXT        NOT NULL DEFAULT 'RETRYING' CHECK (status IN ('RETRYING', 'SKIPPED')),
    attempt_count          INTEGER     NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
    max_attempts           INTEGER     NOT NULL DEFAULT 5 CHECK (max_attempts >= 1),
    last_error             TEXT        NOT NULL DEFAULT '',
    river_job_id           BIGINT,
    created_at             TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at             TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (source_channel_id, source_message_id)
);

CREATE TABLE system_notifications (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    type        TEXT        NOT NULL CHECK (type IN ('HASH_MISMATCH', 'MISSING_PART', 'GROUPING_CONFLICT',
                                                     'CHANNEL_ACCESS_LOST', 'UPLOAD_FAILED', 'DOWNLOAD_FAILED', 'ORPHANED_INDEX')),
    severity    TEXT        NOT NULL DEFAULT 'INFO' CHECK (severity IN ('INFO', 'WARNING', 'ERROR')),
    title       TEXT        NOT NULL,
    message     TEXT        NOT NULL DEFAULT '',
    context     JSONB       NOT NULL DEFAULT '{}',
    -- Identifies "the same problem": a second notification with the same key
    -- is not created while the first is not dismissed.
    dedup_key   TEXT        NOT NULL,
    package_id  BIGINT      REFERENCES packages (id) ON DELETE CASCADE,
    channel_id  BIGINT      REFERENCES messenger_channels (id) ON DELETE CASCADE,
    is_read     BOOLEAN     NOT NULL DEFAULT false,
    read_at     TIMESTAMPTZ,
    dismissed   BOOLEAN     NOT NULL DEFAULT false,
    dismissed_at TIMESTAMPTZ,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX system_notifications_dedup_idx ON system_notifications (dedup_key) WHERE NOT dismissed;
CREATE INDEX system_notifications_live_idx ON system_notifications (created_at DESC, id DESC) WHERE NOT dismissed;
CREATE INDEX system_notifications_package_idx ON system_notifications (package_id) WHERE package_id IS NOT NULL;
CREATE INDEX system_notifications_channel_idx ON system_notifications (channel_id) WHERE channel_id IS NOT NULL;

CREATE TABLE settings (
    key        TEXT        PRIMARY KEY CHECK (length(key) BETWEEN 1 AND 128),
    value      JSONB       NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
