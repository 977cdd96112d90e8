-- +goose Up
-- Partner resellers and their API keys (issue 12; decision 0180). A key is
-- stored as the SHA-256 of its secret, never the secret: the secret is 32
-- random bytes, so a fast hash is enough (nothing to guess by brute force).
-- Every call with a key reads its row by that hash, so a revocation is seen
-- by every API process at once.
CREATE TABLE partners (
    partner_id               bigserial   PRIMARY KEY,
    name                     text        NOT NULL CHECK (name <> ''),
    commission_bps           integer     NOT NULL CHECK (commission_bps BETWEEN 0 AND 10000),
    contact_name             text        NOT NULL DEFAULT '',
    contact_email            text        NOT NULL DEFAULT '',
    contact_phone            text        NOT NULL DEFAULT '',
    -- both empty: every show
    allowed_organization_ids text[]      NOT NULL DEFAULT '{}',
    allowed_show_ids         bigint[]    NOT NULL DEFAULT '{}',
    created_by               text        NOT NULL,
    created_at               timestamptz NOT NULL
);

CREATE TABLE api_keys (
    key_id       text        PRIMARY KEY,
    partner_id   bigint      NOT NULL REFERENCES partners,
    secret_hash  bytea       NOT NULL UNIQUE CHECK (length(secret_hash) = 32),
    name         text        NOT NULL DEFAULT '',
    scope        text        NOT NULL CHECK (scope IN ('read_only', 'booking')),
    mode         text        NOT NULL CHECK (mode IN ('live', 'test')),
    prefix       text        NOT NULL,
    last4        text        NOT NULL,
    created_by   text        NOT NULL,
    created_at   timestamptz NOT NULL,
    -- written at most once a minute per key, not per call
    last_used_at timestamptz,
    revoked_at   timestamptz
);
CREATE INDEX api_keys_partner ON api_keys (partner_id, created_at DESC);

-- +goose Down
DROP TABLE api_keys;
DROP TABLE partners;
