-- +goose Up
-- The TTL an item was stored with, which a read with refresh_ttl restarts
-- (expires_ns = now + ttl_ns). Items stored before it have none recorded:
-- their TTL is expires_ns - updated_ns, as no read had refreshed it.
ALTER TABLE store_items ADD COLUMN ttl_ns bigint;

-- +goose Down
ALTER TABLE store_items DROP COLUMN ttl_ns;
