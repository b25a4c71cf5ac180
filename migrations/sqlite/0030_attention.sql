-- Kept in step with migrations/postgres/0030_attention.sql: attention items. After this many
-- gold items judged against their expected answer, a participant's survey ends with the
-- screen-out code (NULL: never); after the first, they are told once (attention_warned_at).
ALTER TABLE studies ADD COLUMN gold_failures BIGINT CHECK (gold_failures >= 1);
ALTER TABLE annotators ADD COLUMN attention_warned_at BIGINT;
