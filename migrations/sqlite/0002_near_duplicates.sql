-- Near-duplicate detection: each post's content fingerprint, and the earlier post a
-- duplicate repeats (status 'duplicate': classified and delivered once, as the earlier one).
ALTER TABLE posts ADD COLUMN fingerprint TEXT;
ALTER TABLE posts ADD COLUMN duplicate_of INTEGER REFERENCES posts(id);
CREATE INDEX posts_fingerprinted ON posts(posted_at) WHERE fingerprint IS NOT NULL;
