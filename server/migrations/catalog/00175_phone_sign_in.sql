-- +goose Up
-- Sign-in by mobile number and a one-time code by SMS (issue 25 §2,
-- decision 0436).
--
-- A number's buyer: made at its first sign-in, the same user id ever after
-- (an opaque id: a number never travels in events or webhooks as an id).
CREATE TABLE phone_accounts (
    phone      text        PRIMARY KEY CHECK (phone ~ '^\+[1-9][0-9]{6,14}$'),
    user_id    text        NOT NULL UNIQUE,
    created_at timestamptz NOT NULL
);

-- A number's current code, only its HMAC (keyed by the token keys: a copy
-- of the table does not give the codes), and the limits it counts.
CREATE TABLE phone_codes (
    phone         text        PRIMARY KEY CHECK (phone ~ '^\+[1-9][0-9]{6,14}$'),
    code_mac      bytea,
    key_id        text        NOT NULL DEFAULT '',
    expires_at    timestamptz NOT NULL,
    -- Wrong tries of the current code.
    attempts      integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    -- Codes sent since window_start (an hour).
    sends         integer     NOT NULL DEFAULT 0 CHECK (sends >= 0),
    window_start  timestamptz NOT NULL,
    last_sent_at  timestamptz NOT NULL,
    locked_until  timestamptz
);

-- Each code sent, by the client address that asked: the per-address limit.
CREATE TABLE phone_code_sends (
    client  text        NOT NULL,
    sent_at timestamptz NOT NULL
);
CREATE INDEX phone_code_sends_client ON phone_code_sends (client, sent_at);

-- +goose Down
DROP TABLE phone_code_sends;
DROP TABLE phone_codes;
DROP TABLE phone_accounts;
