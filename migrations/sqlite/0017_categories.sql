-- Categories become data: their display name, their description (sent to the LLM in the
-- prompt and shown by the bots), the bot that delivers them and whether the daily digest
-- includes them are edited in the admin panel. The configuration names the set of
-- categories (the classifier's labels) and seeds these rows on start-up; a row the database
-- holds already is left as it is.
CREATE TABLE categories (
    slug        TEXT    PRIMARY KEY,
    name        TEXT    NOT NULL,
    description TEXT    NOT NULL DEFAULT '',
    bot         TEXT    NOT NULL,             -- a [[bots]] name
    digest      INTEGER NOT NULL DEFAULT 1,   -- in the daily public digest
    updated_by  TEXT,                         -- admin username; NULL: seeded
    updated_at  INTEGER NOT NULL
);

-- Bumped in the transaction of every change of a category: every process polls it.
INSERT INTO meta (key, value) VALUES ('categories_version', 0);
