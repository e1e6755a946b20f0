-- Classification quality and cost: extracted fields and money per classification; labeled
-- examples (LLM answers, accepted reports, admin re-labels) to learn from; subscribers'
-- reports; a personal minimum budget.

ALTER TABLE classifications ADD COLUMN extraction JSONB;
ALTER TABLE classifications ADD COLUMN cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0;
CREATE INDEX classifications_created ON classifications(created_at);

ALTER TABLE subscribers ADD COLUMN min_budget JSONB;

CREATE TABLE examples (
    id         BIGSERIAL PRIMARY KEY,
    post_id    BIGINT REFERENCES posts(id),
    text       TEXT    NOT NULL,
    is_job     BOOLEAN NOT NULL,
    kind       TEXT    NOT NULL,
    categories JSONB   NOT NULL DEFAULT '[]',
    source     TEXT    NOT NULL CHECK (source IN ('llm', 'report', 'relabel')),
    created_at BIGINT  NOT NULL
);
CREATE UNIQUE INDEX examples_post_source ON examples(post_id, source) WHERE post_id IS NOT NULL;

CREATE TABLE reports (
    id         BIGSERIAL PRIMARY KEY,
    chat_id    BIGINT  NOT NULL,
    post_id    BIGINT REFERENCES posts(id),
    kind       TEXT    NOT NULL CHECK (kind IN ('missed', 'wrong')),
    text       TEXT    NOT NULL,
    link       TEXT,
    status     TEXT    NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'rejected')),
    example_id BIGINT REFERENCES examples(id),
    created_at BIGINT  NOT NULL,
    decided_at BIGINT
);
CREATE INDEX reports_status ON reports(status, id);
