-- Kept in step with migrations/postgres/0022_models.sql: which study uploaded each model file of the
-- shared models folder, and its size — a study's uploads count against its model quota, and
-- its staff may delete what it uploaded (admins any model). A model placed in the folder by
-- hand has no row.
CREATE TABLE models (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT NOT NULL UNIQUE,
    study_id    BIGINT REFERENCES studies (id) ON DELETE SET NULL,
    bytes       BIGINT NOT NULL,
    uploaded_by BIGINT REFERENCES users (id) ON DELETE SET NULL,
    uploaded_at BIGINT NOT NULL
);
CREATE INDEX models_by_study ON models (study_id);
