-- Kept in step with migrations/postgres/0014_votes_by_annotator.sql: an annotator's votes in
-- their order. SQLite's index ends in the rowid (`id`) already.
CREATE INDEX votes_annotator ON votes (annotator_id);
