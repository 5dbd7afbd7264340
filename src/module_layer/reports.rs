//! `GET /api/{module}/v1/reports` and `GET /api/{module}/v1/reports/{id}[?peek=true]`, for every module.

use super::rfc3339;
use actix_web::{web, HttpRequest, HttpResponse};
use meldewerk_storage::{Consumed, ReportKey, ReportResult, ReportStatus, Store};
use serde::Serialize;

use super::api_call::ApiCall;
use super::context::ModuleContext;
use super::errors::{ApiError, ModuleError, Violation};
use super::{mock, ExpiredAnswer, ModuleInfo};
use crate::auth::ApiUser;

/// The members of a result body before `receiptPdf`, serialized from borrowed fields. Members
/// in alphabetical order; `clientReference` only for modules that echo it (then `null` when
/// absent).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResultHead<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    client_reference: Option<Option<&'a str>>,
    failure_reason: Option<&'a str>,
    id: &'a str,
    module: &'a str,
    portal: Option<&'a str>,
}

/// The members of a result body after `receiptPdf`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResultTail {
    status: ReportStatus,
    submitted_at: String,
}

/// The result body of a stored report: `{head…, "receiptPdf": …, tail…}`. The receipt, some
/// 4,000 characters of base64 and most of the body, is written as it is when it holds nothing
/// JSON escapes (base64 never does): serializing it as a string looks at every character for
/// escapes, and polls are frequent. Serde writes every other member.
fn result_body(context: &ModuleContext, id: &str, report: &ReportResult) -> Vec<u8> {
    let head = ResultHead {
        client_reference: context
            .info
            .echoes_client_reference
            .then_some(report.client_reference.as_deref()),
        failure_reason: (report.status == ReportStatus::Failure)
            .then_some(report.failure_reason.as_deref())
            .flatten(),
        id,
        module: context.info.module,
        portal: report.portal.as_deref(),
    };
    let tail = ResultTail {
        status: report.status,
        submitted_at: rfc3339(report.submitted_at),
    };
    let receipt = (report.status == ReportStatus::Success)
        .then_some(report.receipt_base64.as_deref())
        .flatten();
    joined(&head, receipt, &tail)
}

/// `head` and `tail`, each serialized to an object with members, joined around `receiptPdf`.
fn joined(head: &impl Serialize, receipt: Option<&str>, tail: &impl Serialize) -> Vec<u8> {
    let head = serde_json::to_vec(head).expect("a result head serializes");
    let tail = serde_json::to_vec(tail).expect("a result tail serializes");
    let mut body = Vec::with_capacity(head.len() + tail.len() + receipt.map_or(4, str::len) + 16);
    // Both are objects with members: `{…}`, joined without their inner braces.
    body.extend_from_slice(&head[..head.len() - 1]);
    body.extend_from_slice(b",\"receiptPdf\":");
    match receipt {
        Some(base64) if !needs_escaping(base64) => {
            body.push(b'"');
            body.extend_from_slice(base64.as_bytes());
            body.push(b'"');
        }
        other => serde_json::to_writer(&mut body, &other).expect("a string serializes"),
    }
    body.push(b',');
    body.extend_from_slice(&tail[1..]);
    body
}

/// `GET /api/{module}/v1/reports`: ids of the caller's dispatched reports not yet consumed
/// (of a module answering at once: its successful ones).
#[tracing::instrument(name = "pending_list", skip_all, fields(module = call.context.info.module))]
pub(crate) async fn list_pending(call: ApiCall) -> Result<HttpResponse, ModuleError> {
    let mut ids = call
        .store()
        .pending_ids(&call.user.0.name, call.context.info.module)
        .await
        .map_err(|e| call.error(e.into()))?;
    if !every_report_is_a_result(&call.context) {
        ids = results_among(&call, ids).await.map_err(|e| call.error(e))?;
    }
    Ok(HttpResponse::Ok().json(ids))
}

/// Whether every report of the module is a result, whatever its state (the default).
fn every_report_is_a_result(context: &ModuleContext) -> bool {
    context.info.at_once.is_none() && context.module.pending_is_a_result()
}

