-- Version 3: the court-message index: each message a sync listed, with its hydration and
-- deletion; the sync cursors; the case references mapped to jobs.
--
-- A message's record is the crate's CourtMessage as JSON, holding its exact times (chrono keeps
-- nanoseconds, timestamptz microseconds). The columns beside it are what queries select and
-- order by, rewritten with the record by every change. A time that queries compare is stored as
-- the microsecond at or before it (timestamptz) and the nanoseconds past that microsecond
-- (0-999), so that comparisons and orders are exact. Account ids are not foreign keys: entries
-- outlive their account (the audit trail), and accounts are another area's table.
--
-- Text keys are compared in byte order (COLLATE "C"), as the sled engine compares them.

-- The last index id given out (0: none yet). Indexing locks this one row until it commits, so
-- that an id is given out once, ids have no gaps, and they commit in increasing order: a reader
-- paging by id (`after`) never passes over an id that commits after it read.
CREATE TABLE court_message_last_id (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    last_id bigint NOT NULL CHECK (last_id >= 0)
);
INSERT INTO court_message_last_id (last_id) VALUES (0);

-- One row per (account, transport message id), deleted ones included: a message is indexed
-- once. `live` is false once deleted (the row stays); `due_at`/`due_ns` are set exactly while
-- the message is live and waiting for its hydration (the queue); `job_id` is the record's.
CREATE TABLE court_messages (
    id bigint PRIMARY KEY CHECK (id > 0),
    account_id bigint NOT NULL,
    message_id text COLLATE "C" NOT NULL,
    created_at timestamptz NOT NULL,
    created_ns integer NOT NULL CHECK (created_ns BETWEEN 0 AND 999),
    live boolean NOT NULL,
    due_at timestamptz,
    due_ns integer CHECK (due_ns BETWEEN 0 AND 999),
    job_id text COLLATE "C",
    record jsonb NOT NULL,
    UNIQUE (account_id, message_id),
    CHECK ((due_at IS NULL) = (due_ns IS NULL)),
    CHECK (live OR due_at IS NULL)
);
-- One account's entries, deleted ones too (a sync comparing the index with a full listing).
CREATE INDEX court_messages_by_account ON court_messages (account_id, id);
-- The API's listings: an account's acknowledged history only grows, and is not read at a poll.
CREATE INDEX court_messages_live ON court_messages (account_id, id) WHERE live;
CREATE INDEX court_messages_by_job ON court_messages (job_id, id)
    WHERE live AND job_id IS NOT NULL;
-- The hydration queue, earliest due first.
CREATE INDEX court_messages_waiting ON court_messages (due_at, due_ns, id)
    WHERE due_at IS NOT NULL;

-- The cursor each account's last sync stored with its page.
CREATE TABLE mailbox_sync_cursors (
    account_id bigint PRIMARY KEY,
    sync_cursor text NOT NULL
);

-- A case reference of an account maps to the job that sent it; the first mapping stays.
CREATE TABLE case_references (
    account_id bigint NOT NULL,
    aktenzeichen text COLLATE "C" NOT NULL,
    job_id text COLLATE "C" NOT NULL,
    PRIMARY KEY (account_id, aktenzeichen)
);
