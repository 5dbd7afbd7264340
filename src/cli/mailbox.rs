//! `meldewerk mailbox …`: court-mailbox accounts and who may use them, on a stopped server's
//! data directory, with the same rules and audit records as the operator API
//! ([`crate::mailbox_accounts`]).

use std::sync::Arc;

use chrono::Utc;
use clap::Subcommand;
use meldewerk_storage::{MailboxAccount, MailboxAccountId, Store};

use super::store::{err, open_store, CliError};
use crate::accounts::UserName;
use crate::configuration::Settings;
use crate::facilities::Given;
use crate::mailbox_accounts::{
    account_view, no_account, parse_id, AccountFieldNames, AccountInput, MailboxAccounts,
};

/// How the command line names an account's values in its messages.
const OPTIONS: AccountFieldNames = AccountFieldNames {
    id: "the account id",
    safe_id: "--safe-id",
    name: "--name",
    missing: "is required",
};

/// `meldewerk mailbox …`
#[derive(Debug, Subcommand)]
pub enum MailboxCommand {
    /// Configure a court-mailbox account under its id (the integrators' egvp_account_id, a
    /// positive whole number); active unless --inactive.
    Add {
        /// The account.
        #[command(flatten)]
        account: AccountArg,
        /// Its values (both required).
        #[command(flatten)]
        values: AccountValues,
        /// Configure it deactivated: nothing is sent through it until it is activated.
        #[arg(long)]
        inactive: bool,
    },
    /// Change the SAFE-ID or name of an account.
    Set {
        /// The account.
        #[command(flatten)]
        account: AccountArg,
        /// The values to change.
        #[command(flatten)]
        values: AccountValues,
    },
    /// List the accounts by id with the users granted each, or those one user may use.
    List {
        /// Only the accounts this user may see and send through.
        #[arg(long, value_name = "USER")]
        user: Option<String>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Show one account as JSON, with the users granted it.
    Show(AccountArg),
    /// Deactivate an account: nothing is sent through it; its users keep seeing its messages.
    Deactivate(AccountArg),
    /// Activate a deactivated account.
    Activate(AccountArg),
    /// Remove an account (refused while users are granted it).
    Remove(AccountArg),
    /// Let an API user see an account's messages and send through it.
    Grant(GrantArgs),
    /// Take an API user's grant for an account back.
    Revoke(GrantArgs),
}

/// The account a command is about.
#[derive(Debug, clap::Args)]
pub struct AccountArg {
    /// The account id, e.g. 7.
    // Hyphen values taken, so that `-3` gets the id's own message rather than clap's.
    #[arg(allow_hyphen_values = true)]
    id: String,
}

/// An account's values as options; `add` needs both, `set` changes those given.
#[derive(Debug, clap::Args)]
pub struct AccountValues {
    /// The mailbox's SAFE-ID, e.g. DE.Justiz.1a2b-3c4d.
    #[arg(long)]
    safe_id: Option<String>,
    /// What operators and users call the account.
    #[arg(long)]
    name: Option<String>,
}

/// The account and user of a grant.
#[derive(Debug, clap::Args)]
pub struct GrantArgs {
    /// The account id, e.g. 7.
    #[arg(allow_hyphen_values = true)]
    id: String,
    /// The API user's name.
    user: String,
}

fn id_of(text: &str) -> Result<MailboxAccountId, CliError> {
    parse_id(text, &OPTIONS).map_err(|problem| CliError(format!("invalid account id: {problem}")))
}

fn user_of(text: &str) -> Result<UserName, CliError> {
    UserName::parse(text).map_err(err)
}

async fn existing(
    store: &Arc<dyn Store>,
    id: MailboxAccountId,
) -> Result<MailboxAccount, CliError> {
    store
        .mailbox_account(id)
        .await
        .map_err(err)?
        .ok_or_else(|| CliError(no_account(id)))
}

/// Who the audit log says made a change on the command line: the login running it.
fn who() -> String {
    let login = std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| "unknown".into());
    format!("command line ({})", crate::telemetry::log_str(&login))
}

/// Checks `input` for account `id` and stores it; what to print.
async fn store_account(
    store: &Arc<dyn Store>,
    id: MailboxAccountId,
    input: AccountInput<'_>,
    done: &str,
) -> Result<String, CliError> {
    let mut errors = Vec::new();
    let account = input
        .check(Some(id), &OPTIONS, Utc::now(), &mut errors)
        .ok_or_else(|| CliError(format!("invalid mailbox account: {}", errors.join("; "))))?;
    let who = who();
    let operations = MailboxAccounts { store, who: &who };
    operations.put(account).await.map_err(err)?;
    Ok(format!("mailbox account {id} {done}"))
}

/// One line of `mailbox list`.
fn line(account: &MailboxAccount, users: &[String]) -> String {
    format!(
        "{:<20} {:<40} {:<8} {:<32} {}",
        account.egvp_account_id,
        account.safe_id,
        if account.active { "yes" } else { "no" },
        account.name,
        if users.is_empty() {
            "-".to_owned()
        } else {
            users.join(",")
        }
    )
}

