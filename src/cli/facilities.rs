//! `meldewerk facility …` and `meldewerk customer scope …`: the facility registry and the
//! customers' scopes on a stopped server's data directory, as `meldewerk user …` works.

use std::collections::BTreeSet;
use std::sync::Arc;

use chrono::Utc;
use clap::Subcommand;
use meldewerk_storage::{Bsnr, CustomerScope, Facility, Ik, Store};

use super::store::{err, open_store, CliError};
use crate::configuration::Settings;
use crate::facilities::{customer_id, FacilityInput, FieldNames, Given};

/// How the command line names a facility's values in its messages.
const OPTIONS: FieldNames = FieldNames {
    name: "--name",
    street: "--street",
    postal_code: "--postal-code",
    city: "--city",
    country: "--country",
    ik: "--ik",
    missing: "is required",
};

/// A facility's values as options; `add` needs each but `--country` (default `DE`), `set`
/// changes those given.
#[derive(Debug, clap::Args)]
pub struct FacilityValues {
    /// Name of the facility.
    #[arg(long)]
    name: Option<String>,
    /// Street and house number.
    #[arg(long)]
    street: Option<String>,
    /// Postal code (five digits in Germany).
    #[arg(long)]
    postal_code: Option<String>,
    /// City.
    #[arg(long)]
    city: Option<String>,
    /// Country, ISO 3166-1 alpha-2 [add: default DE].
    #[arg(long)]
    country: Option<String>,
    /// Institution code (IK), 9 digits.
    #[arg(long)]
    ik: Option<String>,
}

/// `meldewerk facility …`
#[derive(Debug, Subcommand)]
pub enum FacilityCommand {
    /// Register a facility under its BSNR (9 digits); active unless --inactive.
    Add {
        /// Betriebsstättennummer, 9 digits.
        bsnr: String,
        /// The facility's values.
        #[command(flatten)]
        values: FacilityValues,
        /// Register it deactivated: no report may name it until it is activated.
        #[arg(long)]
        inactive: bool,
    },
    /// Change the given values of a registered facility.
    Set {
        /// Betriebsstättennummer, 9 digits.
        bsnr: String,
        /// The values to change.
        #[command(flatten)]
        values: FacilityValues,
    },
    /// List the facilities by BSNR.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Show one facility as JSON.
    Show {
        /// Betriebsstättennummer, 9 digits.
        bsnr: String,
    },
    /// Deactivate a facility: reports naming it are refused; it stays registered.
    Deactivate {
        /// Betriebsstättennummer, 9 digits.
        bsnr: String,
    },
    /// Activate a deactivated facility.
    Activate {
        /// Betriebsstättennummer, 9 digits.
        bsnr: String,
    },
    /// Remove a facility from the registry.
    Remove {
        /// Betriebsstättennummer, 9 digits.
        bsnr: String,
    },
}

/// `meldewerk customer …`
#[derive(Debug, Subcommand)]
pub enum CustomerCommand {
    /// Set, clear or show the institution codes (IK) a customer's API users may report for.
    #[command(
        group(clap::ArgGroup::new("what").required(true).args(["iks", "show", "none"])),
        override_usage = "meldewerk customer scope <CUSTOMER> (--ik IK... | --none | --show)"
    )]
    Scope {
        /// The customer id, as the users' `customer`.
        customer: String,
        /// An institution code the customer may use (repeat the option for more); replaces
        /// the scope.
        #[arg(long = "ik", value_name = "IK")]
        iks: Vec<String>,
        /// Clear the scope: the customer may report for no facility.
        #[arg(long)]
        none: bool,
        /// Print the scope.
        #[arg(long)]
        show: bool,
    },
}

fn bsnr_of(text: &str) -> Result<Bsnr, CliError> {
    Bsnr::parse(text).map_err(|e| CliError(format!("invalid BSNR {text:?}: {e}")))
}

fn invalid(errors: Vec<String>) -> CliError {
    CliError(format!("invalid facility: {}", errors.join("; ")))
}

async fn existing(store: &Arc<dyn Store>, bsnr: &Bsnr) -> Result<Facility, CliError> {
    store
        .facility(bsnr)
        .await
        .map_err(err)?
        .ok_or_else(|| CliError(format!("there is no facility {bsnr}")))
}

/// One line of `facility list`.
fn line(facility: &Facility) -> String {
    format!(
        "{:<10} {:<10} {:<8} {:<32} {}",
        facility.bsnr,
        facility.ik,
        if facility.active { "yes" } else { "no" },
        facility.name,
        facility.address.city
    )
}

