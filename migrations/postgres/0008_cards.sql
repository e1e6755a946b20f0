-- The buttons under a card: a report per user, post and kind (a second tap files nothing);
-- a post withheld once enough users reported it (its unsent deliveries wait for an admin);
-- the authors a subscriber hid; finding a job's re-posts in other channels.
ALTER TABLE reports DROP CONSTRAINT IF EXISTS reports_kind_check;
ALTER TABLE reports ADD CONSTRAINT reports_kind_check CHECK (kind IN
    ('missed', 'wrong', 'not_job', 'wrong_category'));
ALTER TABLE deliveries DROP CONSTRAINT IF EXISTS deliveries_status_check;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_status_check CHECK (status IN
    ('pending', 'held', 'sending', 'sent', 'blocked', 'failed', 'withheld'));
CREATE UNIQUE INDEX reports_once ON reports(chat_id, post_id, kind)
    WHERE post_id IS NOT NULL AND kind IN ('not_job', 'wrong_category');
CREATE INDEX reports_post ON reports(post_id) WHERE post_id IS NOT NULL;
ALTER TABLE posts ADD COLUMN withheld_at BIGINT;
CREATE INDEX posts_duplicate_of ON posts(duplicate_of) WHERE duplicate_of IS NOT NULL;

CREATE TABLE hidden_authors (
    id         BIGSERIAL PRIMARY KEY,
    chat_id    BIGINT  NOT NULL,
    author     TEXT    NOT NULL, -- '@username', or 'src:<handle>' for a channel without one
    label      TEXT    NOT NULL, -- as shown to the subscriber
    created_at BIGINT  NOT NULL,
    UNIQUE (chat_id, author)
);
