-- A study's data version (the results page's cache key) in parts: `studies.data_version` moves
-- on with the changes made under the study's exclusive lock (imports, settings), and each
-- group-commit writer moves on its own part here (`shard`, one of a few a process takes in
-- turn) for the claims and votes of its groups. A group used to update the study's one row:
-- its lock, held to the commit, made the groups of every instance commit one after another.
-- The version is the sum of the parts; every part only grows, so the sum does too.
CREATE TABLE study_versions (
    study_id BIGINT NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    shard    BIGINT NOT NULL,
    version  BIGINT NOT NULL,
    PRIMARY KEY (study_id, shard)
);
