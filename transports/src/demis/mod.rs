//! The `demis` transport: a simulated national infectious-disease reporting system (DEMIS)
//! taking FHIR R4 notifications the way its `$process-notification` operation does, and
//! deciding each at once.
//!
//! It checks a notification the way the real system would ([`meldewerk_fhir::check`]: bundle
//! type, the profile of its kind, the resources that kind requires and their references) and
//! knows its notifier facilities ([`DemisConfig`]: BSNR for notifications, location id and IK
//! for bed occupancy reports). A notification it refuses gets the reasons its `OperationOutcome`
//! would carry; one it accepts gets a receipt PDF, and the simulator records what its whole
//! `Parameters` answer is made of (see `records.rs`). Each idempotency key is registered once:
//! a repeat gets the original answer. Testers script it like the civil-registry office
//! ([`crate::script`]).
//!
//! As its own process (`meldewerk simulate demis`) it speaks the FHIR operation over TLS and
//! takes only facilities' client certificates ([`Protocol::FhirOperation`]); the service reaches
//! such a process, or the real endpoint, with [`FhirClient`].

mod client;
mod config;
mod records;

use std::path::Path;
use std::sync::{Arc, PoisonError, RwLock};

use async_trait::async_trait;
use chrono::Utc;
use meldewerk_fhir::answer::{self, AcceptedIds};
use meldewerk_fhir::check::{self, BundleKind, Received};
use meldewerk_fhir::RandomIds;
use meldewerk_storage::{Journal, Outcome, Packing, PendingAppend, Receipt};

pub use crate::tls::ClientIdentity;
pub use client::{identity, FhirClient, PemIdentity, SenderIdentity, OPERATION_PATH};
pub use config::DemisConfig;
pub use records::{AnswerJson, Decision, MadeOf, ReceivedNotification};

use crate::claims::Claims;
use crate::receipt::{render_receipt, sha256_hex};
use crate::received::{page, Delivered, ReceivedPage, ReceivedQuery, BY_MODULE, BY_REPORT};
use crate::script::Scripted;
use crate::simulated::{read_config, Protocol, Simulated, SimulatorError, TransportKind};
use crate::tls::MutualTls;
use crate::{Answer, Delivery, Finished, Transport, TransportError};
use records::{BY_IDEMPOTENCY_KEY, BY_TRANSPORT_REF};

/// The transport's name.
const NAME: &str = "demis";

/// The media type of a FHIR notification in JSON.
pub const FHIR_JSON: &str = "application/fhir+json";

/// Longest identifier of the sender's a refusal quotes: a forged one must not grow the answer.
const MAX_QUOTED_ID: usize = 40;

/// The reporting system in the registry of transports.
pub const KIND: TransportKind = TransportKind {
    name: NAME,
    authority: "the national infectious-disease reporting system (DEMIS), FHIR notifications, \
                decided at once",
    inbox: false,
    mailbox: false,
    simulate: |dir, config| {
        let config = read_config(NAME, config)?;
        Ok(Arc::new(Simulator::open(dir, config)?))
    },
    journals: &[""],
    simulator_defaults: || serde_json::to_value(DemisConfig::default()).unwrap_or_default(),
    connect: |kind, settings, config, credentials| {
        let config: DemisConfig = read_config(kind.name, config).map_err(|e| e.to_string())?;
        let identity = client::identity(&config, credentials)?;
        Ok(Arc::new(FhirClient::new(kind.name, settings, identity)?))
    },
    protocol: Protocol::FhirOperation {
        operation: "process-notification",
    },
    process_tls: |config| {
        let config: DemisConfig = read_config(NAME, config)?;
        let (Some(certificate), Some(key), Some(ca)) =
            (&config.server_certificate, &config.server_key, &config.ca)
        else {
            return Err(SimulatorError::Config(format!(
                "transports.{NAME}: `meldewerk simulate {NAME}` serves TLS only and requires \
                 facilities' client certificates, as the reporting system does: set \
                 server_certificate, server_key (PEM files of its own certificate) and ca (PEM \
                 of the CA client certificates must chain to)"
            )));
        };
        let files = MutualTls {
            prefix: "transports.demis.",
            certificate: ("server_certificate", certificate),
            key: ("server_key", key),
            ca: ("ca", ca),
        };
        files.server().map(Some).map_err(SimulatorError::Config)
    },
};

/// The simulated reporting system: a [`Transport`] named `demis` backed by its own durable
/// journal. Cheap to clone; clones share the journal and the configuration.
#[derive(Clone)]
pub struct Simulator {
    inner: Arc<Inner>,
}

