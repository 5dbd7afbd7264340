//! The records the store keeps. They are plain data: every engine (sled, PostgreSQL) stores them
//! as they are, and every layer above reads them through the [`crate::Store`] trait.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::base64_bytes;

/// An API user: a service account that integrators authenticate with over HTTP Basic.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct UserRecord {
    /// Login name, unique in the store.
    pub name: String,
    /// Optional customer id the operator attaches to the account (billing, support).
    pub customer: Option<String>,
    /// Optional mail address for the user's notices (a report of theirs failed for good). Records
    /// written before it existed read as `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// argon2id hash of the password in PHC string format.
    pub password_hash: String,
    /// The user's current memento key, wrapped under the server's master key.
    pub memento_key: WrappedKey,
    /// The user's seal (signing key), when one was deposited.
    pub seal: Option<SealRecord>,
    /// When the account was created.
    pub created_at: DateTime<Utc>,
    /// When the password (and with it the memento key) was last set.
    pub password_changed_at: DateTime<Utc>,
    /// Whether mementos of this user come with a magic link: `false` for an integrator whose
    /// configuration issues no tokens (its end users reach the forms otherwise), whose memento
    /// answers carry `"magicLink": null`. Records written before it existed read as `true`.
    #[serde(default = "issues_magic_links")]
    pub magic_links: bool,
    /// The contact address the user registered for court messages: a mail goes there when a
    /// court message arrives in a mailbox account they are granted. Records written before it
    /// existed read as `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub court_message_contact: Option<String>,
}

/// What a user record without `magic_links` means: magic links are issued.
fn issues_magic_links() -> bool {
    true
}

/// A secret key wrapped (AES-256-GCM) under the server's master key.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct WrappedKey {
    /// Public, random identifier of the key. Tokens carry it in the clear so that the server knows
    /// which key opens them; a password change issues a new id, so older tokens find no key.
    pub key_id: String,
    /// 96-bit nonce followed by the ciphertext and tag of the key material.
    #[serde(with = "base64_bytes")]
    pub wrapped: Vec<u8>,
}

/// A seal deposited for an API user: a signing key applied automatically to delivered messages.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SealRecord {
    /// Signature algorithm of the key, e.g. `Ed25519`.
    pub algorithm: String,
    /// The PKCS#8 document of the private key, wrapped under the master key.
    pub private_key: WrappedKey,
    /// Public key (raw bytes) so that a receiving office can verify.
    #[serde(with = "base64_bytes")]
    pub public_key: Vec<u8>,
    /// When the seal was deposited.
    pub deposited_at: DateTime<Utc>,
}

/// Transport state of a report, as integrators see it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ReportStatus {
    /// Dispatched by the end user; the transport has not confirmed it yet.
    Pending,
    /// Delivered and acknowledged; a receipt exists.
    Success,
    /// The transport failed for good; a reason exists.
    Failure,
}

impl ReportStatus {
    /// Whether the state is final (a poll without `peek` consumes it).
    pub fn is_final(self) -> bool {
        !matches!(self, ReportStatus::Pending)
    }
}

/// Identifies a report: the owning API user, the module and the integrator's id.
/// Ids are unique per user and module; the same id under another user is another report.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReportKey {
    /// API user that created the memento and owns the report.
    pub owner: String,
    /// Module path segment, e.g. `birthnotice`.
    pub module: String,
    /// Integrator-chosen id from the memento.
    pub id: String,
}

impl std::fmt::Display for ReportKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}/{}", self.owner, self.module, self.id)
    }
}

/// The message as it was handed to the transport, kept byte for byte.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct PreparedMessage {
    /// Message UUID written into the message header.
    pub message_uuid: String,
    /// Media type of `body`, e.g. `application/xml`.
    pub content_type: String,
    /// The exact bytes delivered.
    #[serde(with = "base64_bytes")]
    pub body: Vec<u8>,
    /// Detached signature over `body` (seal or end-user signature), if any.
    pub signature: Option<MessageSignature>,
    /// When the message was built.
    pub prepared_at: DateTime<Utc>,
    /// Whose certificate the message goes out with, when its module sends as a facility: kept
    /// with the message, so that every attempt presents the same one. Absent in messages
    /// stored before senders were recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender: Option<Sender>,
}

