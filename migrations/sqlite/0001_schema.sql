-- natstudy schema (SQLite). Keep in step with migrations/postgres/0001_schema.sql:
-- same tables, columns, constraints; only the dialect differs.
-- Times are unix milliseconds (BIGINT); flags are 0/1 integers; JSON lives in TEXT.

CREATE TABLE users (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    username      TEXT NOT NULL UNIQUE,
    password_hash TEXT,
    role          TEXT NOT NULL CHECK (role IN ('admin', 'researcher', 'annotator')),
    disabled      INTEGER NOT NULL DEFAULT 0,
    created_at    BIGINT NOT NULL
);

CREATE TABLE studies (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    name             TEXT NOT NULL UNIQUE,
    description      TEXT NOT NULL DEFAULT '',
    guideline        TEXT NOT NULL DEFAULT '',
    consent_text     TEXT NOT NULL DEFAULT '',
    screener         TEXT NOT NULL DEFAULT '[]',
    ratings_per_item BIGINT NOT NULL DEFAULT 5 CHECK (ratings_per_item >= 1),
    blind_operator   INTEGER NOT NULL DEFAULT 0,
    blind_bug_id     INTEGER NOT NULL DEFAULT 0,
    randomise_sides  INTEGER NOT NULL DEFAULT 0,
    completion_code  TEXT,
    created_by       BIGINT REFERENCES users (id) ON DELETE SET NULL,
    created_at       BIGINT NOT NULL
);

CREATE TABLE projects (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    study_id BIGINT NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    name     TEXT NOT NULL,
    UNIQUE (study_id, name)
);

CREATE TABLE bugs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    study_id    BIGINT NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    project_id  BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    bug_key     TEXT NOT NULL,
    file_path   TEXT NOT NULL,
    method      TEXT NOT NULL,
    source      TEXT NOT NULL,
    file_source TEXT,
    buggy_lines TEXT NOT NULL DEFAULT '[]',
    UNIQUE (study_id, bug_key)
);

-- A transformation of a bug's method: the item annotators rate.
CREATE TABLE items (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    study_id   BIGINT NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    bug_id     BIGINT NOT NULL REFERENCES bugs (id) ON DELETE CASCADE,
    item_key   TEXT NOT NULL,
    operator   TEXT NOT NULL,
    level      TEXT NOT NULL CHECK (level IN ('naming', 'expression', 'statement')),
    source     TEXT NOT NULL,
    summary    TEXT NOT NULL DEFAULT '',
    gold_unnatural INTEGER,
    UNIQUE (study_id, item_key)
);
CREATE INDEX items_bug ON items (bug_id);

CREATE TABLE annotators (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    study_id     BIGINT NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    code         TEXT NOT NULL,
    user_id      BIGINT REFERENCES users (id) ON DELETE SET NULL,
    external_pid TEXT,
    screener     TEXT NOT NULL DEFAULT '{}',
    consented_at BIGINT,
    guideline_seen_at BIGINT,
    finished_at  BIGINT,
    last_active  BIGINT,
    order_seed   BIGINT NOT NULL DEFAULT 0,
    created_at   BIGINT NOT NULL,
    UNIQUE (study_id, code),
    UNIQUE (study_id, user_id)
);


CREATE TABLE batches (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    study_id   BIGINT NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    strategy   TEXT NOT NULL CHECK (strategy IN ('fixed_groups', 'dynamic_queue')),
    seed       BIGINT NOT NULL DEFAULT 0,
    lease_secs BIGINT NOT NULL DEFAULT 1200,
    avoid_same_bug INTEGER NOT NULL DEFAULT 1,
    created_at BIGINT NOT NULL,
    UNIQUE (study_id, name)
);

CREATE TABLE batch_items (
    batch_id BIGINT NOT NULL REFERENCES batches (id) ON DELETE CASCADE,
    item_id  BIGINT NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    PRIMARY KEY (batch_id, item_id)
);

