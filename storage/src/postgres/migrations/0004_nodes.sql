-- Version 4: several nodes on one database. A node claims a job for a lease when it begins an
-- attempt; other nodes pass over the job until the lease runs out, which a living node keeps
-- pushing on by its heartbeat. A node that dies stops the heartbeat, and its jobs are due
-- again for every node once their leases have run out.
ALTER TABLE jobs
    ADD COLUMN claimed_by text COLLATE "C",
    ADD COLUMN claimed_until timestamptz,
    ADD CONSTRAINT jobs_claim CHECK ((claimed_by IS NULL) = (claimed_until IS NULL));
-- A node's heartbeat finds its own claims.
CREATE INDEX jobs_claimed ON jobs (claimed_by) WHERE claimed_by IS NOT NULL;

-- The nodes on this database: each writes its row at start and at every heartbeat, with the
-- health of its actors, so that every node's dashboard shows every node. `instance` tells two
-- processes that were given one name apart.
CREATE TABLE nodes (
    name text COLLATE "C" PRIMARY KEY,
    instance text NOT NULL,
    started_at timestamptz NOT NULL,
    seen_at timestamptz NOT NULL,
    -- Set when the node stopped on purpose (it let go of its claims then).
    stopped_at timestamptz,
    health jsonb
);

-- Periodic work that one node at a time does (a transport's acknowledgement inbox, a mailbox
-- account's sync, retention): held by a node until `held_until`, renewed at every round.
CREATE TABLE task_leases (
    task text COLLATE "C" PRIMARY KEY,
    holder text COLLATE "C" NOT NULL,
    held_until timestamptz NOT NULL
);
