-- Kept in step with migrations/sqlite/0028_crowd_identity.sql: a participant's identity on the
-- crowd platform that sent them. external_pid (0001) is the platform's participant id
-- (Prolific's PROLIFIC_PID, MTurk's workerId, SONA's id, or a generic pid); these say which
-- platform it is and the platform's study and session (Prolific's STUDY_ID and SESSION_ID,
-- MTurk's hitId and assignmentId).
ALTER TABLE annotators ADD COLUMN platform TEXT
    CHECK (platform IN ('prolific', 'mturk', 'sona', 'generic'));
ALTER TABLE annotators ADD COLUMN external_study TEXT;
ALTER TABLE annotators ADD COLUMN external_session TEXT;
-- one platform id is one participant of a study: the same id joining again continues them
CREATE UNIQUE INDEX annotators_platform_id ON annotators (study_id, platform, external_pid)
    WHERE platform IS NOT NULL AND external_pid IS NOT NULL;
