//! The archive's metadata file ([`METADATA_FILE`](super::METADATA_FILE)), format 1, as JSON.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;

use super::super::summary::MessageSummary;
use super::Direction;

/// The version of the metadata layout; raised when a member changes meaning or goes away.
pub(super) const FORMAT: u32 = 1;

/// `meldewerk.json`: who sent what when, what was read from the XML, and each stored file.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Metadata<'a> {
    pub format: u32,
    pub message_id: &'a str,
    pub account_safe_id: &'a str,
    pub direction: Direction,
    pub created_at: String,
    pub received_at: Option<String>,
    pub hydrated_at: String,
    /// What [`read_message`](super::super::read_message) found; `null` when the XML could not
    /// be read (then `readError` says why).
    pub xjustiz: Option<&'a MessageSummary>,
    pub read_error: Option<&'a str>,
    /// The XML itself, then every attachment, in the sender's order.
    pub files: Vec<StoredFile<'a>>,
}

/// One entry of the archive besides the metadata file.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct StoredFile<'a> {
    /// The entry's name in the ZIP.
    pub stored_name: &'a str,
    /// The name the sender gave (`null` for the XML, whose name is fixed).
    pub original_name: Option<&'a str>,
    pub size: u64,
    /// Lowercase hex SHA-256 of the bytes.
    pub sha256: String,
}

/// UTC with whole seconds and `Z`, as the API's timestamps.
pub(super) fn utc(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Lowercase hex SHA-256 of `bytes`.
pub(super) fn sha256(bytes: &[u8]) -> String {
    hex::encode(ring::digest::digest(&ring::digest::SHA256, bytes))
}
