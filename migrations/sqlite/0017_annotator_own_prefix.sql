-- Kept in step with migrations/postgres/0017_annotator_own_prefix.sql: where an annotator's
-- claims in a batch begin to look; every item before it without k ratings is the annotator's.
ALTER TABLE annotators ADD COLUMN own_batch BIGINT;
ALTER TABLE annotators ADD COLUMN own_from BIGINT;
-- Claims read the annotator's batches in a study by the annotator (the primary key begins with
-- the batch).
CREATE INDEX batch_annotators_annotator ON batch_annotators (annotator_id);
