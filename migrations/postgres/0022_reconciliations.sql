-- The last reconciliation of the ledger with Telegram's Stars transactions (the main bot's
-- billing loop): when it finished, how many transactions it read and how many payments and
-- refunds the ledger lacked (applied then). One row, replaced by every run.
CREATE TABLE reconciliations (
    id           BIGINT PRIMARY KEY CHECK (id = 1),
    finished_at  BIGINT NOT NULL,
    transactions BIGINT NOT NULL,
    payments     BIGINT NOT NULL,
    refunds      BIGINT NOT NULL
);
