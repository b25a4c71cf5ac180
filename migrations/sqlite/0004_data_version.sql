-- Moves on with every change of what a study's report reads (votes, items, gold flags, repair
-- results, cross-entropies, settings): the results page's cache is keyed by it.
ALTER TABLE studies ADD COLUMN data_version BIGINT NOT NULL DEFAULT 0;
