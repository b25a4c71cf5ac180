-- Each batch's number of items, written once when the batch is made (its items never change):
-- a participant's progress bar reads it instead of counting the batch's items on every page.
ALTER TABLE batches ADD COLUMN item_count BIGINT NOT NULL DEFAULT 0;
UPDATE batches SET item_count = (SELECT COUNT(*) FROM batch_items bi WHERE bi.batch_id = batches.id);
