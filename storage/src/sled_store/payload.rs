//! A report's payload — its submission, the body of its delivered message and its receipt — kept
//! apart from its state, each part in a tree of its own (`submissions`, `messages`, `receipts`,
//! keyed like `reports`; all three packed the module's way (`module_ways.rs`): deflated, a
//! receipt with the codes quickest to read, or LZ4; see [`crate::packed`]).
//!
//! A report's state changes four or five times on its way (stored, message stored, delivered,
//! finished, polled); its payload is written once. Kept in one JSON record, every change wrote
//! the payload again, base64 inside JSON, and sled rewrites a whole leaf of records every few
//! changes to it: some 150 KB went to the log per report for under 10 KB of payload. Apart, a
//! change writes the few hundred bytes of the state.
//!
//! The rule every writer keeps: a part is written to its tree by the change that introduces it
//! (the submission when the report is stored, the body when its message is, the receipt when it
//! finishes) and removed by retention; every other change writes the state back as it read it.
//! Reports stored before the parts moved out keep theirs inline, and readers take an inline part
//! as it is, so no migration is needed.

use std::borrow::Cow;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use sled::transaction::TransactionalTree;

use super::{backend, decode, in_tx, Engine, TxResult};
use crate::packed::unpack;
use crate::receipt_cache::ReceiptCache;
use crate::{
    Packing, PreparedMessage, Report, ReportResult, ReportStatus, StoreError, StoreResult,
};

/// The report's submission, taken out and packed for the `submissions` tree (`None` if it has
/// none).
pub(super) fn take_submission(
    report: &mut Report,
    packing: Packing,
) -> StoreResult<Option<Vec<u8>>> {
    let Some(submission) = report.submission.take() else {
        return Ok(None);
    };
    Ok(Some(packing.pack(&super::encode(&submission)?)))
}

/// A stored part as it was given, or `Corrupt` naming the part.
fn unpacked<'a>(what: &str, key: &[u8], stored: &'a [u8]) -> StoreResult<Cow<'a, [u8]>> {
    unpack(stored).map_err(|e| {
        StoreError::Corrupt(format!(
            "{what} of report {}: {e}",
            String::from_utf8_lossy(key).replace('\0', "/")
        ))
    })
}

/// What the report's state keeps of `message`: everything but the body, which goes to the
/// `messages` tree.
pub(super) fn message_state(message: &PreparedMessage) -> PreparedMessage {
    PreparedMessage {
        message_uuid: message.message_uuid.clone(),
        content_type: message.content_type.clone(),
        body: Vec::new(),
        signature: message.signature.clone(),
        prepared_at: message.prepared_at,
        sender: message.sender.clone(),
    }
}

/// Inside a transaction: the stored message of the report under `key` with its body, whether
/// the body is inline (stored before the split) or in `messages`.
pub(super) fn whole_message(
    messages: &TransactionalTree,
    key: &[u8],
    mut message: PreparedMessage,
) -> TxResult<PreparedMessage> {
    if message.body.is_empty() {
        match messages.get(key)? {
            Some(body) => message.body = in_tx(unpacked("message", key, &body))?.into_owned(),
            None => return super::abort(missing_body(key)),
        }
    }
    Ok(message)
}

/// Inside a transaction: what a poll of the report stored under `key` answers, receipt included
/// (from `cache` if it has it).
pub(super) fn result(
    receipts: &TransactionalTree,
    cache: &ReceiptCache,
    key: &[u8],
    report: &Report,
) -> TxResult<ReportResult> {
    let mut result = ReportResult::from(report);
    if report.status == ReportStatus::Success && result.receipt_base64.is_none() {
        if let Some(receipt) = cache.get(key) {
            result.receipt_base64 = Some(receipt.to_string());
        } else if let Some(pdf) = receipts.get(key)? {
            result.receipt_base64 = Some(STANDARD.encode(in_tx(unpacked("receipt", key, &pdf))?));
        }
    }
    Ok(result)
}

/// Inside a transaction: removes every part of the report under `key` (retention).
pub(super) fn remove_parts(
    [submissions, messages, receipts]: [&TransactionalTree; 3],
    key: &[u8],
) -> TxResult<()> {
    submissions.remove_blind(key)?;
    messages.remove_blind(key)?;
    receipts.remove_blind(key)?;
    Ok(())
}

impl Engine {
    /// Fills in the parts of `report` (stored under `key`) that its state does not hold inline,
    /// the submission only if `submission`.
    pub(super) fn attach_parts(
        &self,
        key: &[u8],
        report: &mut Report,
        submission: bool,
    ) -> StoreResult<()> {
        if report.expired_at.is_some() {
            return Ok(());
        }
        if submission && report.submission.is_none() {
            if let Some(bytes) = self.submissions.get(key).map_err(backend)? {
                let bytes = unpacked("submission", key, &bytes)?;
                report.submission = Some(decode(&format!("submission of {}", report.key), &bytes)?);
            }
        }
        if let Some(message) = &mut report.message {
            if message.body.is_empty() {
                match self.messages.get(key).map_err(backend)? {
                    Some(body) => message.body = unpacked("message", key, &body)?.into_owned(),
                    // Never a message without its bytes: a retry would deliver nothing.
                    None => return Err(missing_body(key)),
                }
            }
        }
        if report.status == ReportStatus::Success && report.receipt.is_none() {
            if let Some(pdf) = self.receipts.get(key).map_err(backend)? {
                report.receipt = Some(unpacked("receipt", key, &pdf)?.into_owned());
            }
        }
        Ok(())
    }

    /// The receipt of a successful report stored under `key` in the base64 that results carry,
    /// kept in the receipt cache for the next poll. Only for a report whose state was just read
    /// as successful and unexpired (see `receipt_cache.rs`).
    pub(super) fn receipt_base64(&self, key: &[u8]) -> StoreResult<Option<String>> {
        if let Some(receipt) = self.receipt_cache.get(key) {
            return Ok(Some(receipt.to_string()));
        }
        match self.receipts.get(key).map_err(backend)? {
            Some(pdf) => {
                let receipt = STANDARD.encode(unpacked("receipt", key, &pdf)?);
                self.receipt_cache.insert(key, receipt.as_str().into());
                Ok(Some(receipt))
            }
            None => Ok(None),
        }
    }
}

fn missing_body(key: &[u8]) -> StoreError {
    StoreError::Corrupt(format!(
        "report {}: its stored message has no body",
        String::from_utf8_lossy(key).replace('\0', "/")
    ))
}
