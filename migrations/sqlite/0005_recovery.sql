-- Messages that failed for good (a consumer gave up after its retries), with their reason,
-- for `jobwire report` and the admin panel. The payload is the queue message as sent (JSON).
CREATE TABLE dead_letters (
    id         INTEGER PRIMARY KEY,
    topic      TEXT    NOT NULL,
    payload    TEXT    NOT NULL,
    attempts   INTEGER NOT NULL,
    reason     TEXT    NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX dead_letters_created ON dead_letters(created_at);

-- The scheduler looks for rows stuck in a status past a deadline (a publish that failed
-- after its commit) by status and age.
CREATE INDEX posts_status_updated ON posts(status, updated_at);
CREATE INDEX deliveries_status_updated ON deliveries(status, updated_at);

-- Who cannot be reached through which bot: a user who blocked one category bot (or never
-- pressed Start in it) still gets the other bots' vacancies. `subscribers.blocked` stays for
-- a user who cannot be reached at all (a deleted account).
CREATE TABLE bot_blocks (
    subscriber_id INTEGER NOT NULL REFERENCES subscribers(id),
    bot           TEXT    NOT NULL,
    state         TEXT    NOT NULL,   -- blocked | not_started
    error         TEXT,
    updated_at    INTEGER NOT NULL,
    notified_at   INTEGER,          -- when the main bot told the user to start this bot
    PRIMARY KEY (subscriber_id, bot)
);
