-- A delivery names its post and subscriber by id without a foreign key: neither table ever
-- deletes a row, and the fan-out inserts ids it has just read from them. Each key check of
-- the fan-out's insert took a row lock on the referenced subscriber (and post), which was
-- more than half of the insert's cost: 18 -> 8 us per delivery inserted, measured on a
-- 50,000-row fan-out (BENCHMARKS.md, "PostgreSQL's foreign keys on deliveries").
ALTER TABLE deliveries DROP CONSTRAINT IF EXISTS deliveries_post_id_fkey;
ALTER TABLE deliveries DROP CONSTRAINT IF EXISTS deliveries_subscriber_id_fkey;
