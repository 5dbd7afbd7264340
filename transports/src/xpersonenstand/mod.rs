//! The `xpersonenstand` transport: a simulated Standesamt (civil-registry office) receiving
//! XPersonenstand messages.
//!
//! It behaves like the real office as far as the engine can tell: it verifies the detached
//! Ed25519 signature, accepts each idempotency key exactly once, decides after a delay, drops the
//! acknowledgement (with a receipt PDF) or the refusal into the portal's inbox ([`inbox`]), and
//! hands the inbox out in batches since a cursor. Unlike the engine it keeps its own durable
//! journal, so that after the engine crashed and retried, a test can still ask the office what it
//! really received and how often.
//!
//! Testers change its behaviour at run time with a [`Script`] (latency, transient faults, panics,
//! rejections, delayed or lost acknowledgements; see [`crate::script`]); its configuration
//! ([`SimulatorConfig`]) is what it does when the script says nothing.

mod config;
mod inbox;
mod received;
mod records;

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use async_trait::async_trait;
use chrono::Utc;
use ring::digest;
use ring::signature::{UnparsedPublicKey, ED25519};

pub use config::SimulatorConfig;
pub use inbox::MAX_BATCH;
pub use records::{MessageHeader, ReceivedMessage, RecordedOutcome};

use crate::script::{Rule, Script, ScriptError, Scripted};
use crate::{
    Accepted, AckBatch, Answer, Delivery, Finished, Inbox, MessageSignature, Transport,
    TransportError,
};
use inbox::Schedule;
use meldewerk_storage::{Journal, PendingAppend};

use crate::received::{Delivered, BY_MODULE, BY_REPORT};
use crate::simulated::{read_config, Simulated, SimulatorError, TransportKind};
use records::{BY_IDEMPOTENCY_KEY, BY_TRANSPORT_REF, UNDECIDED};

/// Reason given for messages the simulated failure rate picked.
const SIMULATED_FAILURE: &str = "Standesamt: Nachricht abgelehnt (simuliert, Fehlerquote)";

/// The civil-registry office in the registry of transports.
pub const KIND: TransportKind = TransportKind {
    name: NAME,
    authority: "the civil-registry office (Standesamt), XPersonenstand messages, acknowledged \
                later through the portal's inbox",
    inbox: true,
    mailbox: false,
    simulate: |dir, config| {
        let config = read_config(NAME, config)?;
        Ok(Arc::new(Simulator::open(dir, config)?))
    },
    journals: &[""],
    simulator_defaults: || serde_json::to_value(SimulatorConfig::default()).unwrap_or_default(),
    connect: crate::wire::connect,
    protocol: crate::Protocol::Wire,
    process_tls: crate::simulated::plain_http,
};

/// The transport's name.
const NAME: &str = "xpersonenstand";

/// The simulated Standesamt: a [`Transport`] named `xpersonenstand` backed by its own durable
/// journal. Cheap to clone; clones share the journal and the configuration.
#[derive(Clone)]
pub struct Simulator {
    inner: Arc<Inner>,
}

struct Inner {
    journal: Journal<ReceivedMessage>,
    config: RwLock<SimulatorConfig>,
    /// The testers' script; empty means "as configured".
    script: Scripted,
    /// Serialises the journal's read-modify-write steps: a repeat counted up and a decision made
    /// on one record must not overwrite each other, and two concurrent fetches must not both
    /// decide an outcome. (Two concurrent submits of one key wait for each other on `claims`,
    /// and the journal refuses a second record under one idempotency key besides.)
    write: Mutex<()>,
    /// Idempotency keys being submitted right now (see `claims.rs`).
    claims: Arc<crate::claims::Claims>,
    /// The undecided messages by due time.
    schedule: Mutex<Schedule>,
}

impl Simulator {
    /// Opens (or creates) the office's journal in `dir`. Fails with [`SimulatorError::Locked`]
    /// while another process has the same directory open.
    pub fn open(dir: &Path, config: SimulatorConfig) -> Result<Self, SimulatorError> {
        let journal = Journal::open(dir, NAME)?;
        let schedule = Schedule::from_undecided(journal.find_all(UNDECIDED, "")?);
        Ok(Self {
            inner: Arc::new(Inner {
                journal,
                config: RwLock::new(config),
                script: Scripted::default(),
                write: Mutex::new(()),
                claims: Default::default(),
                schedule: Mutex::new(schedule),
            }),
        })
    }

