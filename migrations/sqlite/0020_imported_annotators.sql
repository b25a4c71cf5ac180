-- Kept in step with migrations/postgres/0020_imported_annotators.sql: annotators made by a votes
-- import live in a namespace of their own (code `S3@import`, flag `imported`), never merged with
-- an online participant of the same code; what an import does not know about their votes
-- (when, which side, the context) is exported empty and marked imported.
ALTER TABLE annotators ADD COLUMN imported INTEGER NOT NULL DEFAULT 0;
