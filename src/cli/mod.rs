//! The command line: `meldewerk serve`, `meldewerk simulate …`, `meldewerk user …`,
//! `meldewerk seal …`, `meldewerk facility …`, `meldewerk customer …`,
//! `meldewerk certificate …`, `meldewerk mailbox …`, `meldewerk migrate`,
//! `meldewerk store copy`.

mod facilities;
mod mailbox;
mod migrate;
mod store;
mod store_copy;

pub use store::CliError;
pub(crate) use store::{err, master_key, open_store, read_stdin};

use std::path::PathBuf;
use std::sync::Arc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use clap::{Parser, Subcommand};

use crate::accounts::{Accounts, Email, Password, UserName};
use crate::configuration::Settings;
use crate::crypto::PasswordHasher;
use facilities::{run_customer, run_facility, CustomerCommand, FacilityCommand};

/// meldewerk: reports to German authorities, from pre-filled forms to receipts.
#[derive(Debug, Parser)]
#[command(name = "meldewerk", version, about)]
pub struct Cli {
    /// Configuration file (default: ./meldewerk.toml when present).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Data directory (overrides configuration and MELDEWERK_DATA_DIR).
    #[arg(long, global = true, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Top-level commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the service.
    Serve {
        /// Listen address host:port (overrides configuration and MELDEWERK_LISTEN).
        #[arg(long)]
        listen: Option<String>,
    },
    /// Run a simulated authority as its own process, reached over HTTP
    /// (`transports.<name>.url` of the service); its journal is kept in the data directory.
    Simulate {
        /// Which simulator: the name of its transport.
        #[arg(value_parser = simulator_names())]
        name: String,
        /// Listen address host:port. The simulator asks for no credentials: keep it on loopback
        /// or a test network.
        #[arg(long, default_value = "127.0.0.1:9001")]
        listen: String,
    },
    /// Manage API users (server stopped, same data directory).
    #[command(subcommand)]
    User(UserCommand),
    /// Manage seals (server stopped, same data directory).
    #[command(subcommand)]
    Seal(SealCommand),
    /// Manage the facility registry (server stopped, same data directory).
    #[command(subcommand)]
    Facility(FacilityCommand),
    /// Manage customers' scopes (server stopped, same data directory).
    #[command(subcommand)]
    Customer(CustomerCommand),
    /// Manage facilities' client certificates (server stopped, same data directory).
    #[command(subcommand)]
    Certificate(crate::certificates::CertificateCommand),
    /// Manage court-mailbox accounts and which API users may use them (server stopped, same
    /// data directory).
    #[command(subcommand)]
    Mailbox(mailbox::MailboxCommand),
    /// Bring the PostgreSQL store's schema to this version (`store.engine = "postgres"`) and
    /// show its state; nodes do it themselves when they start.
    Migrate,
    /// Move the store between engines (server stopped).
    #[command(subcommand)]
    Store(store_copy::StoreCommand),
}

/// The transports whose simulated authority `meldewerk simulate` can run: every one of the
/// registry, by name.
fn simulator_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        meldewerk_transports::TRANSPORTS
            .iter()
            .map(|kind| clap::builder::PossibleValue::new(kind.name).help(kind.authority)),
    )
}

/// `meldewerk user …`
#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Add an API user; the password is read from standard input.
    Add {
        /// User name.
        name: String,
        /// Read the password from standard input (required).
        #[arg(long)]
        password_stdin: bool,
        /// Customer id to attach.
        #[arg(long)]
        customer: Option<String>,
        /// Address for the user's notices (a report of theirs failed for good).
        #[arg(long)]
        email: Option<String>,
    },
    /// Set the address for a user's notices, or remove it with --none.
    // clap writes a required group first in the usage line; the arguments are taken name first.
    #[command(
        group(clap::ArgGroup::new("target").required(true).args(["address", "none"])),
        override_usage = "meldewerk user email [OPTIONS] <NAME> <ADDRESS|--none>"
    )]
    Email {
        /// User name.
        name: String,
        /// The address, e.g. it@klinik.example.
        address: Option<String>,
        /// Remove the address: the user gets no notices.
        #[arg(long)]
        none: bool,
    },
    /// Set the customer a user belongs to, or remove it with --none (a user without one may
    /// name no facility).
    #[command(
        group(clap::ArgGroup::new("target").required(true).args(["customer", "none"])),
        override_usage = "meldewerk user customer [OPTIONS] <NAME> <CUSTOMER|--none>"
    )]
    Customer {
        /// User name.
        name: String,
        /// The customer id, e.g. K-1.
        customer: Option<String>,
        /// Remove the customer.
        #[arg(long)]
        none: bool,
    },
    /// Set whether the user's mementos come with a magic link (`off`: an integrator whose
    /// configuration issues no tokens gets `"magicLink": null`). New users get them.
    MagicLinks {
        /// User name.
        name: String,
        /// `on` or `off`.
        #[arg(value_parser = ["on", "off"])]
        setting: String,
    },
    /// Set a new password (revokes every memento, magic link and session of the user).
    Passwd {
        /// User name.
        name: String,
        /// Read the password from standard input (required).
        #[arg(long)]
        password_stdin: bool,
    },
    /// List users.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Remove a user (their reports stay).
    Remove {
        /// User name.
        name: String,
    },
}

/// `meldewerk seal …`
#[derive(Debug, Subcommand)]
pub enum SealCommand {
    /// Deposit a seal for a user: an Ed25519 PKCS#8 (DER) key file, or a newly generated key.
    Deposit {
        /// User name.
        name: String,
        /// Ed25519 private key in PKCS#8 DER form; without it a new key is generated.
        #[arg(long, value_name = "FILE")]
        key_file: Option<PathBuf>,
    },
}

