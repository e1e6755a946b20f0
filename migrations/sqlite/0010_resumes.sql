-- What a subscriber asked for: vacancies (the default, no row), résumés (someone looking
-- for freelancers) or both. Résumés are classified with the categories of the work offered
-- and go through fan-out like jobs (status 'job'); the classification's kind tells them apart.
CREATE TABLE subscriber_wants (
    chat_id    INTEGER PRIMARY KEY,
    wants      TEXT    NOT NULL, -- jobs | resumes | both
    updated_at INTEGER NOT NULL
);
