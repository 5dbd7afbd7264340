//! `GET /admin/api/v1/reports/{module}/{id}/message`: the exact message a report delivers.

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::{get, web, HttpResponse};
use meldewerk_storage::{Report, ReportKey, Store, StoreResult};

use super::error;
use super::openapi::{Errors, Refusals};
use crate::auth::Operator;

/// A report as an operator names it: by module and id, and by owner where several API users
/// have that id.
pub(crate) enum Named {
    /// The one report so named.
    Found(Box<Report>),
    /// No report so named.
    Missing,
    /// Several owners have a report with this module and id; the owner must be named.
    Several(Vec<String>),
}

/// The report of `module` with `id`, of `owner` when given (needed only when several API users
/// have that id).
pub(crate) async fn named_report(
    store: &Arc<dyn Store>,
    module: &str,
    id: &str,
    owner: Option<&str>,
) -> StoreResult<Named> {
    let key = match owner {
        Some(owner) => ReportKey {
            owner: owner.to_owned(),
            module: module.to_owned(),
            id: id.to_owned(),
        },
        None => {
            let mut keys = store.reports_with_id(module, id).await?;
            match keys.len() {
                0 => return Ok(Named::Missing),
                1 => keys.remove(0),
                _ => return Ok(Named::Several(keys.into_iter().map(|k| k.owner).collect())),
            }
        }
    };
    Ok(match store.report(&key).await? {
        Some(report) => Named::Found(Box::new(report)),
        None => Named::Missing,
    })
}

/// Optional owner, needed only when several API users have a report with this id.
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MessageQuery {
    /// The API user who owns the report; needed only when several have a report with this id.
    user: Option<String>,
}

/// The message's bytes (built and signed at dispatch, delivered as they are) with their media
/// type; headers name the message UUID, its SHA-256 and the signature kind. 404 when there is no
/// such report or nothing was built yet; 409 when the id exists for several users and `?user=`
/// is missing.
#[utoipa::path(
    params(
        ("module" = String, Path, description = "The module's path segment (`birthnotice`)."),
        ("id" = String, Path, description = "The report's id."),
        MessageQuery,
    ),
    responses(
        (status = 200, description = "The message's bytes as delivered, in their own media type \
            (XML, FHIR JSON, a multipart package).",
            content((Vec<u8> = "application/octet-stream")),
            headers(
                ("X-Message-UUID" = String, description = "The message's UUID."),
                ("X-Message-SHA256" = String, description = "SHA-256 of the bytes, lower-case hex."),
                ("X-Signature-Kind" = String, description = "How it is signed; absent when unsigned."),
            )),
        (status = 404, description = "No such report, or its message is not built yet or was \
            removed by retention.", body = Errors),
        (status = 409, description = "Several API users have a report with this id: add `?user=`.",
            body = Errors),
        Refusals,
    ),
)]
#[get("/reports/{module}/{id}/message")]
pub async fn delivered_message(
    _operator: Operator,
    path: web::Path<(String, String)>,
    query: web::Query<MessageQuery>,
    store: web::Data<Arc<dyn Store>>,
) -> HttpResponse {
    let (module, id) = path.into_inner();
    let report = match named_report(&store, &module, &id, query.user.as_deref()).await {
        Ok(Named::Found(report)) => report,
        Ok(Named::Missing) => {
            return error(
                StatusCode::NOT_FOUND,
                format!("no {module} report with id {id}"),
            )
        }
        Ok(Named::Several(owners)) => {
            return error(
                StatusCode::CONFLICT,
                format!(
                    "id {id} exists for several users ({}); add ?user=",
                    owners.join(", ")
                ),
            )
        }
        Err(e) => return super::store_failed(e),
    };
    let Some(message) = report.message else {
        let why = if report.expired_at.is_some() {
            "its payload was removed by retention"
        } else {
            "its message has not been built yet"
        };
        return error(StatusCode::NOT_FOUND, format!("report {id}: {why}"));
    };
    let sha256 = sha256_hex(&message.body);
    let mut response = HttpResponse::Ok();
    response
        .content_type(message.content_type.as_str())
        .insert_header(("X-Message-UUID", message.message_uuid.as_str()))
        .insert_header(("X-Message-SHA256", sha256));
    if let Some(signature) = &message.signature {
        response.insert_header(("X-Signature-Kind", signature.kind.as_str()));
    }
    response.body(message.body)
}

/// The SHA-256 of a message's bytes in lower-case hex, as `X-Message-SHA256` and the dashboard
/// show it.
pub(crate) fn sha256_hex(body: &[u8]) -> String {
    hex::encode(ring::digest::digest(&ring::digest::SHA256, body))
}
