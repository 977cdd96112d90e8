-- +goose Up
-- Guest checkout (issue 25 §2, decision 0437): each guest's token handed
-- out, by the client address that asked, for the per-address limit. A
-- guest has no account: nothing else about one is kept here.
CREATE TABLE guest_starts (
    client     text        NOT NULL,
    started_at timestamptz NOT NULL
);
CREATE INDEX guest_starts_client ON guest_starts (client, started_at);

-- +goose Down
DROP TABLE guest_starts;
