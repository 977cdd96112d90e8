-- +goose Up
-- A rebuild (`seatghor rebuild <projector>`) resets a projector's checkpoint
-- in place, to the start of the outbox, and bumps its generation; it never
-- deletes the row (decision 0090). A running consumer moves the checkpoint
-- only while the generation is the one it loaded, so it cannot carry a
-- pre-rebuild position over the reset; and the row stays visible to every
-- pruner, which keeps the outbox for the replay.
ALTER TABLE projection_checkpoints ADD COLUMN generation bigint NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE projection_checkpoints DROP COLUMN generation;
