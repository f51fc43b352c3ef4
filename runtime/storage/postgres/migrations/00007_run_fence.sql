-- +goose Up
-- Every claim of a run gets a new generation (a takeover by another replica
-- increments it), the fencing token of the writes made for the run.
ALTER TABLE runs ADD COLUMN lease_gen bigint NOT NULL DEFAULT 0;

-- graphctl_fence fails the statement (and so the transaction of the write it
-- opens) unless replica p_owner still holds run p_run under claim p_gen. It
-- locks the run's row in key-share mode until the transaction ends: a
-- takeover (Claim locks the row for update) waits for a write in progress,
-- or the write, once the takeover committed, sees the new claim and fails.
-- +goose StatementBegin
CREATE FUNCTION graphctl_fence(p_run text, p_owner text, p_gen bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM 1 FROM runs WHERE run_id = p_run AND owner = p_owner AND lease_gen = p_gen AND status = 'running' FOR KEY SHARE;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'run % is no longer held by replica % under claim %', p_run, p_owner, p_gen
			USING ERRCODE = 'GCF01', HINT = 'another replica took the run over after this one missed its lease';
	END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION graphctl_fence(text, text, bigint);
ALTER TABLE runs DROP COLUMN lease_gen;
