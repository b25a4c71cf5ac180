-- Kept in step with migrations/postgres/0031_exclusions.sql: participants left out of the
-- analysis. `counted` = 0: the participant's votes count toward no item's k and reach no figure
-- or export (a staff member excluded them, with a reason, or their attention items ended their
-- survey). Every exclusion and re-inclusion is also an audit row (who, when, why).
ALTER TABLE annotators ADD COLUMN counted BIGINT NOT NULL DEFAULT 1 CHECK (counted IN (0, 1));
ALTER TABLE annotators ADD COLUMN excluded_at BIGINT;
ALTER TABLE annotators ADD COLUMN excluded_by BIGINT REFERENCES users (id) ON DELETE SET NULL;
ALTER TABLE annotators ADD COLUMN exclusion_reason TEXT NOT NULL DEFAULT '';
-- a vote counts when its participant does: set on insert from the annotator (the trigger), and
-- by the exclusion or re-inclusion for every vote they already gave
ALTER TABLE votes ADD COLUMN counted BIGINT NOT NULL DEFAULT 1 CHECK (counted IN (0, 1));
CREATE TRIGGER votes_counted AFTER INSERT ON votes
WHEN (SELECT counted FROM annotators WHERE id = NEW.annotator_id) = 0
BEGIN
    UPDATE votes SET counted = 0 WHERE id = NEW.id;
END;
