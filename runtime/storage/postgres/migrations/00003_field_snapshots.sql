-- +goose Up
-- A field's full value at one version, saved when a read of a thread's
-- newest state walked a long chain of append deltas (see
-- checkpoint.SnapshotAfter); one per thread and field.
CREATE TABLE snapshots (
	thread_id text NOT NULL,
	field     text NOT NULL,
	version   bigint NOT NULL,
	data      bytea NOT NULL,
	PRIMARY KEY (thread_id, field)
);

-- +goose Down
DROP TABLE snapshots;
