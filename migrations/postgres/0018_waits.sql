-- Telegram making us wait, for the admin panel's dashboard: every 429 the Bot API answered
-- a send with, and every flood wait an MTProto account was given. One row per answer,
-- written by whichever process got it (several senders and a parser share one database in
-- distributed mode); kept 30 days (older rows are dropped as new ones are written).
CREATE TABLE telegram_waits (
    id      BIGSERIAL PRIMARY KEY,
    at      BIGINT  NOT NULL,   -- ms since the epoch
    kind    TEXT    NOT NULL,   -- 'bot_429' | 'flood_wait'
    who     TEXT    NOT NULL,   -- the bot's name ([[bots]]) or the account's id
    seconds BIGINT  NOT NULL    -- how long Telegram asked us to wait
);
CREATE INDEX telegram_waits_at ON telegram_waits(at);
