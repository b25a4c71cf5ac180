-- Kept in step with migrations/postgres/0012_annotator_order.sql, which adds `id` to the index of
-- an annotator's assignments (annotator_id, status, position) so that "the annotator's last
-- rated item" is one index entry. SQLite's index already ends in the rowid (`id`): nothing to do.
SELECT 1;
