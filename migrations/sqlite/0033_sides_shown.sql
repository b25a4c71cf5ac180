-- Kept in step with migrations/postgres/0033_sides_shown.sql: a vote's side is
-- the side its page showed. Until now a vote stored its assignment's random side
-- (original_left) even where the study did not randomise sides and the page showed the
-- original on the left. From now on the vote stores the side shown (the assignment's only
-- where the study randomises). The sides stored before are repaired where the study's
-- settings prove them (its audit log records every settings change): a vote given while the
-- study had never randomised had the original on the left; a vote given after randomising
-- began, in a study that never stopped randomising, had its assignment's side (stored right).
-- A vote given after randomising began in a study that later stopped is not provable:
-- side_known = 0, and the exports say so.
ALTER TABLE votes ADD COLUMN side_known BIGINT NOT NULL DEFAULT 1 CHECK (side_known IN (0, 1));
ALTER TABLE vote_revisions ADD COLUMN side_known BIGINT NOT NULL DEFAULT 1 CHECK (side_known IN (0, 1));

UPDATE votes SET original_left = 1 WHERE original_left = 0 AND EXISTS (
    SELECT 1 FROM items i WHERE i.id = votes.item_id AND NOT EXISTS (
        SELECT 1 FROM audit_log a WHERE a.study_id = i.study_id AND a.action = 'study.settings'
        AND a.detail LIKE '%randomise sides=true%' AND a.at <= votes.submitted_at));
UPDATE vote_revisions SET original_left = 1 WHERE original_left = 0 AND EXISTS (
    SELECT 1 FROM items i WHERE i.id = vote_revisions.item_id AND NOT EXISTS (
        SELECT 1 FROM audit_log a WHERE a.study_id = i.study_id AND a.action = 'study.settings'
        AND a.detail LIKE '%randomise sides=true%' AND a.at <= vote_revisions.submitted_at));

UPDATE votes SET side_known = 0 WHERE EXISTS (
    SELECT 1 FROM items i WHERE i.id = votes.item_id
    AND EXISTS (SELECT 1 FROM audit_log a WHERE a.study_id = i.study_id AND a.action = 'study.settings'
        AND a.detail LIKE '%randomise sides=true%' AND a.at <= votes.submitted_at)
    AND EXISTS (SELECT 1 FROM audit_log f WHERE f.study_id = i.study_id AND f.action = 'study.settings'
        AND f.detail LIKE '%randomise sides=false%' AND f.at > (
            SELECT MIN(t.at) FROM audit_log t WHERE t.study_id = i.study_id AND t.action = 'study.settings'
            AND t.detail LIKE '%randomise sides=true%')));
UPDATE vote_revisions SET side_known = 0 WHERE EXISTS (
    SELECT 1 FROM items i WHERE i.id = vote_revisions.item_id
    AND EXISTS (SELECT 1 FROM audit_log a WHERE a.study_id = i.study_id AND a.action = 'study.settings'
        AND a.detail LIKE '%randomise sides=true%' AND a.at <= vote_revisions.submitted_at)
    AND EXISTS (SELECT 1 FROM audit_log f WHERE f.study_id = i.study_id AND f.action = 'study.settings'
        AND f.detail LIKE '%randomise sides=false%' AND f.at > (
            SELECT MIN(t.at) FROM audit_log t WHERE t.study_id = i.study_id AND t.action = 'study.settings'
            AND t.detail LIKE '%randomise sides=true%')));
