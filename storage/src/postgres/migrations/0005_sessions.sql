-- Version 5: end users' browser sessions and the failed-login counters, shared by the nodes on
-- this database (the sled engine's single node keeps both in memory).
--
-- Nothing here is a secret one could log in with, nor what a guesser typed: a session is kept
-- under the SHA-256 of its cookie value, a counter and a known login under the SHA-256 of their
-- key (a user name, a client address, both). Every time is the database's clock (now()), so
-- that the nodes' clocks do not matter.
--
-- UNLOGGED: the rows are short-lived and written on every form request and failed login; they
-- skip the write-ahead log, and a crash of the database empties them, as a restart of the one
-- node empties its memory: end users open their links again, counters start afresh.

-- A session lives until expires_at; every use moves it to now() plus the idle time.
CREATE UNLOGGED TABLE sessions (
    id_sha256 bytea PRIMARY KEY CHECK (length(id_sha256) = 32),
    user_name text NOT NULL,
    key_id text NOT NULL,
    csrf text NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE INDEX sessions_expiry ON sessions (expires_at);

-- One failure counter per key as the generic cell rate algorithm keeps it: tat is the key's
-- theoretical arrival time; a row whose tat has passed counts nothing and may go.
CREATE UNLOGGED TABLE login_failures (
    key_sha256 bytea PRIMARY KEY CHECK (length(key_sha256) = 32),
    tat timestamptz NOT NULL
);
CREATE INDEX login_failures_tat ON login_failures (tat);

-- A user name that logged in from an address, known until known_until.
CREATE UNLOGGED TABLE known_logins (
    key_sha256 bytea PRIMARY KEY CHECK (length(key_sha256) = 32),
    known_until timestamptz NOT NULL
);
CREATE INDEX known_logins_until ON known_logins (known_until);