-- Who works on a batch (fixed groups: group_no is the annotator's group).
CREATE TABLE batch_annotators (
    batch_id     BIGINT NOT NULL REFERENCES batches (id) ON DELETE CASCADE,
    annotator_id BIGINT NOT NULL REFERENCES annotators (id) ON DELETE CASCADE,
    group_no     BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (batch_id, annotator_id)
);

-- Invite links: each one creates de-identified participants (up to cap) in a batch.
CREATE TABLE invites (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    study_id   BIGINT NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    batch_id   BIGINT REFERENCES batches (id) ON DELETE CASCADE,
    token      TEXT NOT NULL UNIQUE,
    cap        BIGINT NOT NULL DEFAULT 1,
    used       BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL
);

-- One annotator's claim on one item: assigned (fixed groups) or leased (dynamic queue).
CREATE TABLE assignments (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    batch_id         BIGINT NOT NULL REFERENCES batches (id) ON DELETE CASCADE,
    item_id          BIGINT NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    annotator_id     BIGINT NOT NULL REFERENCES annotators (id) ON DELETE CASCADE,
    position         BIGINT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('assigned', 'leased', 'done', 'released')),
    lease_expires_at BIGINT,
    original_left    INTEGER NOT NULL DEFAULT 1,
    created_at       BIGINT NOT NULL,
    UNIQUE (item_id, annotator_id)
);
CREATE INDEX assignments_annotator ON assignments (annotator_id, status, position);
CREATE INDEX assignments_item ON assignments (item_id, status);

-- The vote that counts (the latest revision); every revision is kept in vote_revisions.
CREATE TABLE votes (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    item_id        BIGINT NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    annotator_id   BIGINT NOT NULL REFERENCES annotators (id) ON DELETE CASCADE,
    cr             BIGINT NOT NULL CHECK (cr BETWEEN 1 AND 4),
    cc             BIGINT NOT NULL CHECK (cc BETWEEN 1 AND 4),
    time_secs      DOUBLE PRECISION,
    started_at     BIGINT,
    submitted_at   BIGINT NOT NULL,
    original_left  INTEGER NOT NULL DEFAULT 1,
    context_opened INTEGER NOT NULL DEFAULT 0,
    comment        TEXT NOT NULL DEFAULT '',
    revision       BIGINT NOT NULL DEFAULT 1,
    UNIQUE (item_id, annotator_id)
);

CREATE TABLE vote_revisions (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    item_id        BIGINT NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    annotator_id   BIGINT NOT NULL REFERENCES annotators (id) ON DELETE CASCADE,
    revision       BIGINT NOT NULL,
    submit_token   TEXT NOT NULL,
    cr             BIGINT NOT NULL CHECK (cr BETWEEN 1 AND 4),
    cc             BIGINT NOT NULL CHECK (cc BETWEEN 1 AND 4),
    time_secs      DOUBLE PRECISION,
    started_at     BIGINT,
    submitted_at   BIGINT NOT NULL,
    original_left  INTEGER NOT NULL DEFAULT 1,
    context_opened INTEGER NOT NULL DEFAULT 0,
    comment        TEXT NOT NULL DEFAULT '',
    UNIQUE (item_id, annotator_id, revision),
    UNIQUE (annotator_id, submit_token)
);

CREATE TABLE npr_results (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    study_id        BIGINT NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    tool            TEXT NOT NULL,
    target          TEXT NOT NULL,
    status          BIGINT NOT NULL CHECK (status IN (0, 1, 2)),
    patch           TEXT,
    developer_patch TEXT,
    UNIQUE (study_id, tool, target)
);

CREATE TABLE ce_scores (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    study_id      BIGINT NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    model         TEXT NOT NULL,
    target        TEXT NOT NULL,
    cross_entropy DOUBLE PRECISION NOT NULL,
    UNIQUE (study_id, model, target)
);

-- Files already imported into a study (kind + content hash): re-importing is a no-op.
CREATE TABLE imports (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    study_id    BIGINT NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    kind        TEXT NOT NULL,
    digest      TEXT NOT NULL,
    rows        BIGINT NOT NULL,
    imported_at BIGINT NOT NULL,
    UNIQUE (study_id, kind, digest)
);

CREATE TABLE audit_log (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    at       BIGINT NOT NULL,
    user_id  BIGINT REFERENCES users (id) ON DELETE SET NULL,
    study_id BIGINT REFERENCES studies (id) ON DELETE CASCADE,
    action   TEXT NOT NULL,
    detail   TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_study ON audit_log (study_id, at);

-- Instance-wide settings shared by every natstudy process on this database (e.g. the cookie key).
CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
