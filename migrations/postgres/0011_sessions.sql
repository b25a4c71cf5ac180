-- Web sessions in natstudy's own table, written through the group commit with the survey's
-- other writes (a burst of joins shares durable commits). The record is JSON; it lives until
-- `expires_ms` (Unix time, ms). tower-sessions' own table stays for sessions made before this
-- (read when a session is not found here, deleted with it).
CREATE TABLE sessions (
    id TEXT PRIMARY KEY NOT NULL,
    data TEXT NOT NULL,
    expires_ms BIGINT NOT NULL
);
CREATE INDEX sessions_expiry ON sessions (expires_ms);
