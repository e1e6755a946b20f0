-- An admin can be disabled (`jobwire admin disable`): it can no longer log in, and its
-- sessions are ended. NULL: active.
ALTER TABLE admins ADD COLUMN disabled_at BIGINT;
