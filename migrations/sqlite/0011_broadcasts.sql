-- Broadcasts: an admin's message to all subscribers (or those of a category, plan or
-- language). Each recipient has a row claimed before its send, so a restart sends nobody
-- the message twice: a send whose outcome is unknown (its sender died mid-call) is marked
-- 'unknown' and not repeated.
CREATE TABLE broadcasts (
    id          INTEGER PRIMARY KEY,
    text        TEXT    NOT NULL, -- Telegram HTML, checked with Telegram's parser
    audience    TEXT    NOT NULL, -- JSON: {"category":…, "plan":…, "language":…}
    status      TEXT    NOT NULL, -- running | paused | canceled | done
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    finished_at INTEGER
);

CREATE TABLE broadcast_recipients (
    broadcast_id INTEGER NOT NULL REFERENCES broadcasts(id),
    chat_id      INTEGER NOT NULL,
    bot          TEXT    NOT NULL,
    status       TEXT    NOT NULL, -- pending | sending | sent | failed | blocked | unknown
    message_id   INTEGER,
    error        TEXT,
    updated_at   INTEGER NOT NULL,
    PRIMARY KEY (broadcast_id, chat_id)
);
CREATE INDEX broadcast_recipients_status ON broadcast_recipients(broadcast_id, status, chat_id);