/// The facility a message is sent as, and the authority's environment it goes to: which
/// deposited certificate a transport presents for it ([`FacilityCertificate`]). Transports
/// whose authority does not know senders by certificate ignore it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Hash, utoipa::ToSchema)]
pub struct Sender {
    /// The facility's site.
    pub bsnr: crate::Bsnr,
    /// The environment the message goes to.
    pub environment: crate::Environment,
}

/// A detached signature over a delivered message. It travels with the delivery (the transport
/// envelope carries it, so the message itself stays valid against its schema) and is kept with
/// the report and in the simulators' journals.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct MessageSignature {
    /// `seal` (applied automatically) or `end-user` (applied in the form).
    pub kind: String,
    /// Algorithm name, e.g. `Ed25519`.
    pub algorithm: String,
    /// Signature bytes.
    #[serde(with = "base64_bytes")]
    #[schema(value_type = String, content_encoding = "base64")]
    pub value: Vec<u8>,
    /// Public key that verifies `value`.
    #[serde(with = "base64_bytes")]
    #[schema(value_type = String, content_encoding = "base64")]
    pub public_key: Vec<u8>,
    /// Who signed: the API user for a seal, the signatory's name for an end-user signature.
    pub signer: String,
}

/// A report: created when the end user dispatches a form, then moved by the engine.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Report {
    /// Owner, module and id.
    pub key: ReportKey,
    /// Transport state.
    pub status: ReportStatus,
    /// When the end user dispatched the form.
    pub submitted_at: DateTime<Utc>,
    /// Opaque integrator reference echoed in results (birthnotice).
    pub client_reference: Option<String>,
    /// The end user's signature act in the form, when the message is signed by the end user
    /// (no seal deposited). Kept beside the submission, which holds only the report's content.
    #[serde(default)]
    pub end_user_signature: Option<EndUserSignature>,
    /// Identifier of the delivery portal used.
    pub portal: Option<String>,
    /// The typed submission the engine builds the message from (module-specific JSON).
    /// `None` once retention removed the payload.
    pub submission: Option<serde_json::Value>,
    /// Key the transport deduplicates deliveries by; fixed at submission.
    pub idempotency_key: String,
    /// The message as delivered; set before the first delivery attempt.
    pub message: Option<PreparedMessage>,
    /// Name of the transport that accepted the delivery, e.g. `xpersonenstand`.
    #[serde(default)]
    pub transport: Option<String>,
    /// The transport's reference for the accepted delivery; its acknowledgement names it.
    pub transport_ref: Option<String>,
    /// When the transport accepted the delivery.
    pub delivered_at: Option<DateTime<Utc>>,
    /// When the final state was reached.
    pub finished_at: Option<DateTime<Utc>>,
    /// The authority's receipt, only for `Success` (its media type in `receipt_media_type`).
    /// Records written before receipts had a media type name the field `receipt_pdf`.
    #[serde(with = "base64_bytes::option", alias = "receipt_pdf")]
    pub receipt: Option<Vec<u8>>,
    /// Media type of `receipt`; `None` on records written before receipts had one, which were
    /// all PDFs ([`Receipt::media_type_or_pdf`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt_media_type: Option<String>,
    /// Failure reason, only for `Failure`.
    pub failure_reason: Option<String>,
    /// Whether a read without `peek` consumed the final result.
    pub polled: bool,
    /// When retention removed the payload; reads then answer 410 report-expired.
    pub expired_at: Option<DateTime<Utc>>,
    /// Members the module adds to its results, fixed at dispatch (see [`ReportResult`]).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub result_members: serde_json::Map<String, serde_json::Value>,
}

