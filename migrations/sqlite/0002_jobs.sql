-- Background jobs of a study (scoring with a language model): progress others can watch.
CREATE TABLE jobs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    study_id    BIGINT NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    kind        TEXT NOT NULL,
    label       TEXT NOT NULL,
    state       TEXT NOT NULL,
    done        BIGINT NOT NULL DEFAULT 0,
    total       BIGINT NOT NULL DEFAULT 0,
    message     TEXT NOT NULL DEFAULT '',
    started_by  BIGINT REFERENCES users (id) ON DELETE SET NULL,
    started_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);
CREATE INDEX jobs_by_study ON jobs (study_id, id);