    /// Every message the office accepted, in the order it received them.
    pub fn received(&self) -> Result<Vec<ReceivedMessage>, SimulatorError> {
        let journal = &self.inner.journal;
        journal
            .range(0, usize::MAX)?
            .into_iter()
            .map(|(seq, message)| Ok(message.whole(journal, seq)?))
            .collect()
    }

    /// The messages accepted for one report (normally one; more means the engine delivered the
    /// report under different idempotency keys). Reads only that report's records.
    pub fn received_by_report(
        &self,
        module: &str,
        report_id: &str,
    ) -> Result<Vec<ReceivedMessage>, SimulatorError> {
        let journal = &self.inner.journal;
        journal
            .find_all(BY_REPORT, report_id)?
            .into_iter()
            .filter(|(_, m)| m.delivered.module == module)
            .map(|(seq, message)| Ok(message.whole(journal, seq)?))
            .collect()
    }

    /// The current script; counted rules show what is left of their count.
    pub fn script(&self) -> Script {
        self.inner.script.script()
    }

    /// Replaces the script, after checking it (every problem at once in the error).
    pub fn set_script(&self, script: Script) -> Result<(), ScriptError> {
        self.inner.script.set(script)
    }

    /// Appends one rule to the script, after checking it.
    pub fn push_rule(&self, rule: Rule) -> Result<(), ScriptError> {
        self.inner.script.push(rule)
    }

    /// Clears the script: from now on the office behaves as configured.
    pub fn reset_script(&self) {
        self.inner.script.reset();
    }

    /// The current behaviour settings.
    pub fn config(&self) -> SimulatorConfig {
        self.inner.config()
    }

    /// Number of accepted messages the office has not decided on yet.
    pub fn undecided(&self) -> usize {
        self.inner.lock_schedule().len()
    }

    /// Changes the behaviour from now on. Outcomes already decided stay as they are.
    pub fn set_config(&self, config: SimulatorConfig) {
        *self
            .inner
            .config
            .write()
            .unwrap_or_else(PoisonError::into_inner) = config;
    }

    crate::simulated::journal_work!("simulated Standesamt");

    /// Stores a delivery, or answers it as the repeat it is. The checks and the numbering run as
    /// blocking work; the wait for the disk holds no thread, so the deliveries in flight share
    /// the journal's rounds however few blocking threads there are. The decision is scheduled
    /// on the journal's committing thread once the record is committed (see
    /// [`Inner::begin_submit`]), so it is scheduled even if this future is dropped.
    async fn store_delivery(&self, delivery: Delivery) -> Result<Answer, TransportError> {
        let pending = match self
            .blocking(move |inner| inner.begin_submit(delivery))
            .await?
        {
            Begun::Repeat(accepted) => return Ok(Answer::AwaitingAck(accepted)),
            Begun::Refused(reason) => return Ok(Answer::Finished(Finished::refused(reason))),
            Begun::New(pending) => pending,
        };
        let (_, message) = pending.durable().await?;
        tracing::info!(
            report_id = %message.delivered.report_id,
            transport_ref = %message.transport_ref,
            "simulated Standesamt: message received"
        );
        Ok(Answer::AwaitingAck(Accepted {
            transport_ref: message.transport_ref,
            accepted_at: message.delivered.received_at,
            duplicate: false,
        }))
    }
}

/// How [`Inner::begin_submit`] left a delivery.
enum Begun {
    /// A repeat of a message the office holds, answered with its original acceptance.
    Repeat(Accepted),
    /// Refused at once, unrecorded (its signature does not verify): the report fails.
    Refused(String),
    /// A new message, numbered and on its way to disk.
    New(Box<PendingAppend<ReceivedMessage>>),
}

impl Simulated for Simulator {
    crate::simulated::simulated_basics!();
}

crate::simulated::debug_shows_config!("xpersonenstand::Simulator");

#[async_trait]
impl Transport for Simulator {
    fn name(&self) -> &str {
        NAME
    }

