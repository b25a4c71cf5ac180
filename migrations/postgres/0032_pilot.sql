-- Kept in step with migrations/sqlite/0032_pilot.sql: a study's pilot. While a study is in
-- its pilot phase (studies.pilot), the invite links made are pilot links (invites.pilot; a
-- staff member's "try the survey" link is one too), and whoever joins through one is a pilot
-- participant (annotators.pilot): counted = 0 from the start, so their votes count toward no
-- item's k and reach no monitor count, figure or export but the explicit pilot export; they
-- are never listed as excluded, and clearing the pilot deletes them with their votes.
ALTER TABLE studies ADD COLUMN pilot BIGINT NOT NULL DEFAULT 0 CHECK (pilot IN (0, 1));
ALTER TABLE invites ADD COLUMN pilot BIGINT NOT NULL DEFAULT 0 CHECK (pilot IN (0, 1));
ALTER TABLE annotators ADD COLUMN pilot BIGINT NOT NULL DEFAULT 0 CHECK (pilot IN (0, 1));
