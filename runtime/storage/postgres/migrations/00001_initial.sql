-- +goose Up
CREATE TABLE threads (
	thread_id  text PRIMARY KEY,
	graph_name text NOT NULL,
	latest     text NOT NULL,
	step       integer NOT NULL,
	updated_at timestamptz NOT NULL
);
CREATE INDEX threads_updated ON threads (updated_at DESC, thread_id);

CREATE TABLE checkpoints (
	thread_id text NOT NULL,
	id        text NOT NULL,
	data      bytea NOT NULL,
	PRIMARY KEY (thread_id, id)
);

CREATE TABLE blobs (
	thread_id text NOT NULL,
	field     text NOT NULL,
	version   bigint NOT NULL,
	base      bigint NOT NULL,
	data      bytea NOT NULL,
	PRIMARY KEY (thread_id, field, version)
);

CREATE TABLE pending_writes (
	thread_id     text NOT NULL,
	checkpoint_id text NOT NULL,
	task_id       text NOT NULL,
	data          bytea NOT NULL,
	PRIMARY KEY (thread_id, checkpoint_id, task_id)
);

CREATE TABLE store_items (
	namespace  text[] NOT NULL,
	key        text NOT NULL,
	value      bytea NOT NULL,
	created_ns bigint NOT NULL,
	updated_ns bigint NOT NULL,
	expires_ns bigint,
	indexed    boolean NOT NULL,
	terms      text NOT NULL,
	PRIMARY KEY (namespace, key)
);
CREATE INDEX store_items_first ON store_items ((namespace[1]));

-- +goose Down
DROP TABLE store_items;
DROP TABLE pending_writes;
DROP TABLE blobs;
DROP TABLE checkpoints;
DROP TABLE threads;