    async fn submit(&self, delivery: Delivery) -> Result<Answer, TransportError> {
        let latency_ms = self.config().latency_ms;
        // Read where it is asked: a lookup in the journal's index waits for no disk write.
        let repeat = self
            .inner
            .journal
            .contains(BY_IDEMPOTENCY_KEY, &delivery.idempotency_key)?;
        if repeat {
            // A repeat of an accepted key is not a delivery: the script is not asked and nothing
            // of it is used up.
            sleep_ms(latency_ms).await;
            return self.store_delivery(delivery).await;
        }

        let (module, report_id, key) = (
            delivery.module.clone(),
            delivery.report_id.clone(),
            delivery.idempotency_key.clone(),
        );
        let plan = self
            .inner
            .script
            .plan(&module, &report_id, &key, latency_ms);
        if let Err(answer) = plan.carry_out("simulated Standesamt", &report_id).await {
            return answer;
        }
        self.store_delivery(delivery).await
    }

    fn inbox(&self) -> Option<&dyn Inbox> {
        Some(self)
    }
}

#[async_trait]
impl Inbox for Simulator {
    async fn acknowledgements(
        &self,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<AckBatch, TransportError> {
        let cursor = cursor.map(str::to_owned);
        self.blocking(move |inner| inner.acknowledgements(cursor.as_deref(), limit))
            .await
    }
}

impl Inner {
    fn config(&self) -> SimulatorConfig {
        self.config
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn lock_write(&self) -> std::sync::MutexGuard<'_, ()> {
        self.write.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn lock_schedule(&self) -> std::sync::MutexGuard<'_, Schedule> {
        self.schedule.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Checks a delivery and queues it for the journal, or answers a repeat with the original
    /// acceptance.
    ///
    /// The delivery's claim on its idempotency key is held until its record is committed (a
    /// second copy then finds it, and answers only after a flush of its own, which covers it);
    /// what follows the commit runs on the journal's committing thread: the script's
    /// acknowledgement rule bound and the decision scheduled, whether or not the caller still
    /// waits. It holds the office weakly, so that a step still queued does not keep the journal
    /// of a dropped office open.
    fn begin_submit(self: &Arc<Self>, mut delivery: Delivery) -> Result<Begun, TransportError> {
        let config = self.config();
        // One delivery of a message at a time: a second copy waits for the first's answer and is
        // then answered as its repeat, whatever changed in between. Different messages do not
        // wait for each other.
        let claim = self.claims.claim(&delivery.idempotency_key);

        // Repeats come first: a retry must get the original answer even if, say, the signature
        // requirement changed in between.
        if let Some(accepted) = self.repeat(&delivery.idempotency_key, &delivery.body)? {
            return Ok(Begun::Repeat(accepted));
        }

        if let Err(reason) = verify_signature(
            &delivery.body,
            delivery.signature.as_ref(),
            config.require_signature,
        ) {
            return Ok(Begun::Refused(reason));
        }

        let transport_ref = uuid::Uuid::new_v4().to_string();
        let refusal = code_refusal(&delivery.body);
        let signature = delivery.signature.take();
        // Stamped again as the journal numbers the record (below).
        let (mut delivered, body) = Delivered::of(delivery, Utc::now());
        let (idempotency_key, report_id, module) = (
            delivered.idempotency_key.clone(),
            delivered.report_id.clone(),
            delivered.module.clone(),
        );
        // Durable before the answer: once the sender holds a transport reference, the office
        // must remember it across any crash. The body goes in once, apart from the record,
        // which its decision rewrites; the record is stamped when the journal numbers it, so
        // that the received log's order is the order of `received_at`.
        // Read now, while the body is at hand: the journal keeps it apart from the record, and
        // the receipt is rendered from the record.
        let header = MessageHeader::read(&body);
        let office = Arc::downgrade(self);
        let pending = self.journal.queue_attached_with(
            &body,
            &[
                (BY_IDEMPOTENCY_KEY, &idempotency_key),
                (BY_TRANSPORT_REF, &transport_ref),
            ],
            &[
                (BY_REPORT, &report_id),
                (BY_MODULE, &module),
                (UNDECIDED, ""),
            ],
            || {
                delivered.received_at = Utc::now();
                ReceivedMessage {
                    delivered,
                    transport_ref: transport_ref.clone(),
                    header: header.clone(),
                    signature,
                    outcome: None,
                    refusal: refusal.clone(),
                }
            },
            move |seq, message: &ReceivedMessage| {
                if let Some(office) = office.upgrade() {
                    // Bound first, so that the plan sees an acknowledgement rule this delivery
                    // took.
                    office.script.accepted(
                        &message.delivered.module,
                        &message.delivered.report_id,
                        &message.delivered.idempotency_key,
                        &message.transport_ref,
                    );
                    office.schedule(seq, message);
                }
                drop(claim);
            },
        )?;
        Ok(Begun::New(Box::new(pending)))
    }

    /// The original acceptance of the message stored under `idempotency_key`, its repeats
    /// counted one up; `None` if the office has no such message.
    fn repeat(
        &self,
        idempotency_key: &str,
        body: &[u8],
    ) -> Result<Option<Accepted>, TransportError> {
        // Counting up is a read-modify-write of the record, as is deciding on it.
        let _guard = self.lock_write();
        let Some((seq, mut message)) = self.journal.find(BY_IDEMPOTENCY_KEY, idempotency_key)?
        else {
            return Ok(None);
        };
        message.delivered.count_repeat();
        let attached;
        let original = match message.delivered.body.is_empty() {
            true => {
                attached = self.journal.attachment(seq)?.unwrap_or_default();
                &attached
            }
            false => &message.delivered.body,
        };
        if original.as_slice() != body {
            tracing::warn!(
                idempotency_key = %idempotency_key,
                transport_ref = %message.transport_ref,
                "repeat submission carries a different body; answering with the original acceptance"
            );
        }
        // The body stays where it is: apart, or in a record of an earlier version.
        self.journal.replace(seq, &message)?;
        tracing::info!(
            idempotency_key = %idempotency_key,
            transport_ref = %message.transport_ref,
            repeats = message.delivered.repeat_submissions,
            "simulated Standesamt: repeat submission"
        );
        Ok(Some(Accepted {
            transport_ref: message.transport_ref,
            accepted_at: message.delivered.received_at,
            duplicate: true,
        }))
    }
}

async fn sleep_ms(ms: u64) {
    if ms > 0 {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
}

/// The negative acknowledgement a real office gives a message with codes outside their lists:
/// every code element it knows the list of is checked (`meldewerk_xml::codelisten`), and the
/// reason names each element, its code and the list.
fn code_refusal(body: &[u8]) -> Option<String> {
    let problems = meldewerk_xml::codelisten::pruefe_nachricht(body);
    if problems.is_empty() {
        return None;
    }
    let named: Vec<String> = problems.iter().map(ToString::to_string).collect();
    Some(format!(
        "Standesamt: Nachricht abgelehnt, Codes außerhalb ihrer Codeliste: {}",
        named.join("; ")
    ))
}

/// Checks the detached signature the way the office does; `Err` carries the rejection reason.
fn verify_signature(
    body: &[u8],
    signature: Option<&MessageSignature>,
    required: bool,
) -> Result<(), String> {
    let Some(signature) = signature else {
        return if required {
            Err(
                "Nachricht ist nicht signiert (das Standesamt verlangt eine Ed25519-Signatur)"
                    .to_owned(),
            )
        } else {
            Ok(())
        };
    };
    if signature.algorithm != "Ed25519" {
        return Err(format!(
            "Signaturverfahren \"{}\" wird nicht unterstützt (erwartet: Ed25519)",
            signature.algorithm
        ));
    }
    UnparsedPublicKey::new(&ED25519, &signature.public_key)
        .verify(body, &signature.value)
        .map_err(|_| {
            format!(
                "Signatur von \"{}\" ist ungültig (Ed25519-Prüfung fehlgeschlagen)",
                signature.signer
            )
        })
}

/// Whether the simulated failure rate picks this message. Derived from the idempotency key rather
/// than drawn at random, so that the same run of reports fails the same way every time.
fn simulated_failure(idempotency_key: &str, rate: f64) -> bool {
    if rate <= 0.0 {
        return false;
    }
    if rate >= 1.0 {
        return true;
    }
    let hash = digest::digest(&digest::SHA256, idempotency_key.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&hash.as_ref()[..8]);
    (u64::from_be_bytes(first) as f64 / u64::MAX as f64) < rate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_decision_follows_the_rate() {
        let keys: Vec<String> = (0..2000).map(|i| format!("report-{i}")).collect();
        let failed = keys.iter().filter(|k| simulated_failure(k, 0.25)).count();
        // Deterministic, so exact bounds are not flaky; wide bounds only guard against a
        // decision that ignores the rate.
        assert!((300..700).contains(&failed), "{failed} of 2000 failed");
        assert!(keys.iter().all(|k| !simulated_failure(k, 0.0)));
        assert!(keys.iter().all(|k| simulated_failure(k, 1.0)));
        assert_eq!(
            simulated_failure("same", 0.5),
            simulated_failure("same", 0.5)
        );
    }
}
