-- +goose Up
-- Runs shared by every serve replica on the database. One row per run; the
-- columns status, cancel_action, owner and lease_until are authoritative,
-- record holds the rest of the run as the API returns it.
CREATE TABLE runs (
	run_id        text PRIMARY KEY,
	thread_id     text NOT NULL,
	seq           bigserial NOT NULL,
	status        text NOT NULL,
	cancel_action text NOT NULL DEFAULT '',
	owner         text,
	lease_until   timestamptz,
	created_at    timestamptz NOT NULL,
	updated_at    timestamptz NOT NULL,
	record        jsonb NOT NULL
);
-- One running run per thread, whichever replica runs it.
CREATE UNIQUE INDEX runs_one_running ON runs (thread_id) WHERE status = 'running';
CREATE INDEX runs_thread ON runs (thread_id, created_at DESC);
CREATE INDEX runs_unfinished ON runs (seq) WHERE status IN ('pending', 'running');

-- Stream frames of runs, so that a client on any replica can follow (or
-- join late) a run executing on another one.
CREATE TABLE run_frames (
	run_id     text NOT NULL,
	seq        integer NOT NULL,
	mode       text NOT NULL,
	event      text NOT NULL,
	data       bytea NOT NULL,
	created_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (run_id, seq)
);
CREATE INDEX run_frames_created ON run_frames (created_at);

-- One row per cron firing: the replica that inserts it fires the cron.
CREATE TABLE cron_fires (
	cron_id text NOT NULL,
	due     timestamptz NOT NULL,
	PRIMARY KEY (cron_id, due)
);

-- Run records kept in the store by earlier versions move to runs.
INSERT INTO runs (run_id, thread_id, status, cancel_action, created_at, updated_at, record)
SELECT key, namespace[3],
	convert_from(value, 'UTF8')::jsonb->>'status',
	coalesce(convert_from(value, 'UTF8')::jsonb->>'cancel_action', ''),
	(convert_from(value, 'UTF8')::jsonb->>'created_at')::timestamptz,
	(convert_from(value, 'UTF8')::jsonb->>'updated_at')::timestamptz,
	convert_from(value, 'UTF8')::jsonb
FROM store_items
WHERE namespace[1] = 'graphctl' AND namespace[2] = 'runs' AND cardinality(namespace) = 3
ORDER BY (convert_from(value, 'UTF8')::jsonb->>'created_at')
ON CONFLICT DO NOTHING;
DELETE FROM store_items WHERE namespace[1] = 'graphctl' AND namespace[2] = 'runs' AND cardinality(namespace) = 3;

-- +goose Down
DROP TABLE cron_fires;
DROP TABLE run_frames;
DROP TABLE runs;
