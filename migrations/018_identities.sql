-- Sign-in with an identity provider (issue #17): the provider accounts
-- linked to users, and the sign-ins in flight through a provider.

-- A user's account at an identity provider. (issuer, subject) names it for
-- good: the issuer is the OpenID Connect issuer URL or GitHub's address, the
-- subject the provider's stable id (never the e-mail, which can change
-- hands). provider is the configuration's key ("oidc", "github"); a user
-- links at most one account per provider.
CREATE TABLE user_identities (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id      BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    provider     TEXT        NOT NULL CHECK (length(provider) BETWEEN 1 AND 32),
    issuer       TEXT        NOT NULL CHECK (length(issuer) BETWEEN 1 AND 2048),
    subject      TEXT        NOT NULL CHECK (length(subject) BETWEEN 1 AND 255),
    -- What the provider last said the account's e-mail is (for Settings).
    email        TEXT        NOT NULL DEFAULT '' CHECK (length(email) <= 320),
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_used_at TIMESTAMPTZ,
    UNIQUE (issuer, subject),
    UNIQUE (user_id, provider)
);

-- A sign-in (or a link from Settings) sent to a provider and not back yet.
-- id is the SHA-256 of the state the provider hands back, which the browser
-- also holds in a short-lived HttpOnly cookie; the row is taken (deleted)
-- when the provider sends the browser back, so a state works once. It keeps
-- what must not travel through the provider: the PKCE verifier, the nonce
-- the ID token must carry, where to go afterwards, the invite code a new
-- account uses, and the user a link is for.
CREATE TABLE sign_in_flows (
    id                 TEXT        PRIMARY KEY,
    provider           TEXT        NOT NULL CHECK (length(provider) BETWEEN 1 AND 32),
    verifier           TEXT        NOT NULL CHECK (length(verifier) BETWEEN 43 AND 128),
    nonce              TEXT        NOT NULL CHECK (length(nonce) BETWEEN 16 AND 128),
    next_path          TEXT        NOT NULL DEFAULT '/' CHECK (length(next_path) <= 8192),
    invite_code        TEXT        NOT NULL DEFAULT '' CHECK (length(invite_code) <= 64),
    link_user_id       BIGINT      REFERENCES users (id) ON DELETE CASCADE,
    -- The user typed their password to start the link.
    password_confirmed BOOLEAN     NOT NULL DEFAULT false,
    created_at         TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at         TIMESTAMPTZ NOT NULL
);
CREATE INDEX sign_in_flows_expires_at_idx ON sign_in_flows (expires_at);
