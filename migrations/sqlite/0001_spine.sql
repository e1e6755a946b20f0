-- The spine: channels, posts, classifications, subscribers, deliveries.
-- Timestamps are Unix milliseconds (INTEGER), the same in every backend.

CREATE TABLE channels (
    id            INTEGER PRIMARY KEY,
    handle        TEXT    NOT NULL UNIQUE,      -- '@username', chat title or feed URL
    title         TEXT,
    kind          TEXT    NOT NULL DEFAULT 'telegram',
    enabled       INTEGER NOT NULL DEFAULT 1,
    include_terms TEXT    NOT NULL DEFAULT '[]', -- JSON array of rule terms
    exclude_terms TEXT    NOT NULL DEFAULT '[]',
    created_at    INTEGER NOT NULL
);

-- status: filtered | queued | waiting | not_job | job | fanned_out | failed
CREATE TABLE posts (
    id              INTEGER PRIMARY KEY,
    channel_id      INTEGER NOT NULL REFERENCES channels(id),
    external_id     TEXT    NOT NULL,
    text            TEXT    NOT NULL,
    author          TEXT,
    url             TEXT,
    posted_at       INTEGER NOT NULL,
    received_at     INTEGER NOT NULL,
    status          TEXT    NOT NULL,
    filter_reason   TEXT,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER,
    last_error      TEXT,
    updated_at      INTEGER NOT NULL,
    UNIQUE (channel_id, external_id)
);
CREATE INDEX posts_status ON posts(status, next_attempt_at);

CREATE TABLE classifications (
    post_id        INTEGER PRIMARY KEY REFERENCES posts(id),
    is_job         INTEGER NOT NULL,
    kind           TEXT    NOT NULL,
    categories     TEXT    NOT NULL, -- JSON array of slugs
    confidence     REAL    NOT NULL,
    model          TEXT    NOT NULL,
    prompt_version TEXT,
    tokens_in      INTEGER NOT NULL DEFAULT 0,
    tokens_out     INTEGER NOT NULL DEFAULT 0,
    latency_ms     INTEGER NOT NULL DEFAULT 0,
    created_at     INTEGER NOT NULL
);

-- The rendered message parts of a job, written once at fan-out and read by every send.
CREATE TABLE job_renders (
    post_id INTEGER PRIMARY KEY REFERENCES posts(id),
    parts   TEXT NOT NULL -- JSON array of Telegram-HTML strings
);

CREATE TABLE subscribers (
    id            INTEGER PRIMARY KEY,
    chat_id       INTEGER NOT NULL UNIQUE,
    name          TEXT,
    categories    TEXT    NOT NULL DEFAULT '[]',
    include_terms TEXT    NOT NULL DEFAULT '[]',
    exclude_terms TEXT    NOT NULL DEFAULT '[]',
    paused        INTEGER NOT NULL DEFAULT 0,
    blocked       INTEGER NOT NULL DEFAULT 0,
    quiet_start   TEXT,
    quiet_end     TEXT,
    time_zone     TEXT,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);

-- status: pending | held | sending | sent | blocked | failed
CREATE TABLE deliveries (
    id             INTEGER PRIMARY KEY,
    post_id        INTEGER NOT NULL REFERENCES posts(id),
    subscriber_id  INTEGER NOT NULL REFERENCES subscribers(id),
    chat_id        INTEGER NOT NULL,
    bot            TEXT    NOT NULL,
    status         TEXT    NOT NULL,
    not_before     INTEGER,
    parts_sent     INTEGER NOT NULL DEFAULT 0,
    message_ids    TEXT    NOT NULL DEFAULT '[]',
    attempts       INTEGER NOT NULL DEFAULT 0,
    resent_after_crash INTEGER NOT NULL DEFAULT 0,
    error          TEXT,
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL,
    sent_at        INTEGER,
    UNIQUE (post_id, subscriber_id)
);
CREATE INDEX deliveries_status ON deliveries(status, not_before);

-- A single-row counter bumped whenever subscribers change, so the fan-out stage knows
-- when to rebuild its in-memory index.
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
INSERT INTO meta (key, value) VALUES ('subscribers_version', 0);
