-- Version 2: facilities, customer scopes, certificates, court-mailbox accounts and their grants.
--
-- Each record is the crate's type as JSON (`record`), beside the columns that look-ups, order
-- and uniqueness need. The JSON keeps the record's timestamps exactly (to the nanosecond), so a
-- record reads back equal to what was stored. Keys that listings order by sort in byte order
-- (COLLATE "C"), as the sled engine lists them, whatever the database's default collation.

-- The facility registry, by BSNR (nine digits).
CREATE TABLE facilities (
    bsnr text COLLATE "C" PRIMARY KEY CHECK (bsnr ~ '^[0-9]{9}$'),
    record jsonb NOT NULL,
    CHECK (record ->> 'bsnr' = bsnr COLLATE "C")
);

-- Which institution codes each customer may report for. An empty scope is no row: a customer
-- without one may report for nothing.
CREATE TABLE customer_scopes (
    customer text PRIMARY KEY,
    record jsonb NOT NULL,
    CHECK (record ->> 'customer' = customer),
    CHECK (jsonb_array_length(record -> 'iks') > 0)
);

-- Facilities' certificates, one per site and environment, replaced whole (key and chain
-- together).
CREATE TABLE certificates (
    bsnr text COLLATE "C" NOT NULL CHECK (bsnr ~ '^[0-9]{9}$'),
    environment text NOT NULL CHECK (environment IN ('test', 'production')),
    record jsonb NOT NULL,
    PRIMARY KEY (bsnr, environment),
    CHECK (record ->> 'bsnr' = bsnr COLLATE "C"),
    CHECK (record ->> 'environment' = environment)
);

-- Court-mailbox accounts by id. No two share a mailbox: the SAFE-ID, ASCII-lowercased
-- (`SafeId::folded`, computed by the engine), is unique.
CREATE TABLE mailbox_accounts (
    id bigint PRIMARY KEY CHECK (id >= 1),
    safe_id_folded text COLLATE "C" NOT NULL UNIQUE,
    record jsonb NOT NULL,
    CHECK (record ->> 'egvpAccountId' = id::text)
);

-- Who may see a mailbox account's messages: one row a grant. Removing a user drops theirs; an
-- account is not removed while it has any (the foreign key holds that against every writer,
-- without cascading: a grant is taken back one at a time, never in passing).
CREATE TABLE mailbox_grants (
    account_id bigint NOT NULL REFERENCES mailbox_accounts (id),
    user_name text NOT NULL REFERENCES users (name),
    PRIMARY KEY (account_id, user_name)
);
CREATE INDEX mailbox_grants_by_user ON mailbox_grants (user_name, account_id);
