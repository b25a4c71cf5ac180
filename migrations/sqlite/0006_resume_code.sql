-- A participant's resume code: continues the same participant on another device.
ALTER TABLE annotators ADD COLUMN resume_code TEXT;
CREATE UNIQUE INDEX annotators_by_resume_code ON annotators (resume_code);

-- An invite an admin closed: its link admits no one new (those who joined continue).
ALTER TABLE invites ADD COLUMN closed_at BIGINT;
