-- Sources become data: the database, not the configuration file, is the truth about which
-- channels and feeds are read and with which rules (the file seeds them on first start).
-- The same columns and meaning as migrations/sqlite/0014_sources.sql.
--
-- kind: telegram (read by the user accounts) | feed (polled) | external (only imports,
-- replays and placements name it: nothing reads it). Rows from before this migration were
-- made by the configuration or by intake alike; they become external, and the start-up
-- seed declares the configured ones sources again, with the configuration's settings.
ALTER TABLE channels
    ADD COLUMN feed_url           TEXT,
    ADD COLUMN feed_interval_secs BIGINT,
    ADD COLUMN feed_jitter_secs   BIGINT,
    ADD COLUMN feed_backfill      BOOLEAN NOT NULL DEFAULT FALSE,
    -- A removed source is kept (its posts point at it), but not read or listed.
    ADD COLUMN removed_at         BIGINT,
    ADD COLUMN updated_at         BIGINT  NOT NULL DEFAULT 0,
    -- What the readers report: when an account joined it, the last error reading it.
    ADD COLUMN joined_at          BIGINT,
    ADD COLUMN last_error         TEXT,
    ADD COLUMN last_error_at      BIGINT;
UPDATE channels SET kind = 'external', updated_at = created_at;
ALTER TABLE channels ALTER COLUMN kind SET DEFAULT 'external';
ALTER TABLE channels ADD CONSTRAINT channels_kind CHECK (kind IN ('telegram', 'feed', 'external'));

-- Bumped in the transaction of every change of a source: every parser polls it.
INSERT INTO meta (key, value) VALUES ('sources_version', 0);