impl Report {
    /// A fresh report in the initial state (`Pending`), as the form dispatch creates it.
    pub fn new_pending(
        key: ReportKey,
        submission: serde_json::Value,
        client_reference: Option<String>,
        idempotency_key: String,
        submitted_at: DateTime<Utc>,
    ) -> Self {
        Report {
            key,
            status: ReportStatus::Pending,
            submitted_at,
            client_reference,
            end_user_signature: None,
            portal: None,
            submission: Some(submission),
            idempotency_key,
            message: None,
            transport: None,
            transport_ref: None,
            delivered_at: None,
            finished_at: None,
            receipt: None,
            receipt_media_type: None,
            failure_reason: None,
            polled: false,
            expired_at: None,
            result_members: serde_json::Map::new(),
        }
    }

    /// Whether the report ended in FAILURE by the transport's answer to its delivery, i.e. the
    /// authority refused it at once ([`crate::Store::record_delivered`] with a finished
    /// outcome records the delivery and the end together, at the same instant). Every other
    /// FAILURE (attempts run out, an operator's discard, a message that could not be built, a
    /// refusal acknowledged later) is not: the authority may have registered the report, or
    /// never said anything about it.
    pub fn refused_on_delivery(&self) -> bool {
        self.status == ReportStatus::Failure
            && self.transport.is_some()
            && self.delivered_at.is_some()
            && self.delivered_at == self.finished_at
    }

    /// Notes which transport took the report's message, under which reference (when it gave
    /// one; a later delivery without one keeps the earlier), and when it was first delivered.
    /// Shared by both engines, so that [`Report::refused_on_delivery`] and the results read the
    /// same whichever engine recorded the delivery.
    pub(crate) fn note_delivery(
        &mut self,
        (transport, transport_ref, at): (&str, Option<String>, DateTime<Utc>),
    ) {
        self.transport = Some(transport.to_owned());
        if transport_ref.is_some() {
            self.transport_ref = transport_ref;
        }
        self.delivered_at.get_or_insert(at);
    }

    /// Sets the report's final state from `outcome`, at `at`: its status, and the receipt's media
    /// type and the portal on success or the reason on failure. The receipt's bytes are the
    /// engine's to store (each keeps them apart from the record). Shared by both engines, so
    /// that a report ends alike on either.
    pub(crate) fn finish(&mut self, outcome: &Outcome, at: DateTime<Utc>) {
        self.status = outcome.status();
        match outcome {
            Outcome::Success { receipt, portal } => {
                self.receipt_media_type = Some(receipt.media_type.clone());
                if portal.is_some() {
                    self.portal.clone_from(portal);
                }
            }
            Outcome::Failure { reason } => {
                self.failure_reason = Some(reason.clone());
            }
        }
        self.finished_at = Some(at);
    }
}

/// The end user's signature act: who signed in the form, and when.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct EndUserSignature {
    /// Name the signatory entered.
    pub name: String,
    /// When the form was signed and dispatched.
    pub signed_at: DateTime<Utc>,
}

/// What a poll answers about a report: its state and result, without the payload (submission,
/// delivered message) that only the engine needs. See [`crate::Store::report_result`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportResult {
    /// Transport state.
    pub status: ReportStatus,
    /// When the end user dispatched the form.
    pub submitted_at: DateTime<Utc>,
    /// Opaque integrator reference echoed in results (birthnotice).
    pub client_reference: Option<String>,
    /// Identifier of the delivery portal used.
    pub portal: Option<String>,
    /// The receipt in standard base64 (results carry it so), only for `Success`.
    pub receipt_base64: Option<String>,
    /// Media type of the receipt (`application/pdf` for every authority so far).
    pub receipt_media_type: Option<String>,
    /// Failure reason, only for `Failure`.
    pub failure_reason: Option<String>,
    /// Whether a read without `peek` consumed the final result.
    pub polled: bool,
    /// When retention removed the payload.
    pub expired_at: Option<DateTime<Utc>>,
    /// Members the module added to its results at dispatch (labreport's `diseaseCode`); empty
    /// for most modules.
    pub result_members: serde_json::Map<String, serde_json::Value>,
}