fn read_password(flag: bool) -> Result<Password, CliError> {
    Password::parse(&read_stdin(flag, "password")?).map_err(err)
}

fn parse_email(address: Option<&str>) -> Result<Option<Email>, CliError> {
    address.map(Email::parse).transpose().map_err(err)
}

fn accounts(settings: &Settings, create_data_dir: bool) -> Result<Accounts, CliError> {
    let store = open_store(settings, create_data_dir)?;
    let master = master_key(settings)?;
    let hasher = PasswordHasher::new(
        settings.security.argon2_memory_kib,
        settings.security.argon2_iterations,
    )
    .map_err(err)?;
    Ok(Accounts::new(store, Arc::new(master), hasher))
}

/// Runs a user, seal, facility, customer, certificate or mailbox command and returns what to print.
pub async fn run_admin(settings: &Settings, command: Command) -> Result<String, CliError> {
    match command {
        Command::Serve { .. } | Command::Simulate { .. } => Err(CliError(
            "serve and simulate run a server, not an admin command".into(),
        )),
        Command::Migrate => migrate::run(settings).await,
        Command::Store(command) => store_copy::run(settings, command).await,
        Command::User(UserCommand::Add {
            name,
            password_stdin,
            customer,
            email,
        }) => {
            let name = UserName::parse(&name).map_err(err)?;
            let email = parse_email(email.as_deref())?;
            let password = read_password(password_stdin)?;
            accounts(settings, true)?
                .add(&name, password, customer, email)
                .await
                .map_err(err)?;
            Ok(format!("user {} added", name.as_str()))
        }
        Command::User(UserCommand::Passwd {
            name,
            password_stdin,
        }) => {
            let name = UserName::parse(&name).map_err(err)?;
            let password = read_password(password_stdin)?;
            accounts(settings, false)?
                .change_password(&name, password)
                .await
                .map_err(err)?;
            Ok(format!(
                "password of {} changed; its older mementos, magic links and sessions no longer work",
                name.as_str()
            ))
        }
        Command::User(UserCommand::Email {
            name,
            address,
            none: _,
        }) => {
            let name = UserName::parse(&name).map_err(err)?;
            let email = parse_email(address.as_deref())?;
            let said = match &email {
                Some(email) => format!("notices of {} go to {}", name.as_str(), email.as_str()),
                None => format!("{} gets no notices", name.as_str()),
            };
            accounts(settings, false)?
                .set_email(&name, email)
                .await
                .map_err(err)?;
            Ok(said)
        }
        Command::User(UserCommand::Customer {
            name,
            customer,
            none: _,
        }) => {
            let name = UserName::parse(&name).map_err(err)?;
            let customer = customer
                .as_deref()
                .map(crate::facilities::customer_id)
                .transpose()
                .map_err(CliError)?;
            let said = match &customer {
                Some(customer) => format!("{} belongs to customer {customer}", name.as_str()),
                None => format!("{} belongs to no customer", name.as_str()),
            };
            accounts(settings, false)?
                .set_customer(&name, customer)
                .await
                .map_err(err)?;
            Ok(said)
        }
        Command::User(UserCommand::MagicLinks { name, setting }) => {
            let name = UserName::parse(&name).map_err(err)?;
            let issue = setting == "on";
            accounts(settings, false)?
                .set_magic_links(&name, issue)
                .await
                .map_err(err)?;
            Ok(if issue {
                format!("mementos of {} come with a magic link", name.as_str())
            } else {
                format!("mementos of {} come without a magic link", name.as_str())
            })
        }
        Command::User(UserCommand::List { json }) => {
            let users = accounts(settings, false)?.list().await.map_err(err)?;
            if json {
                return serde_json::to_string_pretty(&users).map_err(err);
            }
            let mut out = format!(
                "{:<24} {:<16} {:<32} {:<5} {}",
                "NAME", "CUSTOMER", "EMAIL", "SEAL", "CREATED"
            );
            for u in users {
                out.push_str(&format!(
                    "\n{:<24} {:<16} {:<32} {:<5} {}",
                    u.name,
                    u.customer.unwrap_or_else(|| "-".into()),
                    u.email.unwrap_or_else(|| "-".into()),
                    if u.seal { "yes" } else { "no" },
                    u.created_at.to_rfc3339()
                ));
            }
            Ok(out)
        }
        Command::User(UserCommand::Remove { name }) => {
            let name = UserName::parse(&name).map_err(err)?;
            accounts(settings, false)?
                .remove(&name)
                .await
                .map_err(err)?;
            Ok(format!("user {} removed", name.as_str()))
        }
        Command::Seal(SealCommand::Deposit { name, key_file }) => {
            let name = UserName::parse(&name).map_err(err)?;
            let key = match key_file {
                Some(path) => Some(std::fs::read(&path).map_err(|e| {
                    CliError(format!("cannot read key file {}: {e}", path.display()))
                })?),
                None => None,
            };
            let public_key = accounts(settings, false)?
                .deposit_seal(&name, key)
                .await
                .map_err(err)?;
            Ok(format!(
                "seal deposited for {}; public key (Ed25519, base64): {}",
                name.as_str(),
                STANDARD.encode(public_key)
            ))
        }
        Command::Facility(command) => run_facility(settings, command).await,
        Command::Customer(command) => run_customer(settings, command).await,
        Command::Certificate(command) => command.run(settings).await,
        Command::Mailbox(command) => mailbox::run_mailbox(settings, command).await,
    }
}
