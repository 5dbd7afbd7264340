//! The `egvp` transport: a simulated electronic court and administration mailbox (EGVP), the
//! third kind of authority: one the service **reads from** ([`crate::Mailbox`]).
//!
//! The server keeps mailboxes per account (SAFE-ID, such as `DE.Justiz.ag-musterstadt`): the
//! accounts configured in `[transports.egvp] accounts` ([`EgvpConfig`]), and any account an
//! operator drops a court's message into. Sending is [`Transport::submit`] with a message package
//! ([`MessagePackage`], built once by the sender): the server decides at once. A package from a
//! known account to a known account is stored as OUTGOING in the sender's account and INCOMING in
//! the recipient's, under one transport message id, which the answer carries as its
//! `transport_ref` with a receipt PDF; an unknown sender or recipient, or a malformed package, is
//! refused with the reason, and nothing is stored. Each idempotency key is stored once: a repeat
//! gets the same message id. Operators drop incoming court messages
//! ([`crate::MailboxServer::drop_incoming`]), list, fetch and delete them; testers script it like
//! the other simulators ([`crate::script`]: latency and faults for every call, plus a message
//! that cannot be fetched and a truncated body). It records what it received (the sends) in its
//! received log.
//!
//! As its own process (`meldewerk simulate egvp`) it speaks the wire protocol, mailbox face
//! included ([`crate::wire`]).

mod config;
mod package;
mod records;
mod server;

use std::path::Path;
use std::sync::{Arc, PoisonError, RwLock};

use async_trait::async_trait;
use chrono::Utc;
use meldewerk_storage::{Journal, Outcome, Receipt};

pub use config::EgvpConfig;
pub use package::{MessagePackage, MAX_PACKAGE_BYTES, MEDIA_TYPE};
pub use records::{ReceivedSend, SendDecision, StoredMessage};

use crate::claims::Claims;
use crate::receipt::{render_receipt, ReceiptFields};
use crate::received::{
    page_with_bodies, Delivered, ReceivedPage, ReceivedQuery, BY_MODULE, BY_REPORT,
};
use crate::script::Scripted;
use crate::simulated::{read_config, Protocol, Simulated, SimulatorError, TransportKind};
use crate::{Answer, Delivery, Finished, Transport, TransportError};
use records::BY_IDEMPOTENCY_KEY;

/// The transport's name.
const NAME: &str = "egvp";
/// The received log's journal, below the simulator's directory.
const RECEIVED_DIR: &str = "received";
/// The mailboxes' journal, below the simulator's directory.
const MAILBOXES_DIR: &str = "mailboxes";

/// The mailbox server in the registry of transports.
pub const KIND: TransportKind = TransportKind {
    name: NAME,
    authority: "the electronic court and administration mailbox (EGVP), XJustiz messages per \
                account (SAFE-ID), read by the service; sending decided at once",
    inbox: false,
    mailbox: true,
    simulate: |dir, config| {
        let config = read_config(NAME, config)?;
        Ok(Arc::new(Simulator::open(dir, config)?))
    },
    journals: &[RECEIVED_DIR, MAILBOXES_DIR],
    simulator_defaults: || serde_json::to_value(EgvpConfig::default()).unwrap_or_default(),
    connect: crate::wire::connect,
    protocol: Protocol::Wire,
    process_tls: crate::simulated::plain_http,
};

/// The simulated mailbox server: a [`Transport`] named `egvp` with a [`crate::Mailbox`], backed
/// by its own durable journals. Cheap to clone; clones share journals and configuration.
#[derive(Clone)]
pub struct Simulator {
    inner: Arc<Inner>,
}

struct Inner {
    /// The received log: every send, with its answer.
    sent: Journal<ReceivedSend>,
    /// The mailboxes: every copy of every message ([`StoredMessage`]).
    messages: Journal<StoredMessage>,
    config: RwLock<EgvpConfig>,
    /// The testers' script; empty means "as configured".
    script: Scripted,
    /// Idempotency keys being decided and messages being changed right now.
    claims: Arc<Claims>,
}

