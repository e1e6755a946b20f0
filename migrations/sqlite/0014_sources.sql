-- Sources become data: the database, not the configuration file, is the truth about which
-- channels and feeds are read and with which rules (the file seeds them on first start).
--
-- kind: telegram (read by the user accounts) | feed (polled) | external (only imports,
-- replays and placements name it: nothing reads it). Rows from before this migration were
-- made by the configuration or by intake alike; they become external, and the start-up
-- seed declares the configured ones sources again, with the configuration's settings.
ALTER TABLE channels ADD COLUMN feed_url TEXT;
ALTER TABLE channels ADD COLUMN feed_interval_secs INTEGER;
ALTER TABLE channels ADD COLUMN feed_jitter_secs INTEGER;
ALTER TABLE channels ADD COLUMN feed_backfill INTEGER NOT NULL DEFAULT 0;
-- A removed source is kept (its posts point at it), but not read or listed.
ALTER TABLE channels ADD COLUMN removed_at INTEGER;
ALTER TABLE channels ADD COLUMN updated_at INTEGER NOT NULL DEFAULT 0;
-- What the readers report: when an account joined it, the last error reading it.
ALTER TABLE channels ADD COLUMN joined_at INTEGER;
ALTER TABLE channels ADD COLUMN last_error TEXT;
ALTER TABLE channels ADD COLUMN last_error_at INTEGER;
UPDATE channels SET kind = 'external', updated_at = created_at;

-- Bumped in the transaction of every change of a source: every parser polls it.
INSERT INTO meta (key, value) VALUES ('sources_version', 0);
