-- The dynamic queue's index: each batch item's place in its batch's order (`queue_rank`, from the
-- batch's seed) and whether it already has the study's k ratings (`rated_full`, kept current
-- by every write of votes and every change of k). The next item is the first row of
-- (batch_id, rated_full = 0, queue_rank) that the annotator may take: an index range, not a scan of
-- the batch with a count per item.
ALTER TABLE batch_items ADD COLUMN queue_rank BIGINT NOT NULL DEFAULT 0;
ALTER TABLE batch_items ADD COLUMN rated_full INTEGER NOT NULL DEFAULT 0;
UPDATE batch_items SET queue_rank = (item_id * 2654435761 + (SELECT b.seed FROM batches b WHERE b.id = batch_items.batch_id) % 2147483647) % 4294967311;
UPDATE batch_items SET rated_full = CASE WHEN
    (SELECT COUNT(*) FROM votes v WHERE v.item_id = batch_items.item_id)
    >= (SELECT s.ratings_per_item FROM batches b JOIN studies s ON s.id = b.study_id WHERE b.id = batch_items.batch_id)
    THEN 1 ELSE 0 END;
CREATE INDEX batch_items_queue ON batch_items (batch_id, rated_full, queue_rank);
CREATE INDEX batch_items_item ON batch_items (item_id);
