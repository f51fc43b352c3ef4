-- +goose Up
-- Thread ids in byte order, whatever the database's collation: a thread's
-- subgraph threads are the ids in the range that starts with the thread's
-- id and the namespace separator 0x1f (see tx.Children).
CREATE INDEX threads_id_bytes ON threads (thread_id COLLATE "C");

-- +goose Down
DROP INDEX threads_id_bytes;
