-- Subscriptions and payments: the invoices jobwire issued, the payment ledger, the access
-- periods trials and payments bought, and the billing notices sent once each. The same
-- tables, columns and meaning as migrations/sqlite/0006_billing.sql.

-- An invoice's nonce is stored before the invoice is sent, so pre-checkout can tell a
-- payload jobwire issued from a forged or replayed one.
CREATE TABLE invoices (
    nonce      TEXT    PRIMARY KEY,
    chat_id    BIGINT  NOT NULL,
    plan_id    TEXT    NOT NULL,
    amount     BIGINT  NOT NULL,  -- the currency's smallest unit (Stars are whole)
    currency   TEXT    NOT NULL,
    created_at BIGINT  NOT NULL,
    paid_by    TEXT               -- the charge that paid it
);

-- The ledger: one row per event, never updated. The unique (charge_id, kind) applies a
-- payment (or a refund) once, however many processes and times its update arrives.
CREATE TABLE payments (
    id                      BIGSERIAL PRIMARY KEY,
    kind                    TEXT    NOT NULL CHECK (kind IN ('payment', 'refund', 'refunded')),
    charge_id               TEXT    NOT NULL,   -- telegram_payment_charge_id
    provider_charge_id      TEXT,
    chat_id                 BIGINT  NOT NULL,
    plan_id                 TEXT,
    nonce                   TEXT,
    amount                  BIGINT  NOT NULL,
    currency                TEXT    NOT NULL,
    is_recurring            BOOLEAN NOT NULL DEFAULT FALSE,
    is_first_recurring      BOOLEAN NOT NULL DEFAULT FALSE,
    subscription_expires_at BIGINT,
    source                  TEXT    NOT NULL CHECK (source IN ('update', 'reconciliation', 'admin')),
    raw                     TEXT    NOT NULL,   -- the update or transaction (JSON)
    created_at              BIGINT  NOT NULL,
    UNIQUE (charge_id, kind)
);
CREATE INDEX payments_chat ON payments(chat_id, id);

-- What a trial or a payment bought. A refund revokes, a cancelled renewal marks; neither
-- deletes.
CREATE TABLE access_periods (
    id          BIGSERIAL PRIMARY KEY,
    chat_id     BIGINT  NOT NULL,
    plan_id     TEXT    NOT NULL,
    categories  JSONB   NOT NULL DEFAULT '[]',  -- JSON array of slugs; empty: every category
    starts_at   BIGINT  NOT NULL,
    ends_at     BIGINT  NOT NULL,
    trial       BOOLEAN NOT NULL DEFAULT FALSE,
    renews      BOOLEAN NOT NULL DEFAULT FALSE,
    charge_id   TEXT    UNIQUE,                 -- the payment that bought it (NULL: a trial)
    canceled_at BIGINT,
    revoked_at  BIGINT,
    created_at  BIGINT  NOT NULL
);
-- One trial per chat, ever.
CREATE UNIQUE INDEX access_periods_one_trial ON access_periods(chat_id) WHERE trial;
CREATE INDEX access_periods_ends ON access_periods(ends_at);
CREATE INDEX access_periods_chat ON access_periods(chat_id);

-- Reminders and the expiry message, claimed once per period and notice.
CREATE TABLE billing_notices (
    period_id BIGINT  NOT NULL REFERENCES access_periods(id),
    notice    TEXT    NOT NULL,   -- remind_3d | remind_1d | ended | …
    sent_at   BIGINT  NOT NULL,
    PRIMARY KEY (period_id, notice)
);