impl Simulator {
    /// Opens (or creates) the server's journals below `dir`. Fails with
    /// [`SimulatorError::Locked`] while another process has them open, and with
    /// [`SimulatorError::Config`] for an account that is no SAFE-ID.
    pub fn open(dir: &Path, config: EgvpConfig) -> Result<Self, SimulatorError> {
        if let Some(problem) = config.problem() {
            return Err(SimulatorError::Config(problem));
        }
        Ok(Simulator {
            inner: Arc::new(Inner {
                sent: Journal::open(&dir.join(RECEIVED_DIR), NAME)?,
                messages: Journal::open(&dir.join(MAILBOXES_DIR), NAME)?,
                config: RwLock::new(config),
                script: Scripted::default(),
                claims: Default::default(),
            }),
        })
    }

    /// The current behaviour settings.
    pub fn config(&self) -> EgvpConfig {
        self.inner.config()
    }

    /// One page of the sends the server received, oldest first, filtered by `query`.
    pub fn received_page(
        &self,
        query: &ReceivedQuery,
    ) -> Result<ReceivedPage<ReceivedSend>, SimulatorError> {
        page_with_bodies(&self.inner.sent, query, |record| &mut record.delivered.body)
    }

    crate::simulated::journal_work!("simulated EGVP");
}

impl Simulated for Simulator {
    crate::simulated::simulated_basics!();

    fn mailbox_server(&self) -> Option<&dyn crate::MailboxServer> {
        Some(self)
    }
}

crate::simulated::debug_shows_config!("egvp::Simulator");

#[async_trait]
impl Transport for Simulator {
    fn name(&self) -> &str {
        NAME
    }

    async fn submit(&self, delivery: Delivery) -> Result<Answer, TransportError> {
        let by_key = (&self.inner.sent, BY_IDEMPOTENCY_KEY);
        let decide = |delivery| self.blocking(move |inner| inner.decide(delivery));
        let latency_ms = self.config().latency_ms;
        let script = &self.inner.script;
        script
            .answer_at_once("simulated EGVP", delivery, by_key, latency_ms, decide)
            .await
    }

    fn mailbox(&self) -> Option<&dyn crate::Mailbox> {
        Some(self)
    }
}

