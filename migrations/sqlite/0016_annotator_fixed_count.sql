-- Kept in step with migrations/postgres/0016_annotator_fixed_count.sql: how many of the
-- annotator's assignments in fixed-group batches are not released, kept by the claims and
-- counted again by what plans, moves or releases them.
ALTER TABLE annotators ADD COLUMN fixed_count BIGINT NOT NULL DEFAULT 0;
UPDATE annotators SET fixed_count = (SELECT COUNT(*) FROM assignments a
    JOIN batches b ON b.id = a.batch_id
    WHERE a.annotator_id = annotators.id AND b.strategy = 'fixed_groups'
      AND a.status IN ('done', 'assigned', 'leased'));
