-- Kept in step with migrations/sqlite/0023_lease_hold.sql: how long a claim's lease may be
-- renewed after the claim, in ms, set from the study's time on item (twice its 99th
-- percentile, at least the batch's lease, at most two hours) once the study has enough
-- measured votes; NULL until then (three leases, within half an hour and two hours).
ALTER TABLE batches ADD COLUMN hold_ms BIGINT;
