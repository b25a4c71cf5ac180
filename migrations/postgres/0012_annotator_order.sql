-- An annotator's assignments in their order, `id` included: "the annotator's last rated item"
-- (ORDER BY position DESC, id DESC LIMIT 1, asked by every claim) is then the first entry of a
-- backward index range, not a sort of every item the annotator rated. SQLite's index already
-- ends in the rowid (`id`), so there it is one entry already.
CREATE INDEX assignments_annotator_order ON assignments (annotator_id, status, position, id);
DROP INDEX assignments_annotator;
