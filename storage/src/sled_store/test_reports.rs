//! Reports as the forms dispatch them, for the sled engine's unit tests.

use chrono::Utc;

use crate::{PreparedMessage, Report, ReportKey};

/// The key of alice's report `id` of `module`.
pub(super) fn key(module: &str, id: &str) -> ReportKey {
    ReportKey {
        owner: "alice".into(),
        module: module.into(),
        id: id.into(),
    }
}

/// A report as the form dispatches it: with its message ([`prepared`]), under idempotency key
/// `idem-{id}`.
pub(super) fn dispatched(module: &str, id: &str) -> Report {
    let mut report = Report::new_pending(
        key(module, id),
        serde_json::json!({ "kind": { "vorname": "Erika" } }),
        None,
        format!("idem-{id}"),
        Utc::now(),
    );
    report.message = Some(prepared(id));
    report
}

/// The message of report `id`, its UUID `uuid-{id}`.
pub(super) fn prepared(id: &str) -> PreparedMessage {
    PreparedMessage {
        message_uuid: format!("uuid-{id}"),
        content_type: "application/xml".into(),
        body: b"<msg/>".to_vec(),
        signature: None,
        prepared_at: Utc::now(),
        sender: None,
    }
}
