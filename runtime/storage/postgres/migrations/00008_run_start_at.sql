-- +goose Up
-- When a queued run may start: the time it was queued, or later for a run
-- created with after_seconds. The queued runs of a thread start in the
-- order of start_at (then seq), each once its start_at has passed.
ALTER TABLE runs ADD COLUMN start_at timestamptz NOT NULL DEFAULT now();
UPDATE runs SET start_at = created_at;

-- +goose Down
ALTER TABLE runs DROP COLUMN start_at;
