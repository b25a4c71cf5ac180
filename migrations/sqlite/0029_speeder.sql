-- Kept in step with migrations/postgres/0029_speeder.sql: a participant whose median time on
-- item is under this many seconds is flagged a speeder (NULL: no one is).
ALTER TABLE studies ADD COLUMN speeder_seconds BIGINT CHECK (speeder_seconds >= 1);
