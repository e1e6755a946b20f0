-- Admin accounts of the web panel (`jobwire admin create`): a username and an argon2id hash
-- in PHC form; the password itself is never stored.
CREATE TABLE admins (
    id            INTEGER PRIMARY KEY,
    username      TEXT    NOT NULL UNIQUE,
    password_hash TEXT    NOT NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);
