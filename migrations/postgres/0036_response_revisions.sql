-- Kept in step with migrations/sqlite/0036_response_revisions.sql: a designed study's
-- participant may revise their answers to a unit before they finish. The answers a revision
-- replaces are kept, marked with when they were replaced; the answers that count are those
-- with no replaced_at (what the export, the figures and the counts read).
ALTER TABLE responses ADD COLUMN replaced_at BIGINT;
CREATE INDEX responses_by_claim ON responses (claim_id, replaced_at);
