-- Patch review: the developer-fixed method of a bug, one task per plausible patch, and the
-- reviewers' verdicts.
ALTER TABLE bugs ADD COLUMN fixed_source TEXT;

-- A review-only invite makes its participants reviewers of the study's patches (no survey).
ALTER TABLE invites ADD COLUMN purpose TEXT NOT NULL DEFAULT 'survey' CHECK (purpose IN ('survey', 'review'));
ALTER TABLE annotators ADD COLUMN reviewer INTEGER NOT NULL DEFAULT 0;

-- A tool's plausible patch on a target (a bug id or a transformation id), to be decided
-- correct or not: by an automatic check, by k reviewers, or by an admin on a disagreement.
CREATE TABLE review_tasks (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    study_id       BIGINT NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    tool           TEXT NOT NULL,
    target         TEXT NOT NULL,
    -- the target's buggy method, the tool's patched method and, when known, the fixed one
    buggy          TEXT NOT NULL,
    patched        TEXT NOT NULL,
    fixed          TEXT,
    k              BIGINT NOT NULL CHECK (k BETWEEN 1 AND 10),
    -- another tool's token-identical patch of the same target: its reviewers decide this one
    same_as        BIGINT REFERENCES review_tasks (id) ON DELETE SET NULL,
    auto_reason    TEXT CHECK (auto_reason IN ('noop', 'sye', 'tce')),
    -- what the automatic checks found (e.g. why TCE could not run)
    auto_note      TEXT NOT NULL DEFAULT '',
    -- an admin sent the automatic decision back to people
    sent_back      INTEGER NOT NULL DEFAULT 0,
    adjudicated    INTEGER CHECK (adjudicated IN (0, 1)),
    adjudicated_by BIGINT REFERENCES users (id) ON DELETE SET NULL,
    adjudicated_at BIGINT,
    created_at     BIGINT NOT NULL,
    UNIQUE (study_id, tool, target)
);
CREATE INDEX review_tasks_by_study ON review_tasks (study_id, id);

CREATE TABLE review_verdicts (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id    BIGINT NOT NULL REFERENCES review_tasks (id) ON DELETE CASCADE,
    reviewer   TEXT NOT NULL,
    verdict    TEXT NOT NULL CHECK (verdict IN ('correct', 'wrong', 'unsure')),
    note       TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    UNIQUE (task_id, reviewer)
);

-- A reviewer's hold on a task while its page is open: with the verdicts, no task gets more
-- than k reviewers at once; an expired hold frees the place.
CREATE TABLE review_claims (
    task_id    BIGINT NOT NULL REFERENCES review_tasks (id) ON DELETE CASCADE,
    reviewer   TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (task_id, reviewer)
);
