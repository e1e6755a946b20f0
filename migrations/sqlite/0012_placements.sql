-- Direct placements: a vacancy an employer writes in the main bot and pays for in Stars.
-- It moves draft → invoiced → (awaiting_approval →) approved → published → delivered, or
-- to refused → refunding → refunded when an admin refuses it or the classifier finds no
-- vacancy in it; a draft may be canceled. Each move is one conditional UPDATE, so several
-- bot processes move a placement (and tell its employer) once.
CREATE TABLE placements (
    id           INTEGER PRIMARY KEY,
    chat_id      INTEGER NOT NULL,
    status       TEXT    NOT NULL CHECK (status IN ('draft', 'invoiced', 'awaiting_approval',
                     'approved', 'published', 'delivered', 'refused', 'refunding', 'refunded',
                     'canceled')),
    lang         TEXT    NOT NULL DEFAULT 'ru',
    title        TEXT,
    body         TEXT,
    budget       TEXT,
    contact      TEXT,
    categories   TEXT    NOT NULL DEFAULT '[]',
    stars        INTEGER,              -- the price invoiced
    nonce        TEXT,              -- the invoice's nonce
    charge_id    TEXT UNIQUE,       -- the payment's telegram_payment_charge_id
    post_id      INTEGER REFERENCES posts(id),
    reason       TEXT,              -- why it was refused
    decided_by   TEXT,              -- the admin who approved or refused it
    refund_tries INTEGER NOT NULL DEFAULT 0, -- failed refund attempts (each waits longer)
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    paid_at      INTEGER,
    published_at INTEGER,
    refunded_at  INTEGER
);
-- One open draft per chat.
CREATE UNIQUE INDEX placements_open ON placements(chat_id) WHERE status IN ('draft', 'invoiced');
CREATE INDEX placements_status ON placements(status, id);
CREATE UNIQUE INDEX placements_post ON placements(post_id) WHERE post_id IS NOT NULL;
