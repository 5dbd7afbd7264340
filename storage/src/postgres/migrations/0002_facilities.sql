-- Version 2: facilities, customer scopes, certificates, court-mailbox accounts and their grants.

-- Who may see a mailbox account's messages: one row a grant. Removing a user drops theirs.
CREATE TABLE mailbox_grants (
    account_id bigint NOT NULL,
    user_name text NOT NULL REFERENCES users (name),
    PRIMARY KEY (account_id, user_name)
);
CREATE INDEX mailbox_grants_by_user ON mailbox_grants (user_name, account_id);
