-- Running a public study: sessions that end on a password change, studies that belong to
-- people, background jobs that can be found dead and run again. Same in both dialects.

-- Sessions remember the epoch they signed in under; a password change or disabling moves it on.
ALTER TABLE users ADD COLUMN session_epoch BIGINT NOT NULL DEFAULT 0;

-- Who may see and act on a study (admins may on every study).
CREATE TABLE study_members (
    study_id BIGINT NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    user_id  BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role     TEXT NOT NULL CHECK (role IN ('owner', 'member')),
    added_at BIGINT NOT NULL,
    PRIMARY KEY (study_id, user_id)
);
CREATE INDEX study_members_user ON study_members (user_id);
-- the creator of an existing study owns it
INSERT INTO study_members (study_id, user_id, role, added_at)
    SELECT id, created_by, 'owner', created_at FROM studies WHERE created_by IS NOT NULL;

-- What a job was asked to do (JSON), so a failed job can be run again; its runner's heartbeat
-- is updated_at.
ALTER TABLE jobs ADD COLUMN params TEXT NOT NULL DEFAULT '{}';
