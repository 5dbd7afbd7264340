//! The simulated office's own durable records, kept in a sled database of its own.
//!
//! One sled tree holds three kinds of entries, distinguished by key prefix:
//! - `m/<seq>` → the [`ReceivedMessage`] as JSON; `seq` is a big-endian counter, so a prefix scan
//!   yields messages in the order they were received;
//! - `k/<idempotency key>` → `seq`, to answer repeats with the original acceptance;
//! - `r/<transport ref>` → idempotency key, to find a message when its acknowledgement is polled.
//!
//! Keeping them in one tree lets a new message and both index entries go in with one atomic
//! batch: a crash can never leave a message without its idempotency entry (which would turn a
//! retry into a second delivery).

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::SimulatorError;
use crate::DetachedSignature;

const MESSAGE: &[u8] = b"m/";
const BY_KEY: &[u8] = b"k/";
const BY_REF: &[u8] = b"r/";

/// A message as the simulated office recorded it. Serialises to JSON with `body` and
/// `receipt_pdf` as standard base64.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceivedMessage {
    /// Reference the office handed out on acceptance (a UUID v4).
    pub transport_ref: String,
    /// The sender's idempotency key; the office accepts each key once.
    pub idempotency_key: String,
    /// Module path segment, e.g. `birthnotice`.
    pub module: String,
    /// The integrator's report id.
    pub report_id: String,
    /// Message UUID from the message header.
    pub message_uuid: String,
    /// Media type of `body`.
    pub content_type: String,
    /// The exact bytes received.
    #[serde(with = "base64_bytes")]
    pub body: Vec<u8>,
    /// The detached signature that came with the message, if any (already verified).
    pub signature: Option<DetachedSignature>,
    /// Lower-case hex SHA-256 of `body`, as printed on the receipt.
    pub sha256_hex: String,
    /// When the office accepted the message.
    pub received_at: DateTime<Utc>,
    /// How often the same idempotency key was submitted again after the first acceptance; each
    /// repeat was answered with the original acceptance and stored nothing new.
    pub repeat_submissions: u32,
    /// The office's decision, once made; `None` while the acknowledgement is still pending.
    pub outcome: Option<RecordedOutcome>,
}

/// The office's final decision on a message. Made once and then repeated on every poll, also
/// after a restart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum RecordedOutcome {
    /// Receipt confirmed.
    Acknowledged {
        /// When the office decided.
        decided_at: DateTime<Utc>,
        /// The receipt PDF handed back with every acknowledgement.
        #[serde(with = "base64_bytes")]
        receipt_pdf: Vec<u8>,
        /// Portal identifier reported with the acknowledgement.
        portal: String,
    },
    /// Message refused.
    Rejected {
        /// When the office decided.
        decided_at: DateTime<Utc>,
        /// Reason reported to the sender.
        reason: String,
    },
}

/// Typed access to the journal tree. Callers serialise read-modify-write sequences themselves.
pub(crate) struct Journal {
    /// Kept so that flushing covers sled's own metadata as well as the tree.
    db: sled::Db,
    tree: sled::Tree,
}

impl Journal {
    pub(crate) fn open(dir: &Path) -> Result<Self, SimulatorError> {
        std::fs::create_dir_all(dir).map_err(|e| {
            SimulatorError::Journal(format!("cannot create {}: {e}", dir.display()))
        })?;
        let db = meldewerk_storage::sled_gate::config(dir)
            .open()
            .map_err(|e| open_error(dir, e))?;
        let tree = db.open_tree("standesamt-journal").map_err(journal_error)?;
        Ok(Self { db, tree })
    }

    /// Sequence number of the message accepted under `idempotency_key`.
    pub(crate) fn seq_by_key(&self, idempotency_key: &str) -> Result<Option<u64>, SimulatorError> {
        match self
            .tree
            .get(prefixed(BY_KEY, idempotency_key.as_bytes()))
            .map_err(journal_error)?
        {
            Some(raw) => decode_seq(&raw).map(Some),
            None => Ok(None),
        }
    }

    /// Sequence number of the message with `transport_ref`.
    pub(crate) fn seq_by_ref(&self, transport_ref: &str) -> Result<Option<u64>, SimulatorError> {
        let key = self
            .tree
            .get(prefixed(BY_REF, transport_ref.as_bytes()))
            .map_err(journal_error)?;
        match key {
            Some(key) => {
                let key = std::str::from_utf8(&key).map_err(|_| {
                    SimulatorError::Corrupt(format!(
                        "index entry of transport reference {transport_ref} is not UTF-8"
                    ))
                })?;
                self.seq_by_key(key)
            }
            None => Ok(None),
        }
    }

