-- +goose Up
-- graphctl_require_blobs fails the statement (and so the implicit transaction
-- of a checkpoint's batch) when one of the (field, version) pairs has no blob.
-- +goose StatementBegin
CREATE FUNCTION graphctl_require_blobs(p_thread text, p_fields text[], p_versions bigint[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	missing text;
BEGIN
	SELECT string_agg(w.field || '@' || w.version, ', ' ORDER BY w.field, w.version) INTO missing
	FROM unnest(p_fields, p_versions) AS w(field, version)
	WHERE NOT EXISTS (SELECT 1 FROM blobs b WHERE b.thread_id = p_thread AND b.field = w.field AND b.version = w.version);
	IF missing IS NOT NULL THEN
		RAISE EXCEPTION 'no blob for field version %', missing USING ERRCODE = 'no_data_found';
	END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION graphctl_require_blobs(text, text[], bigint[]);
