-- How many of the annotator's assignments in fixed-group batches are not released (done,
-- planned or leased): the total of the progress bar for fixed groups, read on every survey
-- page instead of counted there — that count read the annotator's whole plan (10,000 index
-- entries, and their rows, a page for an annotator of a 20,000-item study of fixed groups).
-- Kept by what changes it, in the same transaction: a claim on an item of a fixed-group batch
-- adds one (the group commit's flush: `store::group_shared`); a plan made, items moved or
-- released count the annotators they touch again (`store::assign::recount_fixed`). A vote
-- changes nothing here (planned or leased becomes done). Instances built before this
-- migration do not keep it: stop them before it is applied.
ALTER TABLE annotators ADD COLUMN fixed_count BIGINT NOT NULL DEFAULT 0;
UPDATE annotators SET fixed_count = (SELECT COUNT(*) FROM assignments a
    JOIN batches b ON b.id = a.batch_id
    WHERE a.annotator_id = annotators.id AND b.strategy = 'fixed_groups'
      AND a.status IN ('done', 'assigned', 'leased'));
