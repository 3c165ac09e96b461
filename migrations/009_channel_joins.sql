-- Requests to add a source channel by link, @username or invite link (the
-- messaging admin page): the web inserts the row with its join_channel job in
-- one transaction, the worker records the outcome on it, and the page lists
-- the recent ones, polling while one is PENDING.

CREATE TABLE channel_joins (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- Normalised reference: "@name" or "https://t.me/+HASH".
    ref           TEXT        NOT NULL CHECK (length(ref) BETWEEN 2 AND 100),
    account_id    BIGINT      REFERENCES messenger_accounts (id) ON DELETE SET NULL,
    category      TEXT        CHECK (length(category) <= 64),
    status        TEXT        NOT NULL DEFAULT 'PENDING'
        CHECK (status IN ('PENDING', 'JOINED', 'REQUEST_SENT', 'NOT_FOUND', 'FAILED')),
    channel_id    BIGINT      REFERENCES messenger_channels (id) ON DELETE SET NULL,
    title         TEXT        NOT NULL DEFAULT '',
    error_message TEXT        NOT NULL DEFAULT '',
    river_job_id  BIGINT,
    requested_by  BIGINT      REFERENCES users (id) ON DELETE SET NULL,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    finished_at   TIMESTAMPTZ,
    CHECK ((status = 'PENDING') = (finished_at IS NULL))
);
CREATE INDEX channel_joins_created_at_idx ON channel_joins (created_at DESC, id DESC);
-- One pending request per reference: asking twice returns the first.
CREATE UNIQUE INDEX channel_joins_pending_ref_idx ON channel_joins (ref) WHERE status = 'PENDING';
