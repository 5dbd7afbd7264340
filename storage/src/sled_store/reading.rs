//! Reading a stored report: its state alone, its result (for polls), or the whole report with
//! the parts kept in trees of their own (see `payload.rs`), each answering what the state says
//! when retention removes the parts between two reads.

use chrono::{DateTime, Utc};

use super::{backend, decode, keys, Engine};
use crate::{Report, ReportKey, ReportResult, ReportStatus, StoreError, StoreResult};

/// How errors name the report under `key`.
pub(super) fn report_what(key: &ReportKey) -> String {
    format!("report {key}")
}

/// The members of a stored [`Report`] that make up its [`ReportResult`], under `Report`'s own
/// names. serde skips what else the state holds without building it, and a receipt stored inline
/// (before the payload moved to trees of its own, see `payload.rs`) stays the base64 text it is
/// stored as: polls read reports far more often than anything else.
#[derive(serde::Deserialize)]
struct StoredResult {
    status: ReportStatus,
    submitted_at: DateTime<Utc>,
    client_reference: Option<String>,
    portal: Option<String>,
    #[serde(alias = "receipt_pdf")]
    receipt: Option<String>,
    #[serde(default)]
    receipt_media_type: Option<String>,
    failure_reason: Option<String>,
    polled: bool,
    expired_at: Option<DateTime<Utc>>,
    #[serde(default)]
    result_members: serde_json::Map<String, serde_json::Value>,
}

impl From<StoredResult> for ReportResult {
    fn from(stored: StoredResult) -> Self {
        ReportResult {
            status: stored.status,
            submitted_at: stored.submitted_at,
            client_reference: stored.client_reference,
            portal: stored.portal,
            receipt_media_type: (stored.status == ReportStatus::Success).then(|| {
                crate::Receipt::media_type_or_pdf(stored.receipt_media_type.as_deref()).into()
            }),
            receipt_base64: stored.receipt,
            failure_reason: stored.failure_reason,
            polled: stored.polled,
            expired_at: stored.expired_at,
            result_members: stored.result_members,
        }
    }
}

impl Engine {
    /// The report under `key` with its parts; without its submission if `submission` is false
    /// and a message is stored (a delivery reads nothing else of it).
    pub(super) fn read_report(
        &self,
        key: &ReportKey,
        submission: bool,
    ) -> StoreResult<Option<Report>> {
        let report_key = keys::report(key);
        let Some(bytes) = self.reports.get(&report_key).map_err(backend)? else {
            return Ok(None);
        };
        let mut report: Report = decode(&report_what(key), &bytes)?;
        let with_submission = submission || report.message.is_none();
        match self.attach_parts(&report_key, &mut report, with_submission) {
            Ok(()) => Ok(Some(report)),
            // Retention (or forgetting a refused report) removed the parts between the two
            // reads: the state, read again, says so. Only parts missing from an unchanged state
            // are an error.
            Err(missing) => match self.reports.get(&report_key).map_err(backend)? {
                Some(again) if again != bytes => self.read_report(key, submission),
                Some(_) => Err(missing),
                None => Ok(None),
            },
        }
    }

    /// The state alone of the report under `key` ([`crate::Store::report_status`]).
    pub(super) fn read_status(&self, key: &ReportKey) -> StoreResult<Option<ReportStatus>> {
        /// What the state needs of a stored report: serde skips the rest without building it.
        #[derive(serde::Deserialize)]
        struct StoredStatus {
            status: ReportStatus,
        }
        let Some(bytes) = self.reports.get(keys::report(key)).map_err(backend)? else {
            return Ok(None);
        };
        serde_json::from_slice::<StoredStatus>(&bytes)
            .map(|stored| Some(stored.status))
            .map_err(|e| StoreError::Corrupt(format!("{}: {e}", report_what(key))))
    }

    /// The result of the report under `key` ([`crate::Store::report_result`]).
    pub(super) fn read_result(&self, key: &ReportKey) -> StoreResult<Option<ReportResult>> {
        let report_key = keys::report(key);
        let Some(bytes) = self.reports.get(&report_key).map_err(backend)? else {
            return Ok(None);
        };
        let decode_result = |bytes: &[u8]| {
            serde_json::from_slice::<StoredResult>(bytes)
                .map(ReportResult::from)
                .map_err(|e| StoreError::Corrupt(format!("{}: {e}", report_what(key))))
        };
        let mut result = decode_result(&bytes)?;
        if result.status == ReportStatus::Success
            && result.expired_at.is_none()
            && result.receipt_base64.is_none()
        {
            result.receipt_base64 = self.receipt_base64(&report_key)?;
            if result.receipt_base64.is_none() {
                // Retention removed it between the two reads: the state says so now.
                return match self.reports.get(&report_key).map_err(backend)? {
                    Some(bytes) => decode_result(&bytes).map(Some),
                    None => Ok(None),
                };
            }
        }
        Ok(Some(result))
    }
}