struct Inner {
    journal: Journal<ReceivedNotification>,
    config: RwLock<DemisConfig>,
    /// The testers' script; empty means "as configured".
    script: Scripted,
    /// Idempotency keys being decided right now: a second copy of a notification waits for the
    /// first's answer and is then answered as its repeat.
    claims: Arc<Claims>,
}

impl Simulator {
    /// Opens (or creates) the reporting system's journal in `dir`. Fails with
    /// [`SimulatorError::Locked`] while another process has the same directory open.
    pub fn open(dir: &Path, config: DemisConfig) -> Result<Self, SimulatorError> {
        Ok(Simulator {
            inner: Arc::new(Inner {
                // Packed the quick way (LZ4): a notification's record and its body are packed on
                // the sender's synchronous way, where deflating them was a tenth of the time per
                // report and more.
                journal: Journal::open_packed(dir, NAME, Packing::Quick)?,
                config: RwLock::new(config),
                script: Scripted::default(),
                claims: Default::default(),
            }),
        })
    }

    /// The current behaviour settings.
    pub fn config(&self) -> DemisConfig {
        self.inner
            .config
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Changes the behaviour from now on; answers already given stay as they are.
    pub fn set_config(&self, config: DemisConfig) {
        *self
            .inner
            .config
            .write()
            .unwrap_or_else(PoisonError::into_inner) = config;
    }

    /// One page of what the reporting system received, oldest first, filtered by `query`.
    pub fn received_page(
        &self,
        query: &ReceivedQuery,
    ) -> Result<ReceivedPage<ReceivedNotification>, SimulatorError> {
        let journal = &self.inner.journal;
        let page = page(journal, query, |record: ReceivedNotification, seq| {
            record.made_whole(journal, seq)
        })?;
        Ok(page)
    }

    crate::simulated::journal_work!("simulated DEMIS");
}

impl Simulated for Simulator {
    crate::simulated::simulated_basics!();

    fn recorded_answer(
        &self,
        transport_ref: &str,
        receipt: Option<Receipt>,
    ) -> Result<Option<Vec<u8>>, SimulatorError> {
        let found = self.inner.journal.find(BY_TRANSPORT_REF, transport_ref)?;
        let Some((_, record)) = found else {
            return Ok(None);
        };
        // The answer alone: its body is not needed here. The receipt the delivery was answered
        // with is the PDF its record renders, so it is taken as it is; anything else is not that
        // receipt (only a caller's mistake could hand one in), and the record renders its own.
        let rendered = receipt
            .filter(|receipt| receipt.media_type == answer::PDF)
            .map(|receipt| receipt.bytes);
        match record.answered_with(rendered)?.decision {
            Decision::Accepted { answer, .. } => Ok(Some(answer.as_bytes().to_vec())),
            Decision::Refused { .. } => Ok(None),
        }
    }
}

crate::simulated::debug_shows_config!("demis::Simulator");

#[async_trait]
impl Transport for Simulator {
    fn name(&self) -> &str {
        NAME
    }

