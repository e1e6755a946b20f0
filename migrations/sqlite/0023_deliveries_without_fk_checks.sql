-- PostgreSQL's deliveries lost their foreign keys in its 0023 (each check locked the
-- referenced row). SQLite keeps them: its checks are index lookups that lock nothing. This
-- migration only keeps the two folders numbered alike.
SELECT 1;
