-- The daily public digest: one row per local day, claimed before it is posted, so several
-- bot processes post it once; a claim left unsent for long is taken again.
CREATE TABLE digests (
    day        TEXT    PRIMARY KEY, -- YYYY-MM-DD in the digest's time zone
    claimed_at INTEGER NOT NULL,
    sent_at    INTEGER,
    message_id INTEGER,
    jobs       INTEGER NOT NULL DEFAULT 0
);
