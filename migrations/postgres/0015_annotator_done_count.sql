-- How many of the annotator's assignments are done (the items they rated in the survey): the
-- progress bar reads it on every survey page instead of counting the annotator's done
-- assignments, a count that grew with their history (10,000 index entries a page for an
-- annotator of a 20,000-item pool study). The vote that marks an assignment done adds to it,
-- in the same transaction (the group commit's flush: `store::group_shared`); nothing else
-- makes an assignment done or undoes it. Instances built before this migration do not keep
-- it: stop them before it is applied.
ALTER TABLE annotators ADD COLUMN done_count BIGINT NOT NULL DEFAULT 0;
UPDATE annotators SET done_count = (SELECT COUNT(*) FROM assignments a
    WHERE a.annotator_id = annotators.id AND a.status = 'done');
