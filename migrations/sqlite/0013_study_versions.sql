-- Kept in step with migrations/postgres/0013_study_versions.sql: a study's data version in
-- parts, one per group-commit writer's shard, summed with `studies.data_version`.
CREATE TABLE study_versions (
    study_id INTEGER NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    shard    INTEGER NOT NULL,
    version  INTEGER NOT NULL,
    PRIMARY KEY (study_id, shard)
);
