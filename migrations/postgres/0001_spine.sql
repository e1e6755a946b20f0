-- The spine, PostgreSQL edition: the same tables, columns and meaning as
-- migrations/sqlite/0001_spine.sql, so both stores pass one test suite.
--
-- Type choices:
--   * ids are BIGSERIAL (Rust i64), timestamps BIGINT Unix milliseconds, as in SQLite;
--   * flags are BOOLEAN (SQLite: INTEGER 0/1);
--   * lists (rule terms, categories, message ids, rendered parts) are JSONB arrays, the
--     same JSON text SQLite stores in TEXT columns, queryable with jsonb operators
--     (`categories ? 'rust'`);
--   * statuses are TEXT guarded by CHECK constraints.

CREATE TABLE channels (
    id            BIGSERIAL PRIMARY KEY,
    handle        TEXT    NOT NULL UNIQUE,      -- '@username', chat title or feed URL
    title         TEXT,
    kind          TEXT    NOT NULL DEFAULT 'telegram',
    enabled       BOOLEAN NOT NULL DEFAULT TRUE,
    include_terms JSONB   NOT NULL DEFAULT '[]', -- JSON array of rule terms
    exclude_terms JSONB   NOT NULL DEFAULT '[]',
    created_at    BIGINT  NOT NULL
);

CREATE TABLE posts (
    id              BIGSERIAL PRIMARY KEY,
    channel_id      BIGINT  NOT NULL REFERENCES channels(id),
    external_id     TEXT    NOT NULL,
    text            TEXT    NOT NULL,
    author          TEXT,
    url             TEXT,
    posted_at       BIGINT  NOT NULL,
    received_at     BIGINT  NOT NULL,
    status          TEXT    NOT NULL CHECK (status IN
                        ('filtered', 'queued', 'waiting', 'not_job', 'job', 'fanned_out', 'failed')),
    filter_reason   TEXT,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at BIGINT,
    last_error      TEXT,
    updated_at      BIGINT  NOT NULL,
    UNIQUE (channel_id, external_id)
);
CREATE INDEX posts_status ON posts(status, next_attempt_at);

CREATE TABLE classifications (
    post_id        BIGINT  PRIMARY KEY REFERENCES posts(id),
    is_job         BOOLEAN NOT NULL,
    kind           TEXT    NOT NULL,
    categories     JSONB   NOT NULL, -- JSON array of slugs
    confidence     DOUBLE PRECISION NOT NULL,
    model          TEXT    NOT NULL,
    prompt_version TEXT,
    tokens_in      BIGINT  NOT NULL DEFAULT 0,
    tokens_out     BIGINT  NOT NULL DEFAULT 0,
    latency_ms     BIGINT  NOT NULL DEFAULT 0,
    created_at     BIGINT  NOT NULL
);

-- The rendered message parts of a job, written once at fan-out and read by every send.
CREATE TABLE job_renders (
    post_id BIGINT PRIMARY KEY REFERENCES posts(id),
    parts   JSONB  NOT NULL -- JSON array of Telegram-HTML strings
);

CREATE TABLE subscribers (
    id            BIGSERIAL PRIMARY KEY,
    chat_id       BIGINT  NOT NULL UNIQUE,
    name          TEXT,
    categories    JSONB   NOT NULL DEFAULT '[]',
    include_terms JSONB   NOT NULL DEFAULT '[]',
    exclude_terms JSONB   NOT NULL DEFAULT '[]',
    paused        BOOLEAN NOT NULL DEFAULT FALSE,
    blocked       BOOLEAN NOT NULL DEFAULT FALSE,
    quiet_start   TEXT,
    quiet_end     TEXT,
    time_zone     TEXT,
    created_at    BIGINT  NOT NULL,
    updated_at    BIGINT  NOT NULL
);

CREATE TABLE deliveries (
    id             BIGSERIAL PRIMARY KEY,
    post_id        BIGINT  NOT NULL REFERENCES posts(id),
    subscriber_id  BIGINT  NOT NULL REFERENCES subscribers(id),
    chat_id        BIGINT  NOT NULL,
    bot            TEXT    NOT NULL,
    status         TEXT    NOT NULL CHECK (status IN
                       ('pending', 'held', 'sending', 'sent', 'blocked', 'failed')),
    not_before     BIGINT,
    parts_sent     INTEGER NOT NULL DEFAULT 0,
    message_ids    JSONB   NOT NULL DEFAULT '[]',
    attempts       INTEGER NOT NULL DEFAULT 0,
    resent_after_crash INTEGER NOT NULL DEFAULT 0,
    error          TEXT,
    created_at     BIGINT  NOT NULL,
    updated_at     BIGINT  NOT NULL,
    sent_at        BIGINT,
    UNIQUE (post_id, subscriber_id)
);
CREATE INDEX deliveries_status ON deliveries(status, not_before);
-- A 403 blocks every open delivery of the subscriber: find them without a scan.
-- (PostgreSQL does not index foreign keys by itself.)
CREATE INDEX deliveries_subscriber ON deliveries(subscriber_id, status);

-- A single-row counter bumped whenever subscribers change, so the fan-out stage knows
-- when to rebuild its in-memory index.
CREATE TABLE meta (
    key   TEXT   PRIMARY KEY,
    value BIGINT NOT NULL
);
INSERT INTO meta (key, value) VALUES ('subscribers_version', 0);