/// Every account, page by page.
async fn all_accounts(store: &Arc<dyn Store>) -> Result<Vec<MailboxAccount>, CliError> {
    let mut all: Vec<MailboxAccount> = Vec::new();
    loop {
        let after = all.last().map(|a| a.egvp_account_id);
        let page = store.mailbox_accounts(after, 1000).await.map_err(err)?;
        if page.is_empty() {
            return Ok(all);
        }
        all.extend(page);
    }
}

/// Runs a mailbox command and returns what to print.
pub(crate) async fn run_mailbox(
    settings: &Settings,
    command: MailboxCommand,
) -> Result<String, CliError> {
    match command {
        MailboxCommand::Add {
            account: AccountArg { id },
            values: AccountValues { safe_id, name },
            inactive,
        } => {
            let id = id_of(&id)?;
            let store = open_store(settings, false)?;
            if store.mailbox_account(id).await.map_err(err)?.is_some() {
                return Err(CliError(format!(
                    "mailbox account {id} exists already; change it with `meldewerk mailbox set`"
                )));
            }
            let input = AccountInput {
                safe_id: safe_id.as_deref().into(),
                name: name.as_deref().into(),
                active: !inactive,
            };
            store_account(&store, id, input, "added").await
        }
        MailboxCommand::Set {
            account: AccountArg { id },
            values: AccountValues { safe_id, name },
        } => {
            let id = id_of(&id)?;
            if safe_id.is_none() && name.is_none() {
                return Err(CliError("give --safe-id, --name or both".into()));
            }
            let store = open_store(settings, false)?;
            let old = existing(&store, id).await?;
            let safe_id = safe_id.unwrap_or_else(|| old.safe_id.to_string());
            let name = name.unwrap_or(old.name);
            let input = AccountInput {
                safe_id: Given::Text(&safe_id),
                name: Given::Text(&name),
                active: old.active,
            };
            store_account(&store, id, input, "changed").await
        }
        MailboxCommand::List { user, json } => {
            let store = open_store(settings, false)?;
            let accounts = match &user {
                Some(user) => {
                    let user = user_of(user)?;
                    if store.user(user.as_str()).await.map_err(err)?.is_none() {
                        return Err(CliError(format!("there is no user {}", user.as_str())));
                    }
                    store
                        .mailbox_accounts_of(user.as_str())
                        .await
                        .map_err(err)?
                }
                None => all_accounts(&store).await?,
            };
            let mut listed = Vec::with_capacity(accounts.len());
            for account in accounts {
                let users = store
                    .mailbox_account_users(account.egvp_account_id)
                    .await
                    .map_err(err)?;
                listed.push((account, users));
            }
            if json {
                let values: Vec<_> = listed
                    .iter()
                    .map(|(account, users)| account_view(account, users))
                    .collect();
                return serde_json::to_string_pretty(&values).map_err(err);
            }
            let mut out = format!(
                "{:<20} {:<40} {:<8} {:<32} USERS",
                "ID", "SAFE-ID", "ACTIVE", "NAME"
            );
            for (account, users) in &listed {
                out.push('\n');
                out.push_str(&line(account, users));
            }
            Ok(out)
        }
        MailboxCommand::Show(AccountArg { id }) => {
            let id = id_of(&id)?;
            let store = open_store(settings, false)?;
            let account = existing(&store, id).await?;
            let users = store.mailbox_account_users(id).await.map_err(err)?;
            serde_json::to_string_pretty(&account_view(&account, &users)).map_err(err)
        }
        MailboxCommand::Deactivate(AccountArg { id }) => set_active(settings, &id, false).await,
        MailboxCommand::Activate(AccountArg { id }) => set_active(settings, &id, true).await,
        MailboxCommand::Remove(AccountArg { id }) => {
            let id = id_of(&id)?;
            let store = open_store(settings, false)?;
            let who = who();
            let operations = MailboxAccounts {
                store: &store,
                who: &who,
            };
            operations.remove(id).await.map_err(err)?;
            Ok(format!("mailbox account {id} removed"))
        }
        MailboxCommand::Grant(args) => change_grant(settings, args, true).await,
        MailboxCommand::Revoke(args) => change_grant(settings, args, false).await,
    }
}

/// Grants (`grant`) or revokes a user's use of an account, audited as the command line.
async fn change_grant(
    settings: &Settings,
    GrantArgs { id, user }: GrantArgs,
    grant: bool,
) -> Result<String, CliError> {
    let id = id_of(&id)?;
    let user = user_of(&user)?;
    let store = open_store(settings, false)?;
    let who = who();
    let operations = MailboxAccounts {
        store: &store,
        who: &who,
    };
    let user = user.as_str();
    if !grant {
        operations.revoke(id, user).await.map_err(err)?;
        return Ok(format!("{user} may no longer use mailbox account {id}"));
    }
    Ok(if operations.grant(id, user).await.map_err(err)? {
        format!("{user} may now use mailbox account {id}")
    } else {
        format!("{user} may use mailbox account {id} already")
    })
}

async fn set_active(settings: &Settings, id: &str, active: bool) -> Result<String, CliError> {
    let id = id_of(id)?;
    let store = open_store(settings, false)?;
    let old = existing(&store, id).await?;
    let input = AccountInput {
        safe_id: Given::Text(old.safe_id.as_str()),
        name: Given::Text(&old.name),
        active,
    };
    let state = if active {
        "activated"
    } else {
        "deactivated: nothing is sent through it; its users still see its messages"
    };
    store_account(&store, id, input, state).await
}