impl From<&Report> for ReportResult {
    fn from(report: &Report) -> Self {
        use base64::Engine as _;
        ReportResult {
            status: report.status,
            submitted_at: report.submitted_at,
            client_reference: report.client_reference.clone(),
            portal: report.portal.clone(),
            receipt_base64: report
                .receipt
                .as_ref()
                .map(|bytes| base64::engine::general_purpose::STANDARD.encode(bytes)),
            // Known from the state alone: the receipt's bytes may be kept apart from it.
            receipt_media_type: (report.status == ReportStatus::Success)
                .then(|| Receipt::media_type_or_pdf(report.receipt_media_type.as_deref()).into()),
            failure_reason: report.failure_reason.clone(),
            polled: report.polled,
            expired_at: report.expired_at,
            result_members: report.result_members.clone(),
        }
    }
}

/// What the engine still has to do for a report. Jobs live in the durable outbox, so that a crash
/// or a restarted actor resumes them; a mailbox message alone would be lost.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub enum JobKind {
    /// Deliver the message to the transport (built at dispatch, or else once, here).
    Deliver,
    /// Wait for the acknowledgement to arrive in the transport's inbox; if none has come by the
    /// job's due time, deliver the same message again (the transport answers a repeat with the
    /// original acceptance, or takes it if it had lost it).
    AwaitAck,
}

/// One entry of the outbox.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Job {
    /// Store-assigned, increasing id.
    pub id: u64,
    /// The report the job works on.
    pub report: ReportKey,
    /// What to do next.
    pub kind: JobKind,
    /// Attempts made so far for this kind (incremented before each attempt, so a crash counts).
    pub attempts: u32,
    /// Do not run before this time (backoff; for `AwaitAck`, when to deliver again if no
    /// acknowledgement came).
    pub not_before: DateTime<Utc>,
    /// Last error seen, for operators.
    pub last_error: Option<String>,
}

impl Job {
    /// Whether `self` and `other` are the same turn of one job: nothing has happened to it
    /// between the two reads (no attempt, no new kind, no new time). A copy that is not the
    /// stored turn any more must not be worked: a scan or a new report's routing may hand out a
    /// copy that another run of the job has overtaken meanwhile.
    pub fn same_turn(&self, other: &Job) -> bool {
        self.id == other.id
            && self.kind == other.kind
            && self.attempts == other.attempts
            && self.not_before == other.not_before
    }

    /// The job after a delivery the authority acknowledges later: same id, new kind (the job
    /// keeps its identity across the two phases), no attempts yet, due to deliver again at
    /// `resend_at`. Shared by both engines, so that the acknowledgement phase starts alike.
    pub(crate) fn awaiting_ack(self, resend_at: DateTime<Utc>) -> Job {
        Job {
            kind: JobKind::AwaitAck,
            attempts: 0,
            not_before: resend_at,
            last_error: None,
            ..self
        }
    }
}

/// Outcome of consuming a report (a read without `peek`).
#[derive(Debug, Clone, PartialEq)]
pub enum Consumed {
    /// What the poll answers, as read. A final report is now marked polled (and says so); a
    /// pending one is unchanged.
    Result(ReportResult),
    /// A read without `peek` consumed it earlier.
    AlreadyRetrieved,
    /// Retention removed its payload.
    Expired,
    /// No such report for this owner and module.
    NotFound,
}

/// How a report ended, as the authority decided it (at once, in its answer to the delivery, or
/// later, in an acknowledgement), or as the engine or an operator ended it. The one outcome type
/// from transport to store: [`ReportStatus::Success`] or [`ReportStatus::Failure`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The authority confirmed the report: `SUCCESS` with its receipt.
    Success {
        /// The receipt the authority handed back.
        receipt: Receipt,
        /// Identifier of the delivery portal, reported to integrators.
        portal: Option<String>,
    },
    /// The report failed for good: `FAILURE` with the reason.
    Failure {
        /// Reason shown to integrators.
        reason: String,
    },
}

