-- Categories become data; the same columns and meaning as
-- migrations/sqlite/0017_categories.sql.
CREATE TABLE categories (
    slug        TEXT    PRIMARY KEY,
    name        TEXT    NOT NULL,
    description TEXT    NOT NULL DEFAULT '',
    bot         TEXT    NOT NULL,             -- a [[bots]] name
    digest      BOOLEAN NOT NULL DEFAULT TRUE, -- in the daily public digest
    updated_by  TEXT,                         -- admin username; NULL: seeded
    updated_at  BIGINT  NOT NULL
);

-- Bumped in the transaction of every change of a category: every process polls it.
INSERT INTO meta (key, value) VALUES ('categories_version', 0);
