-- Web users, their sessions, invite codes and sign-in throttling.

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE invite_codes (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    code        TEXT        NOT NULL UNIQUE CHECK (length(code) BETWEEN 6 AND 64),
    role        TEXT        NOT NULL DEFAULT 'USER' CHECK (role IN ('USER', 'ADMIN')),
    max_uses    INTEGER     NOT NULL DEFAULT 1 CHECK (max_uses > 0),
    use_count   INTEGER     NOT NULL DEFAULT 0 CHECK (use_count >= 0),
    expires_at  TIMESTAMPTZ,
    note        TEXT        NOT NULL DEFAULT '',
    created_by  BIGINT,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    CHECK (use_count <= max_uses)
);

CREATE TABLE users (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email          TEXT        NOT NULL CHECK (length(email) BETWEEN 3 AND 320),
    password_hash  TEXT        NOT NULL,
    role           TEXT        NOT NULL DEFAULT 'USER' CHECK (role IN ('USER', 'ADMIN')),
    display_name   TEXT        NOT NULL DEFAULT '',
    invite_code_id BIGINT      REFERENCES invite_codes (id) ON DELETE SET NULL,
    created_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_login_at  TIMESTAMPTZ
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));
CREATE INDEX users_invite_code_id_idx ON users (invite_code_id) WHERE invite_code_id IS NOT NULL;

ALTER TABLE invite_codes
    ADD CONSTRAINT invite_codes_created_by_fkey FOREIGN KEY (created_by) REFERENCES users (id) ON DELETE SET NULL;

-- Server-side web sessions. id is the SHA-256 of the cookie token, so a
-- database dump does not hand out live sessions.
CREATE TABLE sessions (
    id           TEXT        PRIMARY KEY,
    user_id      BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_seen_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at   TIMESTAMPTZ NOT NULL,
    user_agent   TEXT        NOT NULL DEFAULT '',
    remote_addr  TEXT        NOT NULL DEFAULT ''
);
CREATE INDEX sessions_user_id_idx ON sessions (user_id);
CREATE INDEX sessions_expires_at_idx ON sessions (expires_at);

-- Failed sign-in counters per key ("email:<addr>" or "ip:<addr>").
CREATE TABLE auth_throttle (
    key              TEXT        PRIMARY KEY,
    failures         INTEGER     NOT NULL DEFAULT 0,
    window_started   TIMESTAMPTZ NOT NULL DEFAULT now(),
    locked_until     TIMESTAMPTZ
);
