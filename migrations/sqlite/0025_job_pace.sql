-- Kept in step with migrations/postgres/0025_job_pace.sql: a running job's pace, written with
-- each progress write by the instance running it: the tokens scored so far (neural and
-- n-gram scoring), the milliseconds it has been counting (its model loaded), and the time it
-- expects still to take (none until it can tell).
ALTER TABLE jobs ADD COLUMN tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN counting_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN eta_ms BIGINT;
