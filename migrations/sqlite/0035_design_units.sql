-- Kept in step with migrations/postgres/0035_design_units.sql: what a designed study's
-- participants answer and who holds what. A unit is one snippet, a pair or a set of the
-- study's snippets (members: their ids as JSON, in the plan's order), planned when snippets
-- are imported (`natstudy_engine::design::units::plan`). A claim is one participant's hold on
-- one unit: the unit's nth response (what is shown is counterbalanced by it), the snippets in
-- the order shown, its lease, and once answered when and with which submit token (and, for an
-- attention unit, whether its expected answer was missed). An attention unit (attention: the
-- expected answer per question, as JSON) is imported (`natstudy import attention`) and handed
-- to every participant, outside k. A response the survey records names its claim.
CREATE TABLE design_units (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    study_id BIGINT NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    position BIGINT NOT NULL,
    members  TEXT NOT NULL,
    attention TEXT,
    UNIQUE (study_id, position)
);
CREATE TABLE unit_claims (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    unit_id      BIGINT NOT NULL REFERENCES design_units (id) ON DELETE CASCADE,
    annotator_id BIGINT NOT NULL REFERENCES annotators (id) ON DELETE CASCADE,
    nth          BIGINT NOT NULL CHECK (nth >= 0),
    shown        TEXT NOT NULL,
    claimed_at   BIGINT NOT NULL,
    held_until   BIGINT NOT NULL,
    answered_at  BIGINT,
    token        TEXT,
    missed       BIGINT NOT NULL DEFAULT 0 CHECK (missed IN (0, 1)),
    UNIQUE (unit_id, annotator_id)
);
CREATE INDEX unit_claims_by_annotator ON unit_claims (annotator_id, answered_at);
ALTER TABLE responses ADD COLUMN claim_id BIGINT REFERENCES unit_claims (id) ON DELETE SET NULL;
