-- Version 1: users and their memento keys; reports, the outbox, the audit log and the
-- acknowledgement cursors follow below.

-- A user's record is the crate's UserRecord as JSON. A removed user's row stays with a null
-- record and key id: reports keep their owner's name, so the name is never given again.
CREATE TABLE users (
    name text PRIMARY KEY,
    key_id text UNIQUE,
    record jsonb,
    removed_at timestamptz,
    CHECK ((record IS NULL) = (removed_at IS NOT NULL)),
    CHECK ((record IS NULL) = (key_id IS NULL))
);