/// Whether a report in `status` is a result the module's reads answer and its pending list
/// names: of a module answering at once only a successful one (one in delivery, or refused and
/// not yet forgotten, is none); of a module whose contract knows only final results a decided
/// one ([`super::Module::pending_is_a_result`]); else any.
fn is_result(context: &ModuleContext, status: ReportStatus) -> bool {
    if context.info.at_once.is_some() {
        status == ReportStatus::Success
    } else if !context.module.pending_is_a_result() {
        status.is_final()
    } else {
        true
    }
}

/// Those of `ids` whose report is a result ([`is_result`]).
async fn results_among(call: &ApiCall, ids: Vec<String>) -> Result<Vec<String>, ApiError> {
    let ApiCall { user, context, .. } = call;
    let store = call.store();
    let mut kept = Vec::with_capacity(ids.len());
    for id in ids {
        let key = key(user, context.info, &id);
        // The state alone: a receipt read and encoded per listed id would make each list
        // cost every unretrieved receipt.
        let status = store.report_status(&key).await?;
        if status.is_some_and(|status| is_result(context, status)) {
            kept.push(key.id);
        }
    }
    Ok(kept)
}

/// Whether `peek` asks for a non-consuming read. Anything but `true`/`false`, a second `peek`,
/// and any other parameter is a 400 naming it: a misspelt `peek` must not consume a result.
pub(crate) fn parse_peek(req: &HttpRequest) -> Result<bool, ApiError> {
    let mut peek = None;
    let mut problems = Vec::new();
    for (name, value) in url_pairs(req.query_string()) {
        if name != "peek" {
            problems.push(Violation::whole(format!(
                "unknown query parameter {:?}; only peek is read",
                bounded(&name)
            )));
            continue;
        }
        let read = match value.as_str() {
            "true" => true,
            "false" => false,
            other => {
                problems.push(Violation::whole(format!(
                    "peek must be true or false, got {:?}",
                    bounded(other)
                )));
                continue;
            }
        };
        if peek.replace(read).is_some() {
            problems.push(Violation::whole("peek must be given at most once"));
        }
    }
    if problems.is_empty() {
        Ok(peek.unwrap_or(false))
    } else {
        Err(ApiError::Validation(problems))
    }
}

/// At most 64 characters of a client's text, for an error message.
fn bounded(text: &str) -> String {
    text.chars().take(64).collect()
}

fn url_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let decode = |s: &str| {
                percent_encoding::percent_decode_str(&s.replace('+', " "))
                    .decode_utf8_lossy()
                    .into_owned()
            };
            (decode(k), decode(v))
        })
        .collect()
}

/// `GET /api/{module}/v1/reports/{id}[?peek=true]`: the result. Without `peek` a final result is
/// consumed (atomically: of two concurrent reads one gets 200, the other 410).
#[tracing::instrument(name = "report_read", skip_all, fields(module = call.context.info.module))]
pub(crate) async fn get_report(
    call: ApiCall,
    id: web::Path<String>,
) -> Result<HttpResponse, ModuleError> {
    read(&call, &id).await.map_err(|e| call.error(e))
}

/// The key of the caller's report `id` of the module.
pub(crate) fn key(user: &ApiUser, info: &ModuleInfo, id: &str) -> ReportKey {
    ReportKey {
        owner: user.0.name.clone(),
        module: info.module.into(),
        id: id.into(),
    }
}

/// What a read of report `id` answers once retention removed its payload.
fn expired(info: &ModuleInfo, id: &str) -> ApiError {
    match info.expired {
        ExpiredAnswer::Gone => ApiError::Expired(id.to_owned()),
        ExpiredAnswer::NotFound => ApiError::NotFound(id.to_owned()),
    }
}

/// The stored result of the report `key`, read without changing anything (retrieved or not);
/// 404 when there is none (not dispatched, unknown, another user's), the module's expired
/// answer once retention removed its payload.
pub(crate) async fn stored_result(
    store: &dyn Store,
    key: &ReportKey,
    info: &ModuleInfo,
) -> Result<ReportResult, ApiError> {
    match store.report_result(key).await? {
        Some(result) if result.expired_at.is_some() => Err(expired(info, &key.id)),
        Some(result) => Ok(result),
        None => Err(ApiError::NotFound(key.id.clone())),
    }
}

