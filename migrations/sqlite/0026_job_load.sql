-- Kept in step with migrations/postgres/0026_job_load.sql: while a scoring job's neural model
-- loads (minutes for a 7B model), the bytes of its tensors read so far and in all, written with
-- each progress write by the instance running it (0 of 0: nothing loaded).
ALTER TABLE jobs ADD COLUMN load_read BIGINT NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN load_of BIGINT NOT NULL DEFAULT 0;
