-- An admin account has a role: `admin` (everything) or `moderator` (reports, placements,
-- posts and sources; no payments, refunds, broadcasts, prompt, categories or accounts).
-- Accounts made before roles existed keep every right.
ALTER TABLE admins ADD COLUMN role TEXT NOT NULL DEFAULT 'admin'
    CHECK (role IN ('admin', 'moderator'));