    pub(crate) fn message(&self, seq: u64) -> Result<ReceivedMessage, SimulatorError> {
        let raw = self
            .tree
            .get(prefixed(MESSAGE, &seq.to_be_bytes()))
            .map_err(journal_error)?
            .ok_or_else(|| {
                SimulatorError::Corrupt(format!("index points to missing message #{seq}"))
            })?;
        decode_message(&raw)
    }

    /// Stores a new message together with its index entries, atomically, and flushes.
    pub(crate) fn insert_new(&self, message: &ReceivedMessage) -> Result<u64, SimulatorError> {
        let seq = match self
            .tree
            .scan_prefix(MESSAGE)
            .next_back()
            .transpose()
            .map_err(journal_error)?
        {
            Some((key, _)) => decode_seq(&key[MESSAGE.len()..])? + 1,
            None => 0,
        };
        let mut batch = sled::Batch::default();
        batch.insert(
            prefixed(MESSAGE, &seq.to_be_bytes()),
            encode_message(message)?,
        );
        batch.insert(
            prefixed(BY_KEY, message.idempotency_key.as_bytes()),
            seq.to_be_bytes().to_vec(),
        );
        batch.insert(
            prefixed(BY_REF, message.transport_ref.as_bytes()),
            message.idempotency_key.as_bytes(),
        );
        {
            let _gate = meldewerk_storage::sled_gate::exclusive();
            self.tree.apply_batch(batch).map_err(journal_error)?;
        }
        self.flush()?;
        Ok(seq)
    }

    /// Overwrites an existing message (repeat count, outcome) and flushes.
    pub(crate) fn update(&self, seq: u64, message: &ReceivedMessage) -> Result<(), SimulatorError> {
        self.tree
            .insert(
                prefixed(MESSAGE, &seq.to_be_bytes()),
                encode_message(message)?,
            )
            .map_err(journal_error)?;
        self.flush()
    }

    /// All messages in the order they were received.
    pub(crate) fn all(&self) -> Result<Vec<ReceivedMessage>, SimulatorError> {
        self.tree
            .scan_prefix(MESSAGE)
            .map(|entry| {
                let (_, raw) = entry.map_err(journal_error)?;
                decode_message(&raw)
            })
            .collect()
    }

    fn flush(&self) -> Result<(), SimulatorError> {
        meldewerk_storage::sled_gate::flush_blocking(&self.db).map_err(journal_error)?;
        Ok(())
    }
}

fn prefixed(prefix: &[u8], rest: &[u8]) -> Vec<u8> {
    let mut key = Vec::with_capacity(prefix.len() + rest.len());
    key.extend_from_slice(prefix);
    key.extend_from_slice(rest);
    key
}

fn decode_seq(raw: &[u8]) -> Result<u64, SimulatorError> {
    let bytes: [u8; 8] = raw
        .try_into()
        .map_err(|_| SimulatorError::Corrupt("sequence number is not 8 bytes".to_owned()))?;
    Ok(u64::from_be_bytes(bytes))
}

fn encode_message(message: &ReceivedMessage) -> Result<Vec<u8>, SimulatorError> {
    serde_json::to_vec(message)
        .map_err(|e| SimulatorError::Journal(format!("cannot encode message: {e}")))
}

fn decode_message(raw: &[u8]) -> Result<ReceivedMessage, SimulatorError> {
    serde_json::from_slice(raw)
        .map_err(|e| SimulatorError::Corrupt(format!("undecodable message entry: {e}")))
}

fn journal_error(e: sled::Error) -> SimulatorError {
    SimulatorError::Journal(e.to_string())
}

/// sled reports a held lock only as an I/O error with a message; recognising it lets the caller
/// tell "another process runs this office" apart from real damage.
fn open_error(dir: &Path, e: sled::Error) -> SimulatorError {
    match &e {
        sled::Error::Io(io)
            if io.kind() == std::io::ErrorKind::WouldBlock
                || io.to_string().contains("could not acquire lock") =>
        {
            SimulatorError::Locked(PathBuf::from(dir))
        }
        _ => SimulatorError::Journal(format!("cannot open {}: {e}", dir.display())),
    }
}

/// Byte fields as standard base64 strings, so that JSON dumps for testers stay readable in size.
mod base64_bytes {
    use base64::engine::general_purpose::STANDARD;
    use base64::Engine as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&STANDARD.encode(bytes))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(deserializer)?;
        STANDARD.decode(text).map_err(serde::de::Error::custom)
    }
}