impl Inner {
    fn config(&self) -> EgvpConfig {
        self.config
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Answers a repeat with the original answer, or decides a new send, stores it and answers.
    /// Blocks until everything is on disk. The sender's copy goes in first, under the
    /// idempotency key: a crash after it is mended by the repeat, which finds it and stores what
    /// is missing (the recipient's copy, the received log's record), so that no key is ever
    /// stored twice.
    fn decide(&self, delivery: Delivery) -> Result<Finished, TransportError> {
        let _claim = self
            .claims
            .claim(&format!("key:{}", delivery.idempotency_key));
        if let Some((seq, mut record)) = self
            .sent
            .find(BY_IDEMPOTENCY_KEY, &delivery.idempotency_key)?
        {
            record.delivered.count_repeat();
            self.sent.replace(seq, &record)?;
            tracing::info!(
                repeats = record.delivered.repeat_submissions,
                "simulated EGVP: repeat send"
            );
            return self.finished(&record, true);
        }
        // The time is stamped again as the received log numbers the record.
        let (delivered, body) = Delivered::of(delivery, Utc::now());
        let mut record = ReceivedSend {
            delivered,
            sender: None,
            recipient: None,
            decision: SendDecision::Refused {
                reason: String::new(),
            },
        };
        let stored = self
            .messages
            .find(BY_IDEMPOTENCY_KEY, &record.delivered.idempotency_key)?;
        let duplicate = stored.is_some();
        record.decision = match stored {
            // Stored before a crash that kept the received log's record from being written.
            Some((_, outgoing)) => {
                let package = MessagePackage::parse(&body)
                    .map_err(|e| TransportError::Transient(format!("simulated EGVP: {e}")))?;
                self.store_sent(
                    &package,
                    &outgoing.message_id,
                    &record.delivered.idempotency_key,
                )?;
                record.sender = Some(package.from);
                record.recipient = Some(package.to);
                SendDecision::Accepted {
                    message_id: outgoing.message_id,
                }
            }
            None => match self.examine(&record.delivered.content_type, &body) {
                Ok(package) => {
                    let message_id = uuid::Uuid::new_v4().to_string();
                    self.store_sent(&package, &message_id, &record.delivered.idempotency_key)?;
                    record.sender = Some(package.from);
                    record.recipient = Some(package.to);
                    SendDecision::Accepted { message_id }
                }
                Err(reason) => SendDecision::Refused { reason },
            },
        };
        let delivered = &record.delivered;
        let (key, report_id, module) = (
            delivered.idempotency_key.clone(),
            delivered.report_id.clone(),
            delivered.module.clone(),
        );
        // Stamped as it is numbered, so that the received log's times grow with its numbers
        // (`since` pages by them), also for sends checked side by side.
        let (_, record) = self.sent.append_attached_with(
            &body,
            &[(BY_IDEMPOTENCY_KEY, &key)],
            &[(BY_REPORT, &report_id), (BY_MODULE, &module)],
            || ReceivedSend {
                delivered: Delivered {
                    received_at: Utc::now(),
                    ..record.delivered
                },
                ..record
            },
        )?;
        tracing::info!(
            accepted = matches!(record.decision, SendDecision::Accepted { .. }),
            "simulated EGVP: message received for sending"
        );
        self.finished(&record, duplicate)
    }

    /// The server's checks of one send: its media type, the package, sender and recipient
    /// accounts it keeps. `Err` is the refusal's reason.
    fn examine(&self, content_type: &str, body: &[u8]) -> Result<MessagePackage, String> {
        let media_type = content_type.split(';').next().unwrap_or_default().trim();
        if !media_type.eq_ignore_ascii_case(MEDIA_TYPE) {
            return Err(format!(
                "Content-Type {:?} is not taken: a message is {MEDIA_TYPE}",
                media_type.chars().take(80).collect::<String>()
            ));
        }
        let package = MessagePackage::parse(body)?;
        // One account holds one copy of a message id: a message to itself would have to be both.
        if package.from == package.to {
            return Err(format!(
                "the recipient {} is the sending account itself: a message needs another account",
                package.to
            ));
        }
        let known = |safe_id| self.known(safe_id).map_err(|e| e.to_string());
        if !known(&package.from)? {
            return Err(format!(
                "unknown sender account: {} is no account of this mailbox server",
                package.from
            ));
        }
        if !known(&package.to)? {
            return Err(format!(
                "unknown recipient SAFE-ID: {} is no account of this mailbox server",
                package.to
            ));
        }
        Ok(package)
    }

    /// The answer a received log's record stands for: the receipt of an accepted send is
    /// rendered from the record again (the same bytes every time).
    fn finished(&self, record: &ReceivedSend, duplicate: bool) -> Result<Finished, TransportError> {
        let message_id = match &record.decision {
            SendDecision::Refused { reason } => {
                return Ok(Finished {
                    duplicate,
                    ..Finished::refused(reason.clone())
                })
            }
            SendDecision::Accepted { message_id } => message_id,
        };
        let pdf = render_receipt(&ReceiptFields {
            authority: self.config().authority_name,
            report_type: "EGVP-Nachricht (XJustiz)".to_owned(),
            sender: record.sender.clone().unwrap_or_default(),
            module: record.delivered.module.clone(),
            report_id: record.delivered.report_id.clone(),
            message_uuid: record.delivered.message_uuid.clone(),
            message_sha256_hex: record.delivered.sha256_hex.clone(),
            submitted_at: record.delivered.received_at,
            received_at: record.delivered.received_at,
            acknowledged_at: record.delivered.received_at,
            time_zone: meldewerk_xml::local_time::LocalZone::BERLIN,
            transport_ref: message_id.clone(),
            mock: true,
        });
        Ok(Finished {
            transport_ref: Some(message_id.clone()),
            outcome: Outcome::Success {
                receipt: Receipt::pdf(pdf),
                portal: None,
            },
            duplicate,
        })
    }
}
