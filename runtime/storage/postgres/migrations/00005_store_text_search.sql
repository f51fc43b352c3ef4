-- +goose Up
-- Text search over the store: an item's indexed terms (as store.Tokenize
-- makes them, space-separated) as a tsvector of exactly those lexemes, with a
-- GIN index, so a query selects the items sharing a term with it through the
-- index; term_count is the item's number of terms, for BM25's lengths.
ALTER TABLE store_items
	ADD COLUMN tsv tsvector GENERATED ALWAYS AS (array_to_tsvector(array_remove(string_to_array(terms, ' '), ''))) STORED,
	ADD COLUMN term_count integer GENERATED ALWAYS AS (cardinality(array_remove(string_to_array(terms, ' '), ''))) STORED;
CREATE INDEX store_items_tsv ON store_items USING GIN (tsv);

-- +goose Down
DROP INDEX store_items_tsv;
ALTER TABLE store_items DROP COLUMN tsv, DROP COLUMN term_count;
