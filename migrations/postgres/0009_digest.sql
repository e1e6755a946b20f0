-- The daily public digest: one row per local day, claimed before it is posted, so several
-- bot processes post it once; a claim left unsent for long is taken again.
CREATE TABLE digests (
    day        TEXT    PRIMARY KEY, -- YYYY-MM-DD in the digest's time zone
    claimed_at BIGINT  NOT NULL,
    sent_at    BIGINT,
    message_id BIGINT,
    jobs       BIGINT  NOT NULL DEFAULT 0
);
