//! `GET /api/guardianship/v1/messages`: the caller's court messages (spec/03 §4, listing rules
//! 1 to 4), with the repeatable filters `jobId` and `safeId` and `since`.

use actix_web::HttpResponse;
use chrono::{DateTime, SecondsFormat, Utc};
use meldewerk_storage::{
    CourtMessage, CourtMessageDirection, CourtMessageFilter, SafeId, MAX_COURT_MESSAGE_PAGE,
};
use serde::Serialize;

use crate::module_layer::api_call::ApiCall;
use crate::module_layer::errors::{ApiError, ModuleError, Violation};
use crate::module_layer::memento::MAX_ID;

/// Most values of one filter a listing takes.
pub(super) const MAX_FILTER_VALUES: usize = 100;

/// A court message as the contract shows it (spec/03 §2.1).
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MessageResource {
    /// The message's index id, for download and acknowledgement.
    id: u64,
    /// The mailbox server's id of the message.
    message_id: String,
    /// The integrator's job the message belongs to; null for messages no job of the service
    /// names (unsolicited, or not yet read).
    job_id: Option<String>,
    /// The case reference; null until the message was read.
    aktenzeichen: Option<String>,
    /// `INCOMING` (from a court) or `OUTGOING` (sent through the service).
    #[schema(schema_with = direction)]
    direction: CourtMessageDirection,
    /// When the message arrived at the mailbox server (UTC).
    #[schema(format = DateTime)]
    created_at: String,
    /// When it was first retrieved (UTC); null before.
    #[schema(format = DateTime)]
    received_at: Option<String>,
    /// When the service downloaded and read it (UTC); null before, and for unreadable content.
    #[schema(format = DateTime)]
    hydrated_at: Option<String>,
    /// The relative URL of its download.
    #[schema(format = "uri-reference")]
    url: String,
}

fn direction() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .enum_values(Some(["INCOMING", "OUTGOING"]))
        .build()
}

/// A timestamp as the contract writes them: UTC, whole seconds, `Z`.
pub(crate) fn utc(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

impl From<CourtMessage> for MessageResource {
    fn from(m: CourtMessage) -> Self {
        MessageResource {
            url: format!("/api/guardianship/v1/download/{}", m.id),
            id: m.id,
            message_id: m.message_id,
            job_id: m.job_id,
            aktenzeichen: m.aktenzeichen,
            direction: m.direction,
            created_at: utc(m.created_at),
            received_at: m.received_at.map(utc),
            hydrated_at: m.hydrated_at.map(utc),
        }
    }
}

/// The listing's filters, read from the query string.
#[derive(Debug, Default, PartialEq)]
struct Query {
    job_ids: Vec<String>,
    safe_ids: Vec<SafeId>,
    since: Option<DateTime<Utc>>,
}

/// Reads the query string: `jobId` and `safeId` repeatable, `since` once, nothing else. Every
/// problem at once.
fn read_query(query: &str) -> Result<Query, Vec<Violation>> {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query).map_err(|e| {
        vec![Violation::whole(format!(
            "the query string cannot be read: {e}"
        ))]
    })?;
    let mut read = Query::default();
    let mut problems = Vec::new();
    for (name, value) in pairs {
        match name.as_str() {
            "jobId" if value.is_empty() || value.chars().count() > MAX_ID => {
                problems.push(Violation::at(
                    "/jobId",
                    format!("jobId must have 1 to {MAX_ID} characters"),
                ))
            }
            "jobId" => read.job_ids.push(value),
            "safeId" => match SafeId::parse(&value) {
                Ok(safe_id) => read.safe_ids.push(safe_id),
                Err(e) => problems.push(Violation::at("/safeId", format!("safeId {e}"))),
            },
            "since" if read.since.is_some() => {
                problems.push(Violation::at("/since", "since may be given once"))
            }
            "since" => match DateTime::parse_from_rfc3339(&value) {
                Ok(since) => read.since = Some(since.with_timezone(&Utc)),
                Err(_) => problems.push(Violation::at(
                    "/since",
                    "since must be an ISO 8601 date-time with a time zone, e.g. \
                     2026-11-26T08:00:00Z or 2026-11-26T09:00:00+01:00",
                )),
            },
            other => problems.push(Violation::whole(format!(
                "unknown query parameter {:?}; the listing takes jobId, safeId and since",
                crate::telemetry::log_str(other)
            ))),
        }
    }
    if read.job_ids.len() > MAX_FILTER_VALUES || read.safe_ids.len() > MAX_FILTER_VALUES {
        problems.push(Violation::whole(format!(
            "at most {MAX_FILTER_VALUES} values of jobId and of safeId"
        )));
    }
    match problems.is_empty() {
        true => Ok(read),
        false => Err(problems),
    }
}

/// `GET /messages`: the messages of the accounts the caller is granted, oldest index id first.
pub(super) async fn list(call: ApiCall) -> Result<HttpResponse, ModuleError> {
    let fail = |e: ApiError| call.error(e);
    let query = read_query(call.req.query_string()).map_err(|v| fail(ApiError::Validation(v)))?;
    let store = call.store();
    let mut accounts = store
        .mailbox_accounts_of(&call.user.0.name)
        .await
        .map_err(|e| fail(e.into()))?;
    if !query.safe_ids.is_empty() {
        let wanted: Vec<String> = query.safe_ids.iter().map(SafeId::folded).collect();
        accounts.retain(|a| wanted.contains(&a.safe_id.folded()));
    }
    let filter = CourtMessageFilter {
        accounts: accounts.iter().map(|a| a.egvp_account_id).collect(),
        since: query.since,
        job_ids: (!query.job_ids.is_empty()).then_some(query.job_ids),
    };
    let mut listed: Vec<MessageResource> = Vec::new();
    let mut after = None;
    while !filter.accounts.is_empty() {
        let page = store
            .court_messages(&filter, after, MAX_COURT_MESSAGE_PAGE)
            .await
            .map_err(|e| fail(e.into()))?;
        let full = page.len() == MAX_COURT_MESSAGE_PAGE;
        after = page.last().map(|m| m.id);
        listed.extend(page.into_iter().map(MessageResource::from));
        if !full {
            break;
        }
    }
    Ok(HttpResponse::Ok().json(listed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_repeat_and_bad_values_are_all_named() {
        let query =
            read_query("jobId=a&jobId=b&safeId=DE.Justiz.x&since=2026-11-26T09:00:00%2B01:00")
                .unwrap();
        assert_eq!(query.job_ids, ["a", "b"]);
        assert_eq!(query.safe_ids[0].as_str(), "DE.Justiz.x");
        assert_eq!(utc(query.since.unwrap()), "2026-11-26T08:00:00Z");
        let problems = read_query("since=yesterday&safeId=nope&jobId=&colour=red").unwrap_err();
        let pointers: Vec<Option<&str>> = problems.iter().map(|v| v.pointer.as_deref()).collect();
        assert_eq!(
            pointers,
            [Some("/since"), Some("/safeId"), Some("/jobId"), None]
        );
        assert!(
            read_query("since=2026-11-26T08:00:00").is_err(),
            "no time zone"
        );
        assert_eq!(read_query(""), Ok(Query::default()));
    }
}
