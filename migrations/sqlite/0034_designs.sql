-- Kept in step with migrations/postgres/0034_designs.sql: a study's design as data. A study made
-- from a design file holds it (studies.design, the design as JSON; NULL is the published
-- naturalness study, its items and votes in the tables of 0001), its snippets (one row each,
-- the record as JSON, in the order imported) and its responses (one row each: the participant
-- as an annotator of the study, the question, the response's record as JSON — what was shown,
-- in the order shown, and the answer — and its time on item).
ALTER TABLE studies ADD COLUMN design TEXT;
CREATE TABLE snippets (
    study_id    BIGINT NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    snippet_key TEXT NOT NULL,
    position    BIGINT NOT NULL,
    record      TEXT NOT NULL,
    PRIMARY KEY (study_id, snippet_key)
);
CREATE TABLE responses (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    study_id     BIGINT NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    annotator_id BIGINT NOT NULL REFERENCES annotators (id) ON DELETE CASCADE,
    question     TEXT NOT NULL,
    record       TEXT NOT NULL,
    time_secs    DOUBLE PRECISION,
    submitted_at BIGINT NOT NULL
);
CREATE INDEX responses_by_study ON responses (study_id, id);
