-- Near-duplicate detection: each post's content fingerprint, and the earlier post a
-- duplicate repeats (status 'duplicate': classified and delivered once, as the earlier one).
ALTER TABLE posts ADD COLUMN fingerprint TEXT;
ALTER TABLE posts ADD COLUMN duplicate_of BIGINT REFERENCES posts(id);
ALTER TABLE posts DROP CONSTRAINT IF EXISTS posts_status_check;
ALTER TABLE posts ADD CONSTRAINT posts_status_check CHECK (status IN
    ('filtered', 'queued', 'waiting', 'not_job', 'job', 'fanned_out', 'failed', 'duplicate'));
CREATE INDEX posts_fingerprinted ON posts(posted_at) WHERE fingerprint IS NOT NULL;
