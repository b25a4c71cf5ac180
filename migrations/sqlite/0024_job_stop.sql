-- Kept in step with migrations/postgres/0024_job_stop.sql: someone asked a queued or running job
-- to stop (1). The instance running it reads the flag with each progress write and ends the
-- job as `stopped`, storing nothing; a queued job is stopped at once.
ALTER TABLE jobs ADD COLUMN stop_requested BIGINT NOT NULL DEFAULT 0;
