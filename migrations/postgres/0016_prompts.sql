-- The classification prompt's versions, written and made current in the admin panel.
-- The current version is the one activated most recently; with none activated, the
-- classifier uses the built-in prompt (prompts/classify.v4.md).
CREATE TABLE prompt_versions (
    id           BIGSERIAL PRIMARY KEY,
    name         TEXT   NOT NULL UNIQUE, -- e.g. classify.v5, recorded with each verdict
    text         TEXT   NOT NULL,        -- the template, with {{categories}} and {{reason}}
    created_by   TEXT   NOT NULL,        -- admin username
    created_at   BIGINT NOT NULL,
    activated_by TEXT,
    activated_at BIGINT
);
CREATE INDEX prompt_versions_activated ON prompt_versions(activated_at);
