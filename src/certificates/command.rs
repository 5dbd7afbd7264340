//! `meldewerk certificate …`: deposit, list and remove facilities' certificates with the server
//! stopped, on its data directory (like `meldewerk seal`).

use std::io::Read;
use std::path::PathBuf;

use clap::Subcommand;

use meldewerk_storage::{Bsnr, Environment};

use super::{CertificateError, MAX_PKCS12_BYTES};
use crate::cli::{err, master_key, open_store, read_stdin, CliError};
use crate::configuration::Settings;

/// `meldewerk certificate …`
#[derive(Debug, Subcommand)]
pub enum CertificateCommand {
    /// Deposit a facility's certificate (PKCS#12 file and its passphrase) for a site and
    /// environment, in place of the one there was.
    Deposit {
        /// The facility's BSNR (9 digits).
        bsnr: String,
        /// `test` or `production`.
        #[arg(long)]
        environment: String,
        /// The PKCS#12 file (.p12, .pfx) with the private key and certificate chain.
        #[arg(long, value_name = "FILE")]
        file: PathBuf,
        /// Read the file's passphrase from standard input (required; it is not kept).
        #[arg(long)]
        passphrase_stdin: bool,
    },
    /// List deposited certificates (never key material).
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Remove the certificate of a site and environment.
    Remove {
        /// The facility's BSNR (9 digits).
        bsnr: String,
        /// `test` or `production`.
        #[arg(long)]
        environment: String,
    },
}

impl CertificateCommand {
    /// Runs the command and returns what to print.
    pub(crate) async fn run(self, settings: &Settings) -> Result<String, CliError> {
        match self {
            CertificateCommand::Deposit {
                bsnr,
                environment,
                file,
                passphrase_stdin,
            } => {
                let (bsnr, environment) = site(&bsnr, &environment)?;
                let file = read_file(&file)?;
                let passphrase = read_passphrase(passphrase_stdin)?;
                let store = open_store(settings, true)?;
                let master = master_key(settings)?;
                let deposited =
                    super::deposit(&*store, &master, &bsnr, environment, file, passphrase)
                        .await
                        .map_err(err)?;
                let summary = deposited.summary;
                Ok(format!(
                    "certificate {} for BSNR {bsnr} ({environment}) {}; valid until {}, SHA-256 {}",
                    summary.subject,
                    if deposited.replaced {
                        "deposited in place of the previous one"
                    } else {
                        "deposited"
                    },
                    summary.not_after.to_rfc3339(),
                    summary.fingerprint_sha256
                ))
            }
            CertificateCommand::List { json } => {
                let store = open_store(settings, false)?;
                let all = super::list(&*store).await.map_err(err)?;
                if json {
                    return serde_json::to_string_pretty(&all).map_err(err);
                }
                let mut out = format!(
                    "{:<9} {:<10} {:<25} {:<64} SUBJECT",
                    "BSNR", "ENV", "VALID UNTIL", "SHA-256"
                );
                for c in all {
                    out.push_str(&format!(
                        "\n{:<9} {:<10} {:<25} {:<64} {}",
                        c.bsnr,
                        c.environment,
                        c.not_after.to_rfc3339(),
                        c.fingerprint_sha256,
                        c.subject
                    ));
                }
                Ok(out)
            }
            CertificateCommand::Remove { bsnr, environment } => {
                let (bsnr, environment) = site(&bsnr, &environment)?;
                let store = open_store(settings, false)?;
                super::remove(&*store, &bsnr, environment)
                    .await
                    .map_err(err)?;
                Ok(format!(
                    "certificate for BSNR {bsnr} ({environment}) removed"
                ))
            }
        }
    }
}

/// The site and environment of a command, both checked before anything is read.
fn site(bsnr: &str, environment: &str) -> Result<(Bsnr, Environment), CliError> {
    super::parse_site(bsnr, environment).map_err(|errors| {
        CliError(
            errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "),
        )
    })
}

/// The file, refused unread when it is larger than a PKCS#12 file may be.
fn read_file(path: &PathBuf) -> Result<Vec<u8>, CliError> {
    let cannot = |e: std::io::Error| CliError(format!("cannot read {}: {e}", path.display()));
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .map_err(cannot)?
        .take(MAX_PKCS12_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() > MAX_PKCS12_BYTES {
        return Err(err(CertificateError::TooLarge));
    }
    Ok(bytes)
}

/// The passphrase from standard input; a trailing line break is not part of it.
fn read_passphrase(flag: bool) -> Result<String, CliError> {
    let raw = read_stdin(flag, "passphrase")?;
    let passphrase = raw.strip_suffix('\n').unwrap_or(&raw);
    Ok(passphrase
        .strip_suffix('\r')
        .unwrap_or(passphrase)
        .to_owned())
}
