-- What an item's lines are with respect to its bug (computed from the diff at import, the same
-- rule the engine reports when it generates): the changed lines, whether a buggy line changed,
-- the buggy lines in the transformed method; and the developer's fix carried over to the
-- transformed method (NULL: the bug's fix is unknown, or it touches the transformed lines).
ALTER TABLE items ADD COLUMN line_map TEXT;
ALTER TABLE items ADD COLUMN touches_buggy INTEGER;
ALTER TABLE items ADD COLUMN buggy_lines TEXT;
ALTER TABLE items ADD COLUMN fixed_source TEXT;
