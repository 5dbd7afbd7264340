//! [`FhirClient`]: the service's side of the reporting system in `url` mode. It posts the
//! notification to `{url}/$process-notification` over TLS, presenting the facility's client
//! certificate ([`ClientIdentity`]), and reads what comes back: `200` with a `Parameters`
//! carrying the receipt is an acceptance, `422` (or a `Parameters`/`OperationOutcome` with
//! errors) a refusal, everything else a transient fault worth retrying.

use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use meldewerk_fhir::answer;
use meldewerk_storage::{Outcome, Receipt};
use reqwest::{Client, StatusCode, Url};
use rustls::ClientConfig;

use super::{DemisConfig, FHIR_JSON};
use crate::tls::{ClientIdentity, Credentials, MutualTls};
use crate::wire::client::{chain, client_builder, error_text, join, status_and_body};
use crate::wire::{check_url, HttpTransportSettings};
use crate::{Answer, Delivery, Finished, Protocol, Transport, TransportError};

/// The operation's path below the endpoint's base url.
pub const OPERATION_PATH: &str = "/$process-notification";

/// One certificate for every delivery, from the PEM files of `[transports.demis]`
/// (`client_certificate`, `client_key`, `ca`).
#[derive(Debug, Clone)]
pub struct PemIdentity {
    config: Arc<ClientConfig>,
}

impl PemIdentity {
    /// The identity the section names; `Err` says which key is missing or which file is wrong.
    pub fn from_config(config: &DemisConfig) -> Result<Self, String> {
        let (Some(certificate), Some(key), Some(ca)) =
            (&config.client_certificate, &config.client_key, &config.ca)
        else {
            return Err(
                "transports.demis.url is set: the reporting system authenticates the \
                        facility by its client certificate, so client_certificate, client_key \
                        (PEM files) and ca (PEM of the CA the endpoint's certificate chains to) \
                        are required"
                    .to_owned(),
            );
        };
        let files = MutualTls {
            prefix: "transports.demis.",
            certificate: ("client_certificate", certificate),
            key: ("client_key", key),
            ca: ("ca", ca),
        };
        Ok(PemIdentity {
            config: Arc::new(files.client()?),
        })
    }
}

/// The identity of `url` mode: for a delivery with a sender, the certificate deposited for it
/// (from `credentials`), trusting `ca`; for one without (messages stored before senders were
/// recorded, a module that sends as no facility), the PEM files' certificate when the section
/// names one. `Err` says which key is missing or which file is wrong.
pub fn identity(
    config: &DemisConfig,
    credentials: &dyn Credentials,
) -> Result<Arc<dyn ClientIdentity>, String> {
    let Some(ca) = &config.ca else {
        return Err(
            "transports.demis.url is set: the reporting system authenticates the \
                    facility by its client certificate, so ca (PEM of the CA the endpoint's \
                    certificate chains to) is required; the certificate presented is the one \
                    deposited for the sending facility (meldewerk certificate deposit), and \
                    client_certificate with client_key (PEM files) the one for deliveries that \
                    name no facility"
                .to_owned(),
        );
    };
    let files = match (&config.client_certificate, &config.client_key) {
        (None, None) => None,
        (Some(_), Some(_)) => Some(PemIdentity::from_config(config)?),
        _ => {
            return Err(
                "transports.demis.client_certificate and client_key go together: set \
                        both, or neither to present only deposited certificates"
                    .to_owned(),
            )
        }
    };
    let roots = crate::tls::roots("transports.demis.ca", ca)?;
    Ok(Arc::new(SenderIdentity {
        deposited: credentials.deposited(roots),
        files,
    }))
}

/// Presents the certificate deposited for a delivery's sender; a delivery without a sender
/// goes with the PEM files' certificate, if any.
pub struct SenderIdentity {
    deposited: Arc<dyn ClientIdentity>,
    files: Option<PemIdentity>,
}

#[async_trait]
impl ClientIdentity for SenderIdentity {
    async fn client_config(
        &self,
        delivery: &Delivery,
    ) -> Result<Arc<ClientConfig>, TransportError> {
        match (&delivery.sender, &self.files) {
            (Some(_), _) => self.deposited.client_config(delivery).await,
            (None, Some(files)) => files.client_config(delivery).await,
            (None, None) => Err(TransportError::Refused(
                "the message names no sending facility, and transports.demis has no \
                 client_certificate for such messages: nothing was sent"
                    .into(),
            )),
        }
    }
}

#[async_trait]
impl ClientIdentity for PemIdentity {
    async fn client_config(
        &self,
        _delivery: &Delivery,
    ) -> Result<Arc<ClientConfig>, TransportError> {
        Ok(Arc::clone(&self.config))
    }
}

/// A [`Transport`] to the reporting system's `$process-notification` at a url. Every answer is
/// final ([`Answer::Finished`]) or a transient error.
pub struct FhirClient {
    name: String,
    operation: Url,
    settings: HttpTransportSettings,
    identity: Arc<dyn ClientIdentity>,
    /// An HTTP client per TLS configuration (per facility) in use: building one per delivery
    /// would cost a TLS handshake each.
    clients: Mutex<Vec<(Arc<ClientConfig>, Client)>>,
}

