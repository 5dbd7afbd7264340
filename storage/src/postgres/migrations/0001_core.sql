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

-- A report: its state is the crate's Report as JSON without its key and without its payload
-- (submission null, the message without its body, receipt null); the key and what queries
-- select by are columns. The payload sits in columns of its own, each written once (by the
-- change that brings it) and emptied by retention: a state change writes the state, and the
-- large values stay where they are (TOASTed, not copied with the row's new version).
-- An integrator's id may hold any character, NUL included, which text cannot: it is bytea,
-- which also sorts in byte order like the sled engine's keys. For the same reason the records
-- are `json`, not `jsonb`: integrators' text (an id, an idempotency key, a client reference, a
-- submission's fields) reaches them, and jsonb refuses the escaped NUL (\u0000) that json keeps
-- as written. Nothing queries inside them; the columns beside them are what queries use.
CREATE TABLE reports (
    owner text COLLATE "C" NOT NULL,
    module text COLLATE "C" NOT NULL,
    report_id bytea NOT NULL,
    status text NOT NULL CHECK (status IN ('PENDING', 'SUCCESS', 'FAILURE')),
    -- Dispatched and not yet consumed by a poll (nor expired).
    pending boolean NOT NULL,
    finished_at timestamptz,
    expired_at timestamptz,
    -- The stored message's UUID, by which a transport's acknowledgement finds the report and
    -- its job; one message, one report.
    message_uuid text COLLATE "C" UNIQUE,
    record json NOT NULL,
    submission json,
    message_body bytea,
    receipt bytea,
    PRIMARY KEY (owner, module, report_id),
    CHECK ((message_uuid IS NULL) = (message_body IS NULL))
);
CREATE INDEX reports_pending ON reports (owner, module, report_id) WHERE pending;
CREATE INDEX reports_by_id ON reports (module, report_id, owner);
-- The retention sweep reads a module's final, unexpired reports in the order they finished.
CREATE INDEX reports_to_expire ON reports (module, finished_at, owner, report_id)
    WHERE finished_at IS NOT NULL AND expired_at IS NULL;

-- The outbox: one job per unfinished report, its id from the sequence (increasing, never
-- reused). The record is the crate's Job as JSON without its id and report (columns), keeping
-- `not_before` to the nanosecond; the column holds it to the microsecond for the scans. Lane 0
-- holds first deliveries, lane 1 jobs waiting for an acknowledgement.
CREATE TABLE jobs (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    owner text COLLATE "C" NOT NULL,
    module text COLLATE "C" NOT NULL,
    report_id bytea NOT NULL,
    lane smallint NOT NULL CHECK (lane IN (0, 1)),
    not_before timestamptz NOT NULL,
    record json NOT NULL,
    UNIQUE (owner, module, report_id),
    FOREIGN KEY (owner, module, report_id) REFERENCES reports (owner, module, report_id)
);
-- Due jobs, lane by lane and module by module, oldest due first.
CREATE INDEX jobs_due ON jobs (lane, module, not_before, id);

-- The operators' audit log: the crate's AuditEntry as JSON (json: a target names a report,
-- whose id may hold NUL) under an increasing number.
CREATE TABLE audit_log (
    number bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    record json NOT NULL
);

-- Where the engine stands in each transport's acknowledgement inbox.
CREATE TABLE inbox_cursors (
    transport text PRIMARY KEY,
    inbox_cursor text NOT NULL
);
