-- Classification quality and cost: extracted fields and money per classification; labeled
-- examples (LLM answers, accepted reports, admin re-labels) to learn from; subscribers'
-- reports; a personal minimum budget.

ALTER TABLE classifications ADD COLUMN extraction TEXT;           -- JSON (core Extraction)
ALTER TABLE classifications ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0;
CREATE INDEX classifications_created ON classifications(created_at);

ALTER TABLE subscribers ADD COLUMN min_budget TEXT;               -- JSON (core MinBudget)

CREATE TABLE examples (
    id         INTEGER PRIMARY KEY,
    post_id    INTEGER REFERENCES posts(id),
    text       TEXT    NOT NULL,
    is_job     INTEGER NOT NULL,
    kind       TEXT    NOT NULL,
    categories TEXT    NOT NULL DEFAULT '[]',
    source     TEXT    NOT NULL,   -- llm | report | relabel
    created_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX examples_post_source ON examples(post_id, source) WHERE post_id IS NOT NULL;

CREATE TABLE reports (
    id         INTEGER PRIMARY KEY,
    chat_id    INTEGER NOT NULL,
    post_id    INTEGER REFERENCES posts(id),
    kind       TEXT    NOT NULL,   -- missed | wrong
    text       TEXT    NOT NULL,
    link       TEXT,
    status     TEXT    NOT NULL DEFAULT 'pending', -- pending | accepted | rejected
    example_id INTEGER REFERENCES examples(id),
    created_at INTEGER NOT NULL,
    decided_at INTEGER
);
CREATE INDEX reports_status ON reports(status, id);
