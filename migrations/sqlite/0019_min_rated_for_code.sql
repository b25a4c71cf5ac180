-- Kept in step with migrations/postgres/0019_min_rated_for_code.sql: a participant gets the study's
-- completion code only after rating at least this many items (0: always). A participant of a
-- study that was full when they came rated nothing and gets no code.
ALTER TABLE studies ADD COLUMN min_rated_for_code INTEGER NOT NULL DEFAULT 1;
