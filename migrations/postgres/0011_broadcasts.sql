-- Broadcasts: an admin's message to all subscribers (or those of a category, plan or
-- language). Each recipient has a row claimed before its send, so a restart sends nobody
-- the message twice: a send whose outcome is unknown (its sender died mid-call) is marked
-- 'unknown' and not repeated.
CREATE TABLE broadcasts (
    id          BIGSERIAL PRIMARY KEY,
    text        TEXT    NOT NULL, -- Telegram HTML, checked with Telegram's parser
    audience    JSONB   NOT NULL, -- JSON: {"category":…, "plan":…, "language":…}
    status      TEXT    NOT NULL, -- running | paused | canceled | done
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    finished_at BIGINT
);

CREATE TABLE broadcast_recipients (
    broadcast_id BIGINT NOT NULL REFERENCES broadcasts(id),
    chat_id      BIGINT NOT NULL,
    bot          TEXT    NOT NULL,
    status       TEXT    NOT NULL, -- pending | sending | sent | failed | blocked | unknown
    message_id   BIGINT,
    error        TEXT,
    updated_at   BIGINT NOT NULL,
    PRIMARY KEY (broadcast_id, chat_id)
);
CREATE INDEX broadcast_recipients_status ON broadcast_recipients(broadcast_id, status, chat_id);
