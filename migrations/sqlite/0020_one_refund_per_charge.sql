-- One refund per charge, whichever way it arrives: an admin's refund (`refund`) and
-- Telegram's report of it (`refunded_payment`, `refunded`) used to be two ledger rows, so
-- the dashboard counted the refund twice. The first one recorded is kept.
DELETE FROM payments
WHERE kind IN ('refund', 'refunded')
  AND id NOT IN (
      SELECT MIN(id) FROM payments WHERE kind IN ('refund', 'refunded') GROUP BY charge_id
  );
CREATE UNIQUE INDEX payments_one_refund ON payments(charge_id)
    WHERE kind IN ('refund', 'refunded');
