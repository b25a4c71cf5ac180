-- Kept in step with migrations/postgres/0015_annotator_done_count.sql: how many of the
-- annotator's assignments are done, kept by the vote that marks one done.
ALTER TABLE annotators ADD COLUMN done_count BIGINT NOT NULL DEFAULT 0;
UPDATE annotators SET done_count = (SELECT COUNT(*) FROM assignments a
    WHERE a.annotator_id = annotators.id AND a.status = 'done');
