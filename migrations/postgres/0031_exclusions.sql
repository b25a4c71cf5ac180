-- Kept in step with migrations/sqlite/0031_exclusions.sql: participants left out of the
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
CREATE FUNCTION votes_counted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM annotators WHERE id = NEW.annotator_id AND counted = 0) THEN
        NEW.counted := 0;
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER votes_counted BEFORE INSERT ON votes
    FOR EACH ROW EXECUTE FUNCTION votes_counted();
