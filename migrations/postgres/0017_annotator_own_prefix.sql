-- Where an annotator's claims in a batch begin to look (a rank of the batch's queue, and the
-- batch): every item before it without k ratings is one the annotator holds (planned, leased
-- or rated). Without it, an annotator ahead of the others — alone in a study, fewer annotators
-- than k, a pool annotator who works on a day the others do not — stepped over every item they
-- had rated at each claim, since those still had room for others: 25 ms a vote at 5,500 votes
-- (`natstudy bench assign --annotators 2`). NULL: from the beginning. Moved on by the claims,
-- written with the annotator's time in the group commit's flush (`store::group_shared`); set
-- back to NULL by whatever may give an item before it room for the annotator again: a release
-- of their claims, a change of k, a vote import or a new batch (`store::assign::forget_own`).
-- Instances built before this migration neither move it nor set it back: stop them before it
-- is applied.
ALTER TABLE annotators ADD COLUMN own_batch BIGINT;
ALTER TABLE annotators ADD COLUMN own_from BIGINT;
-- Claims read the annotator's batches in a study by the annotator (the primary key begins with
-- the batch).
CREATE INDEX batch_annotators_annotator ON batch_annotators (annotator_id);