/// Runs a facility command and returns what to print.
pub(crate) async fn run_facility(
    settings: &Settings,
    command: FacilityCommand,
) -> Result<String, CliError> {
    match command {
        FacilityCommand::Add {
            bsnr,
            values,
            inactive,
        } => {
            let parsed = bsnr_of(&bsnr)?;
            let store = open_store(settings, false)?;
            if store.facility(&parsed).await.map_err(err)?.is_some() {
                return Err(CliError(format!(
                    "facility {parsed} exists already; change it with `meldewerk facility set`"
                )));
            }
            let input = FacilityInput {
                name: values.name.as_deref().into(),
                street: values.street.as_deref().into(),
                postal_code: values.postal_code.as_deref().into(),
                city: values.city.as_deref().into(),
                country: Given::Text(values.country.as_deref().unwrap_or("DE")),
                ik: values.ik.as_deref().into(),
                active: !inactive,
            };
            let mut errors = Vec::new();
            let facility = input
                .check(Some(parsed), &OPTIONS, Utc::now(), &mut errors)
                .ok_or_else(|| invalid(errors))?;
            store.put_facility(facility).await.map_err(err)?;
            Ok(format!("facility {bsnr} added"))
        }
        FacilityCommand::Set { bsnr, values } => {
            let parsed = bsnr_of(&bsnr)?;
            let given = [
                &values.name,
                &values.street,
                &values.postal_code,
                &values.city,
                &values.country,
                &values.ik,
            ];
            if given.iter().all(|value| value.is_none()) {
                return Err(CliError(
                    "give at least one of --name, --street, --postal-code, --city, --country, --ik"
                        .into(),
                ));
            }
            let store = open_store(settings, false)?;
            let old = existing(&store, &parsed).await?;
            let ik = old.ik.to_string();
            let or_old = |given: &Option<String>, old: &'_ str| -> String {
                given.clone().unwrap_or_else(|| old.to_owned())
            };
            let name = or_old(&values.name, &old.name);
            let street = or_old(&values.street, &old.address.street);
            let postal_code = or_old(&values.postal_code, &old.address.postal_code);
            let city = or_old(&values.city, &old.address.city);
            let country = or_old(&values.country, &old.address.country);
            let ik = or_old(&values.ik, &ik);
            let input = FacilityInput {
                name: Given::Text(&name),
                street: Given::Text(&street),
                postal_code: Given::Text(&postal_code),
                city: Given::Text(&city),
                country: Given::Text(&country),
                ik: Given::Text(&ik),
                active: old.active,
            };
            let mut errors = Vec::new();
            let facility = input
                .check(Some(parsed), &OPTIONS, Utc::now(), &mut errors)
                .ok_or_else(|| invalid(errors))?;
            store.put_facility(facility).await.map_err(err)?;
            Ok(format!("facility {bsnr} changed"))
        }
        FacilityCommand::List { json } => {
            let store = open_store(settings, false)?;
            let mut all: Vec<Facility> = Vec::new();
            loop {
                let page = store
                    .facilities(all.last().map(|f| &f.bsnr), 1000)
                    .await
                    .map_err(err)?;
                if page.is_empty() {
                    break;
                }
                all.extend(page);
            }
            if json {
                return serde_json::to_string_pretty(&all).map_err(err);
            }
            let mut out = format!(
                "{:<10} {:<10} {:<8} {:<32} CITY",
                "BSNR", "IK", "ACTIVE", "NAME"
            );
            for facility in &all {
                out.push('\n');
                out.push_str(&line(facility));
            }
            Ok(out)
        }
        FacilityCommand::Show { bsnr } => {
            let parsed = bsnr_of(&bsnr)?;
            let store = open_store(settings, false)?;
            serde_json::to_string_pretty(&existing(&store, &parsed).await?).map_err(err)
        }
        FacilityCommand::Deactivate { bsnr } => set_active(settings, &bsnr, false).await,
        FacilityCommand::Activate { bsnr } => set_active(settings, &bsnr, true).await,
        FacilityCommand::Remove { bsnr } => {
            let parsed = bsnr_of(&bsnr)?;
            let store = open_store(settings, false)?;
            if !store.remove_facility(&parsed).await.map_err(err)? {
                return Err(CliError(format!("there is no facility {parsed}")));
            }
            Ok(format!("facility {parsed} removed"))
        }
    }
}

async fn set_active(settings: &Settings, bsnr: &str, active: bool) -> Result<String, CliError> {
    let parsed = bsnr_of(bsnr)?;
    let store = open_store(settings, false)?;
    let old = existing(&store, &parsed).await?;
    store
        .put_facility(Facility {
            active,
            updated_at: Utc::now(),
            ..old
        })
        .await
        .map_err(err)?;
    let state = if active {
        "activated: reports may name it"
    } else {
        "deactivated: reports naming it are refused"
    };
    Ok(format!("facility {parsed} {state}"))
}

/// Runs a customer command and returns what to print.
pub(crate) async fn run_customer(
    settings: &Settings,
    command: CustomerCommand,
) -> Result<String, CliError> {
    let CustomerCommand::Scope {
        customer,
        iks,
        none: _,
        show,
    } = command;
    let customer = customer_id(&customer).map_err(CliError)?;
    let store = open_store(settings, false)?;
    if !show {
        let mut parsed = BTreeSet::new();
        for ik in &iks {
            let ik = Ik::parse(ik).map_err(|e| CliError(format!("invalid IK {ik:?}: {e}")))?;
            parsed.insert(ik);
        }
        store
            .set_customer_scope(CustomerScope {
                customer: customer.clone(),
                iks: parsed,
            })
            .await
            .map_err(err)?;
    }
    let scope = store.customer_scope(&customer).await.map_err(err)?;
    Ok(scope_line(&customer, scope.as_ref()))
}

/// What the command line says of a customer's scope.
fn scope_line(customer: &str, scope: Option<&CustomerScope>) -> String {
    match scope {
        Some(scope) if !scope.iks.is_empty() => {
            let iks: Vec<&str> = scope.iks.iter().map(Ik::as_str).collect();
            format!("customer {customer} may report for IK {}", iks.join(", "))
        }
        _ => format!("customer {customer} may report for no facility"),
    }
}
