-- Kept in step with migrations/postgres/0027_crowd_work.sql: a paid crowd study's settings and
-- each participant's way out.
-- items_per_participant: the work one participant is paid for (NULL: all they can be given);
-- the completion code comes after that many ratings, or when no item can ever come to them.
ALTER TABLE studies ADD COLUMN items_per_participant BIGINT CHECK (items_per_participant >= 1);
-- minutes a participant waits for items held by others before a partial code is offered
-- (NULL: never), and that code
ALTER TABLE studies ADD COLUMN partial_after_minutes BIGINT CHECK (partial_after_minutes >= 0);
ALTER TABLE studies ADD COLUMN partial_code TEXT;
-- where a finished participant is sent, with {code} filled in (Prolific's completion URL)
ALTER TABLE studies ADD COLUMN completion_url TEXT;
-- the code and URL of a participant the screener turns away
ALTER TABLE studies ADD COLUMN screenout_code TEXT;
ALTER TABLE studies ADD COLUMN screenout_url TEXT;
-- since when the participant has had nothing to rate while items held by others may come
ALTER TABLE annotators ADD COLUMN waiting_since BIGINT;
-- how the participant's work ended (set when it ends; NULL while it goes on)
ALTER TABLE annotators ADD COLUMN outcome TEXT
    CHECK (outcome IN ('completed', 'partial', 'returned', 'screened_out'));
-- those who finished before: as the code was given then (at least min_rated_for_code rated)
UPDATE annotators SET outcome = CASE WHEN done_count >= (SELECT s.min_rated_for_code FROM studies s
    WHERE s.id = annotators.study_id) THEN 'completed' ELSE 'returned' END
    WHERE finished_at IS NOT NULL;
