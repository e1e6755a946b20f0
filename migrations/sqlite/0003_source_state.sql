-- Small pieces of state that sources keep between runs (Telegram cursors, resolved peers,
-- channel-to-account assignments, feed ETags and seen items), as JSON under a namespace.
CREATE TABLE source_state (
    namespace  TEXT    NOT NULL,
    key        TEXT    NOT NULL,
    value      TEXT    NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (namespace, key)
);
