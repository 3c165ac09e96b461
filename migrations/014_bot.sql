-- The chat bot: delivery progress and ordered batches, subscriptions that
-- match like the catalog search and notices sent at most once, commands
-- answered exactly once by one answering process, a rate limit shared by
-- every process, and the status row the admin page shows.

-- A batch delivers several packages to one chat in order (a group, a
-- crowdfund's Send All, several packages chosen at once), after an optional
-- header message; one bot_send job works all its requests.
CREATE TABLE bot_send_batches (
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id          BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    platform_user_id BIGINT      NOT NULL,
    title            TEXT        NOT NULL DEFAULT '' CHECK (length(title) <= 600),
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now()
);

ALTER TABLE bot_send_requests
    ADD COLUMN batch_id    BIGINT  REFERENCES bot_send_batches (id) ON DELETE CASCADE,
    ADD COLUMN parts_total INTEGER NOT NULL DEFAULT 0 CHECK (parts_total >= 0),
    ADD COLUMN parts_sent  INTEGER NOT NULL DEFAULT 0 CHECK (parts_sent >= 0);
CREATE INDEX bot_send_requests_batch_idx ON bot_send_requests (batch_id, id) WHERE batch_id IS NOT NULL;

-- Subscriptions belong to a web user and reach the account linked now.
-- The match columns hold the pattern as the catalog search reads it
-- (store.subscriptionMatch): a full-text query and a substring pattern.
DELETE FROM bot_subscriptions WHERE user_id IS NULL;
DROP INDEX bot_subscriptions_user_pattern_idx;
ALTER TABLE bot_subscriptions
    DROP COLUMN platform_user_id,
    ALTER COLUMN user_id SET NOT NULL,
    ADD COLUMN match_config TEXT NOT NULL DEFAULT 'english' CHECK (match_config IN ('english', 'simple')),
    ADD COLUMN match_query  TEXT NOT NULL DEFAULT '',
    ADD COLUMN match_like   TEXT NOT NULL DEFAULT '',
    -- Set when the user blocked the bot; cleared when they write to it again.
    ADD COLUMN paused_at    TIMESTAMPTZ;
CREATE UNIQUE INDEX bot_subscriptions_user_pattern_idx ON bot_subscriptions (user_id, lower(pattern));

-- Packages indexed since notify_subscribers last ran; written in the
-- transaction that indexes the package.
CREATE TABLE bot_notify_inbox (
    package_id BIGINT      PRIMARY KEY REFERENCES packages (id) ON DELETE CASCADE,
    queued_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- One message to one user announcing one or more packages; its id derives
-- the message's random id, so a retried send never delivers it twice.
CREATE TABLE bot_notice_digests (
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id          BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    platform_user_id BIGINT      NOT NULL,
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    sent_at          TIMESTAMPTZ,
    error_message    TEXT        NOT NULL DEFAULT ''
);
CREATE INDEX bot_notice_digests_unsent_idx ON bot_notice_digests (id) WHERE sent_at IS NULL AND error_message = '';

-- At most one notice per subscription and package, ever.
CREATE TABLE bot_subscription_notices (
    subscription_id BIGINT      NOT NULL REFERENCES bot_subscriptions (id) ON DELETE CASCADE,
    package_id      BIGINT      NOT NULL REFERENCES packages (id) ON DELETE CASCADE,
    digest_id       BIGINT      NOT NULL REFERENCES bot_notice_digests (id) ON DELETE CASCADE,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (subscription_id, package_id)
);
CREATE INDEX bot_subscription_notices_digest_idx ON bot_subscription_notices (digest_id);
CREATE INDEX bot_subscription_notices_package_idx ON bot_subscription_notices (package_id);

-- Updates the bot has answered: a message (kind 'm', chat and message id) or
-- a button press (kind 'c', chat and query id). The row is written in the
-- transaction that answers, so exactly one process answers each update.
CREATE TABLE bot_handled_updates (
    kind       CHAR(1)     NOT NULL CHECK (kind IN ('m', 'c')),
    chat_id    BIGINT      NOT NULL,
    update_id  BIGINT      NOT NULL,
    handled_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (kind, chat_id, update_id)
);
CREATE INDEX bot_handled_updates_handled_at_idx ON bot_handled_updates (handled_at);

-- Paging state of a /search: the buttons carry only the token.
CREATE TABLE bot_search_pages (
    token      TEXT        PRIMARY KEY CHECK (length(token) BETWEEN 8 AND 32),
    chat_id    BIGINT      NOT NULL,
    query      TEXT        NOT NULL CHECK (length(query) <= 1000),
    -- cursors[n] starts page n (page 0 starts with null).
    cursors    JSONB       NOT NULL DEFAULT '[null]',
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX bot_search_pages_expires_at_idx ON bot_search_pages (expires_at);

-- Named leases: the process holding "bot" answers commands.
CREATE TABLE leases (
    name        TEXT        PRIMARY KEY,
    holder      TEXT        NOT NULL,
    acquired_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at  TIMESTAMPTZ NOT NULL
);

-- Token buckets shared by every process (generic cell rate algorithm): the
-- theoretical arrival time of the next request under key.
CREATE TABLE rate_limits (
    key TEXT        PRIMARY KEY CHECK (length(key) BETWEEN 1 AND 200),
    tat TIMESTAMPTZ NOT NULL
);

-- What the answering bot process last reported, for the admin page.
CREATE TABLE bot_status (
    singleton      BOOLEAN     PRIMARY KEY DEFAULT true CHECK (singleton),
    bot_user_id    BIGINT      NOT NULL DEFAULT 0,
    username       TEXT        NOT NULL DEFAULT '',
    signed_in      BOOLEAN     NOT NULL DEFAULT false,
    holder         TEXT        NOT NULL DEFAULT '',
    started_at     TIMESTAMPTZ,
    last_update_at TIMESTAMPTZ,
    queue_length   INTEGER     NOT NULL DEFAULT 0,
    can_read_dest  BOOLEAN,
    setup_hint     TEXT        NOT NULL DEFAULT '',
    error_message  TEXT        NOT NULL DEFAULT '',
    updated_at     TIMESTAMPTZ NOT NULL DEFAULT now()
);
