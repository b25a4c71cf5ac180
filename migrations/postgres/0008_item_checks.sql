-- `natstudy verify`: each item put back into its file and compiled with javac, and optionally a
-- test command run on it and on its original. NULL compiles: not compiled (no compiler, or the
-- original does not compile either); NULL tests_same: not tested. One row per item, replaced by
-- the next run.
CREATE TABLE item_checks (
    item_id    BIGINT PRIMARY KEY REFERENCES items (id) ON DELETE CASCADE,
    compiles   INTEGER,
    tests_same INTEGER,
    message    TEXT NOT NULL DEFAULT '',
    checked_at BIGINT NOT NULL
);
