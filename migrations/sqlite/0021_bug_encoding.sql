-- Kept in step with migrations/postgres/0021_bug_encoding.sql: a bug imported from a checkout whose
-- file is not UTF-8 (ISO-8859-1 in older Defects4J projects) keeps the file's encoding, so that
-- verification's test command and the benchmark export write the file back in it. NULL: UTF-8.
ALTER TABLE bugs ADD COLUMN encoding TEXT;
