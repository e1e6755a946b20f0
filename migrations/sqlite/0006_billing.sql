-- Subscriptions and payments: the invoices jobwire issued, the payment ledger, the access
-- periods trials and payments bought, and the billing notices sent once each.

-- An invoice's nonce is stored before the invoice is sent, so pre-checkout can tell a
-- payload jobwire issued from a forged or replayed one.
CREATE TABLE invoices (
    nonce      TEXT    PRIMARY KEY,
    chat_id    INTEGER NOT NULL,
    plan_id    TEXT    NOT NULL,
    amount     INTEGER NOT NULL,  -- the currency's smallest unit (Stars are whole)
    currency   TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    paid_by    TEXT               -- the charge that paid it
);

-- The ledger: one row per event, never updated. The unique (charge_id, kind) applies a
-- payment (or a refund) once, however many times its update arrives.
CREATE TABLE payments (
    id                      INTEGER PRIMARY KEY,
    kind                    TEXT    NOT NULL,   -- payment | refund | refunded
    charge_id               TEXT    NOT NULL,   -- telegram_payment_charge_id
    provider_charge_id      TEXT,
    chat_id                 INTEGER NOT NULL,
    plan_id                 TEXT,
    nonce                   TEXT,
    amount                  INTEGER NOT NULL,
    currency                TEXT    NOT NULL,
    is_recurring            INTEGER NOT NULL DEFAULT 0,
    is_first_recurring      INTEGER NOT NULL DEFAULT 0,
    subscription_expires_at INTEGER,
    source                  TEXT    NOT NULL,   -- update | reconciliation | admin
    raw                     TEXT    NOT NULL,   -- the update or transaction (JSON)
    created_at              INTEGER NOT NULL,
    UNIQUE (charge_id, kind)
);
CREATE INDEX payments_chat ON payments(chat_id, id);

-- What a trial or a payment bought. A refund revokes, a cancelled renewal marks; neither
-- deletes.
CREATE TABLE access_periods (
    id          INTEGER PRIMARY KEY,
    chat_id     INTEGER NOT NULL,
    plan_id     TEXT    NOT NULL,
    categories  TEXT    NOT NULL DEFAULT '[]',  -- JSON array of slugs; empty: every category
    starts_at   INTEGER NOT NULL,
    ends_at     INTEGER NOT NULL,
    trial       INTEGER NOT NULL DEFAULT 0,
    renews      INTEGER NOT NULL DEFAULT 0,
    charge_id   TEXT    UNIQUE,                 -- the payment that bought it (NULL: a trial)
    canceled_at INTEGER,
    revoked_at  INTEGER,
    created_at  INTEGER NOT NULL
);
-- One trial per chat, ever.
CREATE UNIQUE INDEX access_periods_one_trial ON access_periods(chat_id) WHERE trial;
CREATE INDEX access_periods_ends ON access_periods(ends_at);
CREATE INDEX access_periods_chat ON access_periods(chat_id);

-- Reminders and the expiry message, claimed once per period and notice.
CREATE TABLE billing_notices (
    period_id INTEGER NOT NULL REFERENCES access_periods(id),
    notice    TEXT    NOT NULL,   -- remind_3d | remind_1d | ended | …
    sent_at   INTEGER NOT NULL,
    PRIMARY KEY (period_id, notice)
);
