-- The web panel: admins' sessions and the audit log of every change made through it.

-- A session: the cookie holds a random token; only its SHA-256 is stored, so a copy of
-- the database cannot be used to log in. csrf is the token every state change must carry.
CREATE TABLE admin_sessions (
    token_hash   TEXT    PRIMARY KEY,
    admin_id     BIGINT  NOT NULL REFERENCES admins(id) ON DELETE CASCADE,
    csrf         TEXT    NOT NULL,
    client       TEXT    NOT NULL DEFAULT '',
    created_at   BIGINT  NOT NULL,
    last_seen_at BIGINT  NOT NULL,
    expires_at   BIGINT  NOT NULL
);
CREATE INDEX admin_sessions_admin ON admin_sessions(admin_id);

-- Who changed what, when: one row per change (panel or API).
CREATE TABLE audit_log (
    id      BIGSERIAL PRIMARY KEY,
    at      BIGINT NOT NULL,
    actor   TEXT   NOT NULL, -- admin username, or 'api-token'
    action  TEXT   NOT NULL, -- e.g. source.add, report.accept, prompt.activate
    target  TEXT   NOT NULL DEFAULT '',
    detail  TEXT   NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_at ON audit_log(at);