impl Outcome {
    /// The report status this outcome ends in.
    pub fn status(&self) -> ReportStatus {
        match self {
            Outcome::Success { .. } => ReportStatus::Success,
            Outcome::Failure { .. } => ReportStatus::Failure,
        }
    }
}

/// A receipt as an authority hands it back: bytes of a stated media type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    /// Media type of `bytes`, e.g. `application/pdf`.
    pub media_type: String,
    /// The receipt itself.
    pub bytes: Vec<u8>,
}

impl Receipt {
    /// The media type of every receipt so far.
    pub const PDF: &'static str = "application/pdf";

    /// A PDF receipt.
    pub fn pdf(bytes: Vec<u8>) -> Self {
        Receipt {
            media_type: Self::PDF.to_owned(),
            bytes,
        }
    }

    /// The stored media type, or PDF for a record written before receipts had one.
    pub fn media_type_or_pdf(stored: Option<&str>) -> &str {
        stored.unwrap_or(Self::PDF)
    }
}

/// What follows a delivery the transport answered (see [`crate::Store::record_delivered`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AfterDelivery {
    /// The authority took the message and acknowledges it later, through its inbox: the job
    /// waits, and delivers the same message again at `resend_at` unless the acknowledgement came.
    AwaitAck {
        /// When to deliver again without an acknowledgement.
        resend_at: DateTime<Utc>,
    },
    /// The authority decided at once: the report ends with this outcome.
    Finished(Outcome),
}

/// One entry of the operators' audit log: who did what to which job or report, and when.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct AuditEntry {
    /// When it happened.
    pub at: DateTime<Utc>,
    /// The operator account that acted.
    pub who: String,
    /// What was done, e.g. `retry-now`, `discard`.
    pub action: String,
    /// What it was done to, e.g. `job 42 (klinik/birthnotice/geb-1)`.
    pub target: String,
}

/// A report that reached its final state (from the authority's answer, an acknowledgement in a
/// transport's inbox, the engine giving up, or an operator's discard).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinishedReport {
    /// The report.
    pub key: ReportKey,
    /// The report's job (it left the outbox).
    pub job: u64,
    /// When the end user dispatched the form (for the report's duration).
    pub submitted_at: DateTime<Utc>,
    /// The failure reason when the authority refused the message; `None` on success.
    pub failure: Option<String>,
}

impl FinishedReport {
    /// What the end of `report` (finished by [`Report::finish`]) by its job `job` answers.
    /// Shared by both engines, which answer it from the report as written.
    pub(crate) fn of(report: Report, job: u64) -> FinishedReport {
        FinishedReport {
            key: report.key,
            job,
            submitted_at: report.submitted_at,
            failure: report.failure_reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Users stored before they could have an address must still open, and an account without
    /// one is written as before.
    #[test]
    fn a_user_record_without_an_email_reads_and_writes_as_before_addresses_existed() {
        let stored = r#"{"name":"klinik","customer":null,"password_hash":"h",
            "memento_key":{"key_id":"k","wrapped":"AQ=="},"seal":null,
            "created_at":"2026-01-01T00:00:00Z","password_changed_at":"2026-01-01T00:00:00Z"}"#;
        let user: UserRecord = serde_json::from_str(stored).unwrap();
        assert_eq!(user.email, None);
        assert!(
            user.magic_links,
            "a user stored before the choice issues magic links"
        );
        let written = serde_json::to_string(&user).unwrap();
        assert!(!written.contains("email"), "{written}");
        let with = UserRecord {
            email: Some("it@klinik.example".into()),
            ..user
        };
        let again: UserRecord =
            serde_json::from_str(&serde_json::to_string(&with).unwrap()).unwrap();
        assert_eq!(again, with);
    }
}
