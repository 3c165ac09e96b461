-- Messenger accounts, channels, the account-to-channel maps with their scan
-- state, forum topic progress, persisted client sessions and bot links.

CREATE TABLE messenger_accounts (
    id                  BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    phone               TEXT        NOT NULL UNIQUE,
    display_name        TEXT        NOT NULL DEFAULT '',
    platform_user_id    BIGINT,
    is_premium          BOOLEAN     NOT NULL DEFAULT false,
    is_active           BOOLEAN     NOT NULL DEFAULT true,
    auth_state          TEXT        NOT NULL DEFAULT 'PENDING'
        CHECK (auth_state IN ('PENDING', 'AWAITING_CODE', 'AWAITING_PASSWORD', 'AUTHENTICATED', 'EXPIRED', 'FAILED')),
    auth_error          TEXT        NOT NULL DEFAULT '',
    -- Login secrets in flight, encrypted with a key derived from AUTH_SECRET
    -- and deleted once used. Never returned to a browser.
    login_code_hash_enc BYTEA,
    login_code_enc      BYTEA,
    login_password_enc  BYTEA,
    last_seen_at        TIMESTAMPTZ,
    created_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at          TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Encrypted MTProto sessions: "account:<id>" and "bot".
CREATE TABLE messenger_sessions (
    key        TEXT        PRIMARY KEY,
    data       BYTEA       NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE messenger_channels (
    id                  BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    platform_id         BIGINT      NOT NULL UNIQUE,
    title               TEXT        NOT NULL DEFAULT '',
    username            TEXT,
    invite_link         TEXT,
    kind                TEXT        NOT NULL DEFAULT 'SOURCE' CHECK (kind IN ('SOURCE', 'DESTINATION')),
    category            TEXT        CHECK (length(category) <= 64),
    is_active           BOOLEAN     NOT NULL DEFAULT false,
    auto_group_enabled  BOOLEAN     NOT NULL DEFAULT true,
    is_forum            BOOLEAN     NOT NULL DEFAULT false,
    is_protected        BOOLEAN     NOT NULL DEFAULT false,
    access_lost_at      TIMESTAMPTZ,
    created_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at          TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX messenger_channels_username_idx ON messenger_channels (lower(username)) WHERE username IS NOT NULL;

-- One row per (account, channel): the account's view of the channel (its
-- access hash), its watermark and the cold-channel scan state.
CREATE TABLE account_channel_maps (
    id                        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id                BIGINT      NOT NULL REFERENCES messenger_accounts (id) ON DELETE CASCADE,
    channel_id                BIGINT      NOT NULL REFERENCES messenger_channels (id) ON DELETE CASCADE,
    access_hash               BIGINT      NOT NULL DEFAULT 0,
    role                      TEXT        NOT NULL DEFAULT 'READER' CHECK (role IN ('READER', 'WRITER')),
    last_processed_message_id BIGINT      NOT NULL DEFAULT 0,
    last_scanned_at           TIMESTAMPTZ NOT NULL DEFAULT '1970-01-01 00:00:00+00',
    last_scan_found_archives  BOOLEAN     NOT NULL DEFAULT true,
    consecutive_empty_scans   INTEGER     NOT NULL DEFAULT 0,
    created_at                TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (account_id, channel_id)
);
CREATE INDEX account_channel_maps_channel_id_idx ON account_channel_maps (channel_id);

CREATE TABLE topic_progress (
    id                        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_channel_map_id    BIGINT      NOT NULL REFERENCES account_channel_maps (id) ON DELETE CASCADE,
    topic_id                  BIGINT      NOT NULL,
    topic_name                TEXT        NOT NULL DEFAULT '',
    is_general                BOOLEAN     NOT NULL DEFAULT false,
    fetch_enabled             BOOLEAN     NOT NULL DEFAULT true,
    last_processed_message_id BIGINT      NOT NULL DEFAULT 0,
    last_scanned_at           TIMESTAMPTZ NOT NULL DEFAULT '1970-01-01 00:00:00+00',
    last_scan_found_archives  BOOLEAN     NOT NULL DEFAULT true,
    consecutive_empty_scans   INTEGER     NOT NULL DEFAULT 0,
    created_at                TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at                TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (account_channel_map_id, topic_id)
);

-- A web user's link to a messenger account, made with a one-time code.
CREATE TABLE messenger_links (
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id          BIGINT      NOT NULL UNIQUE REFERENCES users (id) ON DELETE CASCADE,
    platform_user_id BIGINT      NOT NULL UNIQUE,
    access_hash      BIGINT      NOT NULL DEFAULT 0,
    username         TEXT        NOT NULL DEFAULT '',
    linked_at        TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- One-time link codes (stored hashed) issued by generateMessengerLinkCode.
CREATE TABLE messenger_link_codes (
    code_hash  TEXT        PRIMARY KEY,
    user_id    BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    expires_at TIMESTAMPTZ NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX messenger_link_codes_user_id_idx ON messenger_link_codes (user_id);
