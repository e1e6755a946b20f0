-- The language a chat's user reads (from the Telegram client's language_code), so messages
-- the bots send on their own (reminders, expiries, start notices) are in that language.
CREATE TABLE chat_languages (
    chat_id    INTEGER PRIMARY KEY,
    lang       TEXT    NOT NULL,
    updated_at INTEGER NOT NULL
);
