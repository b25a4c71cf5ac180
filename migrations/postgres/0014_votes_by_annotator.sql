-- An annotator's votes in their order: the participant's list of rated items (asked when the
-- queue runs dry, and on every visit after) and the cascade of an annotator's deletion read
-- them through this index instead of scanning every vote of every study.
-- Built in the migration's transaction, not CONCURRENTLY: instances that start together
-- queue on the migrations' advisory lock, and the statement waiting for it holds a snapshot
-- that a concurrent build waits for — a deadlock, whose victim may be the build, leaving an
-- invalid index behind. A plain build holds the survey's writes to `votes` while it runs
-- (about a third of a second for a million votes here); they wait, none is lost.
CREATE INDEX votes_annotator ON votes (annotator_id, id);