async fn read(call: &ApiCall, id: &str) -> Result<HttpResponse, ApiError> {
    let ApiCall {
        req, user, context, ..
    } = call;
    let store = call.store();
    let peek = parse_peek(req)?;
    let info = context.info;
    if let Some(outcome) = mock::outcome(info, id) {
        return Ok(HttpResponse::Ok().json(mock::result(info, id, outcome)));
    }
    let key = key(user, info, id);
    let only_results = !every_report_is_a_result(context);
    if only_results {
        // A report that is no result (yet) answers as if there were none, and is not consumed
        // (a refused one of a module answering at once, say). Only a first look: the report
        // may change before the read below, which is checked again.
        let status = store.report_status(&key).await?;
        if status.is_some_and(|status| !is_result(context, status)) {
            return Err(ApiError::NotFound(id.into()));
        }
    }
    let result = if peek {
        match stored_result(store, &key, info).await? {
            result if result.polled => return Err(ApiError::AlreadyRetrieved(id.into())),
            result => result,
        }
    } else {
        match store.consume_report(&key).await? {
            Consumed::Result(result) => result,
            Consumed::AlreadyRetrieved => return Err(ApiError::AlreadyRetrieved(id.into())),
            Consumed::Expired => return Err(expired(info, id)),
            Consumed::NotFound => return Err(ApiError::NotFound(id.into())),
        }
    };
    // The result answered is the one checked: a report dispatched since the first look comes
    // back PENDING (never consumed) and is no result either.
    if only_results && !is_result(context, result.status) {
        return Err(ApiError::NotFound(id.into()));
    }
    if let Some(body) = context.module.result_body(id, &result) {
        return Ok(HttpResponse::Ok().json(body));
    }
    Ok(HttpResponse::Ok()
        .content_type("application/json")
        .body(result_body(context, id, &result)))
}

/// Whether JSON escapes any character of `text`. Without an early exit, so that the compiler
/// checks many bytes at a time: the answer is almost always "no", after the whole receipt.
fn needs_escaping(text: &str) -> bool {
    text.bytes().fold(false, |found, b| {
        found | (b == b'"') | (b == b'\\') | (b < 0x20)
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    fn parsed(receipt: Option<&str>) -> Value {
        let body = joined(
            &json!({"id": "a\"b", "module": "m"}),
            receipt,
            &json!({"status": "X"}),
        );
        serde_json::from_slice(&body).expect("the body is JSON")
    }

    #[test]
    fn the_receipt_stands_between_head_and_tail() {
        assert_eq!(
            parsed(Some("JVBERi0xLjc+/w==")),
            json!({"id": "a\"b", "module": "m", "receiptPdf": "JVBERi0xLjc+/w==", "status": "X"})
        );
        assert_eq!(
            parsed(None),
            json!({"id": "a\"b", "module": "m", "receiptPdf": null, "status": "X"})
        );
    }

    #[test]
    fn a_receipt_that_is_not_base64_is_escaped_all_the_same() {
        let odd = "a\"b\\c\n\u{1}d";
        assert_eq!(parsed(Some(odd))["receiptPdf"], json!(odd));
    }

    /// Each character JSON escapes takes the escaping path alone; everything else, a space
    /// and letters beyond ASCII included, is written as it is.
    #[test]
    fn only_quotes_backslashes_and_control_characters_need_escaping() {
        for plain in ["JVBERi0xLjc+/w==", " ", "äöü €", ""] {
            assert!(!needs_escaping(plain), "{plain:?}");
            assert_eq!(parsed(Some(plain))["receiptPdf"], json!(plain));
        }
        // Alone, in a row and mixed: the answer once found stays.
        let odd = [
            "a\"b", "a\\b", "a\nb", "\u{1f}", "\u{0}", "\n\n", "\"\u{1}", "\"\\",
        ];
        for odd in odd {
            assert!(needs_escaping(odd), "{odd:?}");
            assert_eq!(parsed(Some(odd))["receiptPdf"], json!(odd));
        }
    }
}
