-- no-transaction
-- An annotator's votes in their order: the participant's list of rated items (asked when the
-- queue runs dry, and on every visit after) and the cascade of an annotator's deletion read
-- them through this index instead of scanning every vote of every study. Built CONCURRENTLY
-- (hence no transaction, and a single statement), so a running instance's votes are not
-- held up while it builds.
CREATE INDEX CONCURRENTLY IF NOT EXISTS votes_annotator ON votes (annotator_id, id)
