-- +goose Up
-- Semantic search over the store: an item's embedding, when the store has an
-- embedder, and the name of the model that made it (vectors of another model
-- are ignored). Similarity is computed in Go, exactly; pgvector is not used.
ALTER TABLE store_items ADD COLUMN embedding real[], ADD COLUMN embedding_model text;

-- +goose Down
ALTER TABLE store_items DROP COLUMN embedding, DROP COLUMN embedding_model;