impl std::fmt::Debug for FhirClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FhirClient")
            .field("name", &self.name)
            .field("operation", &self.operation.as_str())
            .finish_non_exhaustive()
    }
}

impl FhirClient {
    /// A client called `name` posting to `{settings.url}/$process-notification` with the
    /// certificates of `identity`.
    pub fn new(
        name: &str,
        settings: &HttpTransportSettings,
        identity: Arc<dyn ClientIdentity>,
    ) -> Result<Self, String> {
        let base = check_url(&settings.url)?;
        // Notifications carry patients' health data, and the facility authenticates by its
        // client certificate: both need TLS.
        if base.scheme() != "https" {
            return Err(format!(
                "{:?} must start with https://: notifications carry health data, and the \
                 facility's certificate is presented over TLS only",
                settings.url
            ));
        }
        Ok(FhirClient {
            name: name.to_owned(),
            operation: join(&base, OPERATION_PATH),
            settings: settings.clone(),
            identity,
            clients: Mutex::new(Vec::new()),
        })
    }

    /// The HTTP client for `tls`, built once per TLS configuration. A configuration the
    /// identity no longer holds (a certificate deposited anew) is dropped with its client.
    fn client(&self, tls: Arc<ClientConfig>) -> Result<Client, TransportError> {
        let mut cached = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, client)) = cached.iter().find(|(config, _)| Arc::ptr_eq(config, &tls)) {
            return Ok(client.clone());
        }
        // Held here and by `tls` only: nobody hands it out any more.
        cached.retain(|(config, _)| Arc::strong_count(config) > 1);
        let client = client_builder(&self.settings)
            .use_preconfigured_tls((*tls).clone())
            .build()
            .map_err(|e| {
                TransportError::Transient(format!("cannot build the HTTP client: {}", chain(&e)))
            })?;
        cached.push((tls, client.clone()));
        Ok(client)
    }
}

#[async_trait]
impl Transport for FhirClient {
    fn name(&self) -> &str {
        &self.name
    }

    async fn submit(&self, delivery: Delivery) -> Result<Answer, TransportError> {
        let client = self.client(self.identity.client_config(&delivery).await?)?;
        let url = &self.operation;
        let mut request = client
            .post(url.clone())
            .header(reqwest::header::CONTENT_TYPE, FHIR_JSON)
            .header(reqwest::header::ACCEPT, FHIR_JSON);
        for (header, value) in [
            (Protocol::IDEMPOTENCY_KEY_HEADER, &delivery.idempotency_key),
            (Protocol::MODULE_HEADER, &delivery.module),
            (Protocol::REPORT_ID_HEADER, &delivery.report_id),
        ] {
            // Only what a header can carry; the simulator falls back to the bundle's own ids.
            if let Ok(value) = reqwest::header::HeaderValue::from_str(value) {
                request = request.header(header, value);
            }
        }
        let sent = request.body(delivery.body).send().await;
        let (status, body) = status_and_body(url, sent).await?;
        let refused = |reason: String| Ok(Answer::Finished(Finished::refused(reason)));
        match (status, answer::read(&body)) {
            (StatusCode::OK, Ok(answer::Answer::Accepted(receipt))) => {
                Ok(Answer::Finished(Finished {
                    transport_ref: None,
                    outcome: Outcome::Success {
                        receipt: Receipt {
                            media_type: receipt.content_type,
                            bytes: receipt.document,
                        },
                        portal: None,
                    },
                    duplicate: false,
                }))
            }
            (
                StatusCode::OK | StatusCode::UNPROCESSABLE_ENTITY,
                Ok(answer::Answer::Rejected(reason)),
            ) => refused(reason),
            (StatusCode::UNPROCESSABLE_ENTITY, _) => refused(format!(
                "refused by the reporting system (HTTP {status}){}",
                error_text(&body).map_or_else(String::new, |text| format!(": {text}"))
            )),
            (StatusCode::OK, Err(e)) => Err(TransportError::Transient(format!(
                "{url}: unusable answer ({e})"
            ))),
            // The issues of an `OperationOutcome` the endpoint answered with, else its text.
            (_, said) => Err(TransportError::Transient(format!(
                "{url}: HTTP {status}{}",
                match said {
                    Ok(answer::Answer::Rejected(reason)) => Some(reason),
                    _ => error_text(&body),
                }
                .map_or_else(String::new, |text| format!(": {text}"))
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An identity never asked: the client is refused before it could be.
    struct Unused;

    #[async_trait::async_trait]
    impl ClientIdentity for Unused {
        async fn client_config(&self, _: &Delivery) -> Result<Arc<ClientConfig>, TransportError> {
            Err(TransportError::Transient("not asked".into()))
        }
    }

    #[test]
    fn notifications_go_over_tls_only() {
        let settings = |url: &str| HttpTransportSettings {
            url: url.into(),
            connect_timeout: std::time::Duration::from_secs(1),
            request_timeout: std::time::Duration::from_secs(1),
        };
        let refused = FhirClient::new("demis", &settings("http://demis.example"), Arc::new(Unused))
            .err()
            .unwrap();
        assert!(refused.contains("must start with https://"), "{refused}");
        assert!(FhirClient::new(
            "demis",
            &settings("https://demis.example/fhir"),
            Arc::new(Unused)
        )
        .is_ok());
    }
}
