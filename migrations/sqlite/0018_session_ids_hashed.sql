-- Kept in step with migrations/postgres/0018_session_ids_hashed.sql: sessions are kept under the
-- SHA-256 of their id from now on (a copy of the database yields no live session id). The rows
-- stored under their plain ids can never be found again: they go (everyone signs in once more).
DELETE FROM sessions;
