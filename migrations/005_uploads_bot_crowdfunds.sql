-- Manual uploads, bot deliveries and subscriptions, crowdfund tracking.

CREATE TABLE manual_uploads (
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id          BIGINT      REFERENCES users (id) ON DELETE SET NULL,
    group_name       TEXT        NOT NULL DEFAULT '',
    status           TEXT        NOT NULL DEFAULT 'UPLOADING'
        CHECK (status IN ('UPLOADING', 'PENDING', 'PROCESSING', 'COMPLETED', 'PARTIAL', 'FAILED')),
    error_message    TEXT        NOT NULL DEFAULT '',
    package_group_id BIGINT      REFERENCES package_groups (id) ON DELETE SET NULL,
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    finished_at      TIMESTAMPTZ
);
CREATE INDEX manual_uploads_user_idx ON manual_uploads (user_id, created_at DESC);

CREATE TABLE manual_upload_files (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    upload_id     BIGINT      NOT NULL REFERENCES manual_uploads (id) ON DELETE CASCADE,
    -- The user's file name, sanitised; never used to build a path.
    file_name     TEXT        NOT NULL CHECK (length(file_name) BETWEEN 1 AND 255),
    -- Server-chosen path relative to UPLOAD_DIR.
    stored_path   TEXT        NOT NULL,
    file_size     BIGINT      NOT NULL DEFAULT 0,
    content_hash  TEXT        CHECK (content_hash ~ '^[0-9a-f]{64}$'),
    status        TEXT        NOT NULL DEFAULT 'UPLOADING'
        CHECK (status IN ('UPLOADING', 'PENDING', 'PROCESSING', 'COMPLETED', 'FAILED')),
    error_message TEXT        NOT NULL DEFAULT '',
    package_id    BIGINT      REFERENCES packages (id) ON DELETE SET NULL,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX manual_upload_files_upload_idx ON manual_upload_files (upload_id);

CREATE TABLE bot_send_requests (
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id          BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    package_id       BIGINT      NOT NULL REFERENCES packages (id) ON DELETE CASCADE,
    platform_user_id BIGINT      NOT NULL,
    requested_by     BIGINT      REFERENCES users (id) ON DELETE SET NULL,
    status           TEXT        NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'SENDING', 'SENT', 'FAILED')),
    error_message    TEXT        NOT NULL DEFAULT '',
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    sent_at          TIMESTAMPTZ
);
CREATE INDEX bot_send_requests_created_idx ON bot_send_requests (created_at DESC);
CREATE INDEX bot_send_requests_user_idx ON bot_send_requests (user_id, created_at DESC);
CREATE INDEX bot_send_requests_package_idx ON bot_send_requests (package_id);

CREATE TABLE bot_subscriptions (
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    platform_user_id BIGINT      NOT NULL,
    user_id          BIGINT      REFERENCES users (id) ON DELETE CASCADE,
    pattern          TEXT        NOT NULL CHECK (length(pattern) BETWEEN 1 AND 256),
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX bot_subscriptions_user_pattern_idx ON bot_subscriptions (platform_user_id, lower(pattern));

CREATE TABLE crowdfund_hosts (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       TEXT        NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    url        TEXT        NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX crowdfund_hosts_name_idx ON crowdfund_hosts (lower(name));

CREATE TABLE crowdfunds (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id         BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    host_id         BIGINT      REFERENCES crowdfund_hosts (id) ON DELETE SET NULL,
    name            TEXT        NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    link            TEXT        NOT NULL DEFAULT '',
    files_url       TEXT        NOT NULL DEFAULT '',
    delivery_status TEXT        NOT NULL DEFAULT 'NOT_DELIVERED' CHECK (delivery_status IN ('NOT_DELIVERED', 'PARTIAL', 'DELIVERED')),
    payment_status  TEXT        NOT NULL DEFAULT 'UNPAID' CHECK (payment_status IN ('PAID', 'UNPAID')),
    notes           TEXT        NOT NULL DEFAULT '' CHECK (length(notes) <= 2000),
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX crowdfunds_user_idx ON crowdfunds (user_id, created_at DESC);

CREATE TABLE crowdfund_packages (
    crowdfund_id BIGINT      NOT NULL REFERENCES crowdfunds (id) ON DELETE CASCADE,
    package_id   BIGINT      NOT NULL REFERENCES packages (id) ON DELETE CASCADE,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (crowdfund_id, package_id)
);
CREATE INDEX crowdfund_packages_package_idx ON crowdfund_packages (package_id);
