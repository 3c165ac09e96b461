-- App tokens (issue #27): a user's named credentials for the read-only API.
-- Only the SHA-256 of the secret is kept (token_hash), so the table leaks no
-- usable credential; prefix is the secret's non-secret start, for display.
-- A revoked token keeps its row (revoked_at) and never authenticates again.

CREATE TABLE app_tokens (
    id           BIGSERIAL   PRIMARY KEY,
    user_id      BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         TEXT        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 64),
    token_hash   BYTEA       NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
    prefix       TEXT        NOT NULL CHECK (char_length(prefix) <= 16),
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_used_at TIMESTAMPTZ,
    revoked_at   TIMESTAMPTZ
);
-- A user's tokens: the settings list, the per-user limit, the cascade.
CREATE INDEX app_tokens_user_id_idx ON app_tokens (user_id);