    async fn submit(&self, delivery: Delivery) -> Result<Answer, TransportError> {
        let delivery = completed(delivery);
        let by_key = (&self.inner.journal, BY_IDEMPOTENCY_KEY);
        // The checks as blocking work; the wait for the disk holds no thread. Once begun, the
        // record is written even if this call is dropped meanwhile.
        let decide = |delivery| async move {
            match self
                .blocking(move |inner| inner.begin_decide(delivery))
                .await?
            {
                Begun::Repeat(finished) => Ok(finished),
                Begun::New { pending, receipt } => {
                    let (_, record) = pending.durable().await?;
                    decided(record, receipt)
                }
            }
        };
        let latency_ms = self.config().latency_ms;
        let script = &self.inner.script;
        script
            .answer_at_once("simulated DEMIS", delivery, by_key, latency_ms, decide)
            .await
    }
}

/// How [`Inner::begin_decide`] left a notification.
enum Begun {
    /// A repeat, answered as the notification was the first time.
    Repeat(Finished),
    /// A new notification, decided and on its way to disk, with the receipt of an accepted one.
    New {
        pending: Box<PendingAppend<ReceivedNotification>>,
        receipt: Option<Vec<u8>>,
    },
}

impl Inner {
    /// Answers a repeat with the original answer, or checks a new notification and queues its
    /// record with what the answer is made of. The caller answers once the record is on disk:
    /// once the sender holds an answer, the reporting system remembers it across any crash. The
    /// claim on the key travels with the record until it is committed, so that a second copy is
    /// answered as its repeat.
    fn begin_decide(&self, delivery: Delivery) -> Result<Begun, TransportError> {
        let claim = self.claims.claim(&delivery.idempotency_key);
        if let Some((seq, mut record)) = self
            .journal
            .find(BY_IDEMPOTENCY_KEY, &delivery.idempotency_key)?
        {
            // Counting up is a read-modify-write of the record; the claim makes it the only one.
            record.delivered.count_repeat();
            self.journal.replace(seq, &record)?;
            tracing::info!(
                transport_ref = %record.transport_ref,
                repeats = record.delivered.repeat_submissions,
                "simulated DEMIS: repeat submission"
            );
            let record = record.with_answer()?;
            return finished(&record, true).map(Begun::Repeat);
        }

        let config = self
            .config
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let transport_ref = uuid::Uuid::new_v4().to_string();
        let checked = examine(&delivery, &config);
        let (bundle_profile, bundle_id, notification_id) = match &checked {
            Ok(received) => (
                Some(received.kind.profile_name().to_owned()),
                Some(received.bundle_id.clone()),
                Some(received.notification_id.clone()),
            ),
            Err(_) => (None, None, None),
        };
        let decision = match checked {
            // Recorded as what the answer is made of: every reader writes it from that.
            Ok(received) => Decision::Accepted {
                answer: AnswerJson::unwritten(),
                made_of: Some(MadeOf {
                    ids: AcceptedIds::draw(&mut RandomIds),
                    authority: config.authority_name.clone(),
                    report_type: format!(
                        "{} ({})",
                        kind_in_words(received.kind),
                        received.kind.profile_name()
                    ),
                    sender: notifier_in_words(&received),
                }),
            },
            Err(reason) => Decision::Refused { reason },
        };
        // The body goes into the journal once, apart from the record (its attachment). The time
        // is stamped again as the journal numbers the record.
        let (delivered, body) = Delivered::of(delivery, Utc::now());
        let record = ReceivedNotification {
            delivered,
            transport_ref,
            bundle_profile,
            bundle_id,
            notification_id,
            decision,
        };
        let (idempotency_key, transport_ref) = (
            record.delivered.idempotency_key.clone(),
            record.transport_ref.clone(),
        );
        let (report_id, module) = (
            record.delivered.report_id.clone(),
            record.delivered.module.clone(),
        );
        let pending = self.journal.queue_attached_with(
            &body,
            &[
                (BY_IDEMPOTENCY_KEY, &idempotency_key),
                (BY_TRANSPORT_REF, &transport_ref),
            ],
            &[(BY_REPORT, &report_id), (BY_MODULE, &module)],
            // Stamped as it is numbered, so that the received log's times grow with its
            // numbers (`since` pages by them), also for deliveries checked side by side.
            || ReceivedNotification {
                delivered: Delivered {
                    received_at: Utc::now(),
                    ..record.delivered
                },
                ..record
            },
            // Logged where it is written, also for a delivery whose sender stopped waiting.
            move |_, record| {
                tracing::info!(
                    report_id = %record.delivered.report_id,
                    transport_ref = %record.transport_ref,
                    accepted = matches!(record.decision, Decision::Accepted { .. }),
                    "simulated DEMIS: notification received"
                );
                drop(claim);
            },
        )?;
        // The receipt of an accepted notification, rendered from the record as every reader of
        // the journal renders it again (the same bytes), with the time the journal stamped, and
        // handed to the sender as it is; the answer around it is written only for those who
        // read it.
        let receipt_pdf = match &pending.record().decision {
            Decision::Accepted {
                made_of: Some(made_of),
                ..
            } => Some(render_receipt(&pending.record().receipt_fields(made_of))),
            _ => None,
        };
        Ok(Begun::New {
            pending: Box::new(pending),
            receipt: receipt_pdf,
        })
    }
}

/// The answer to a new notification, once its record is on disk: the receipt it was rendered
/// with for an accepted one, the reasons for a refused one.
fn decided(
    record: ReceivedNotification,
    receipt: Option<Vec<u8>>,
) -> Result<Finished, TransportError> {
    match receipt {
        Some(bytes) => Ok(Finished {
            transport_ref: Some(record.transport_ref),
            outcome: Outcome::Success {
                receipt: Receipt {
                    media_type: answer::PDF.to_owned(),
                    bytes,
                },
                portal: None,
            },
            duplicate: false,
        }),
        None => finished(&record, false),
    }
}

/// The answer a record stands for.
fn finished(record: &ReceivedNotification, duplicate: bool) -> Result<Finished, TransportError> {
    Ok(match &record.decision {
        Decision::Accepted { .. } => Finished {
            transport_ref: Some(record.transport_ref.clone()),
            outcome: Outcome::Success {
                receipt: record.receipt()?.ok_or_else(|| {
                    TransportError::Transient("simulated DEMIS: receipt missing".to_owned())
                })?,
                portal: None,
            },
            duplicate,
        },
        Decision::Refused { reason } => Finished {
            transport_ref: None,
            outcome: Outcome::Failure {
                reason: reason.clone(),
            },
            duplicate,
        },
    })
}

/// The delivery with what its sender left out taken from the notification itself, as a bare
/// FHIR client posting to `$process-notification` sends no idempotency key or report id: the
/// key is the bundle's `NotificationBundleId` (else the body's SHA-256), the report id the
/// notification's `NotificationId`, the message id the bundle id.
fn completed(mut delivery: Delivery) -> Delivery {
    if !delivery.idempotency_key.is_empty()
        && !delivery.report_id.is_empty()
        && !delivery.message_uuid.is_empty()
    {
        return delivery;
    }
    let ids = check::check(&delivery.body)
        .ok()
        .map(|r| (r.bundle_id, r.notification_id));
    if delivery.idempotency_key.is_empty() {
        delivery.idempotency_key = match &ids {
            Some((bundle_id, _)) => format!("bundle:{bundle_id}"),
            None => format!("sha256:{}", sha256_hex(&delivery.body)),
        };
    }
    if let Some((bundle_id, notification_id)) = ids {
        if delivery.report_id.is_empty() {
            delivery.report_id = notification_id;
        }
        if delivery.message_uuid.is_empty() {
            delivery.message_uuid = bundle_id;
        }
    }
    delivery
}

/// The reporting system's checks of one notification: its media type, the FHIR checks, and a
/// notifier it knows. `Err` carries every reason, one per line.
fn examine(delivery: &Delivery, config: &DemisConfig) -> Result<Received, String> {
    let media_type = delivery
        .content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    if media_type != FHIR_JSON && media_type != "application/json" {
        return Err(format!(
            "Content-Type {} is not taken: notifications are {FHIR_JSON}",
            cut(&media_type)
        ));
    }
    let received = check::check(&delivery.body).map_err(|refused| refused.reasons.join("\n"))?;
    unknown_notifier(&received, config).map_or(Ok(received), Err)
}

/// Why the notifier is not a facility the reporting system knows, if it is not.
fn unknown_notifier(received: &Received, config: &DemisConfig) -> Option<String> {
    let ids = &received.notifier;
    let known = |list: &[String], id: &str| list.iter().any(|k| k == id);
    match received.kind {
        BundleKind::Laboratory | BundleKind::Disease => match &ids.bsnr {
            None => Some("the notifier (Composition.author) names no BSNR".to_owned()),
            Some(bsnr) if !known(&config.known_bsnr, bsnr) => Some(format!(
                "the notifier's BSNR {} is not a facility registered with the reporting system",
                cut(bsnr)
            )),
            Some(_) => None,
        },
        BundleKind::BedOccupancy => {
            let mut reasons = Vec::new();
            match &ids.location_id {
                None => reasons.push("the report names no hospital location id".to_owned()),
                Some(id) if !known(&config.known_location_ids, id) => reasons.push(format!(
                    "the hospital location {} is not registered with the reporting system",
                    cut(id)
                )),
                Some(_) => {}
            }
            if let Some(ik) = ids.ik.as_deref().filter(|ik| !known(&config.known_ik, ik)) {
                reasons.push(format!(
                    "the institution code (IK) {} is not registered with the reporting system",
                    cut(ik)
                ));
            }
            (!reasons.is_empty()).then(|| reasons.join("\n"))
        }
    }
}

/// `id` cut to [`MAX_QUOTED_ID`] characters.
fn cut(id: &str) -> String {
    let mut cut: String = id.chars().take(MAX_QUOTED_ID).collect();
    if cut.len() < id.len() {
        cut.push('…');
    }
    cut
}

/// The kind of notification in German words, for the receipt.
fn kind_in_words(kind: BundleKind) -> &'static str {
    match kind {
        BundleKind::Laboratory => "Erregernachweismeldung",
        BundleKind::Disease => "Krankheitsmeldung",
        BundleKind::BedOccupancy => "Bettenbelegungsbericht",
    }
}

/// Who notified, for the receipt.
fn notifier_in_words(received: &Received) -> String {
    let ids = &received.notifier;
    let mut words = Vec::new();
    if let Some(bsnr) = &ids.bsnr {
        words.push(format!("BSNR {bsnr}"));
    }
    if let Some(location) = &ids.location_id {
        words.push(format!("Standort {location}"));
    }
    if let Some(ik) = &ids.ik {
        words.push(format!("IK {ik}"));
    }
    words.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_ids_are_cut() {
        assert_eq!(cut("123"), "123");
        let long = "9".repeat(100);
        assert_eq!(cut(&long).chars().count(), MAX_QUOTED_ID + 1);
    }
}
