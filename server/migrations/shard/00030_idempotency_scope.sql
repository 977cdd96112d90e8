-- +goose Up
-- An Idempotency-Key is scoped to the caller, the procedure and what the
-- request acts on (a show, hold, order … id; R-5.1,
-- docs/decisions/0087-idempotency-keys-scoped-to-their-target.md): every
-- record of one scope lives in the one database that target lives in, so a
-- reuse is always seen, and the same key for another show is another
-- request, never a wrong replay on one shard and a silent second run on another.
ALTER TABLE idempotency_keys ADD COLUMN target text NOT NULL DEFAULT '';
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
ALTER TABLE idempotency_keys ADD PRIMARY KEY (scope, procedure, target, key);

-- +goose Down
DELETE FROM idempotency_keys k USING idempotency_keys o
WHERE k.scope = o.scope AND k.key = o.key AND k.ctid > o.ctid;
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
ALTER TABLE idempotency_keys ADD PRIMARY KEY (scope, key);
ALTER TABLE idempotency_keys DROP COLUMN target;
