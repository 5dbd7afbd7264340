//! The operator API under `/admin/api/v1/` and the dashboard at `/admin/` (operator credentials
//! from configuration).

pub mod actors;
pub mod certificates;
pub mod court_messages;
mod cross_site;
mod dashboard;
pub mod facilities;
mod failure;
pub mod jobs;
pub mod mailbox_accounts;
pub mod messages;
pub mod modules;
pub(crate) mod openapi;
pub mod transport_health;
pub mod transport_mailbox;
pub mod transport_script;
pub mod transports;
pub mod users;

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::{middleware, web, HttpResponse};
use chrono::Utc;
use meldewerk_storage::{AuditEntry, Store, StoreError};

use crate::telemetry::log_str;

/// Registers the operator endpoints and the dashboard; state-changing requests of other sites
/// are refused before any of them ([`cross_site`]).
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/admin/api/v1")
            .wrap(middleware::from_fn(cross_site::refuse_cross_site))
            .service(messages::delivered_message)
            .service(actors::actors)
            .service(actors::nodes)
            .service(jobs::list)
            .service(jobs::retry)
            .service(jobs::discard)
            .service(jobs::audit_log)
            .service(modules::pause)
            .service(modules::resume)
            .service(transport_health::transports)
            .service(transports::received)
            .service(transport_script::get_script)
            .service(transport_script::put_script)
            .service(transport_script::add_rule)
            .service(transport_script::reset_script)
            .service(transport_mailbox::post_message)
            .service(transport_mailbox::list_messages)
            .service(transport_mailbox::get_message)
            .service(transport_mailbox::delete_message)
            .service(users::list_users)
            .service(users::add_user)
            .service(users::change_password)
            .service(users::set_email)
            .service(users::remove_user)
            .service(users::deposit_seal)
            .service(users::set_customer)
            .service(users::set_magic_links)
            .service(facilities::list)
            .service(facilities::show)
            .service(facilities::put_facility)
            .service(facilities::remove)
            .service(facilities::get_scope)
            .service(facilities::put_scope)
            .service(certificates::list)
            .service(certificates::deposit)
            .service(certificates::remove)
            .service(court_messages::list)
            .service(mailbox_accounts::list)
            .service(mailbox_accounts::show)
            .service(mailbox_accounts::put_account)
            .service(mailbox_accounts::remove)
            .service(mailbox_accounts::grant)
            .service(mailbox_accounts::revoke)
            .service(mailbox_accounts::of_user),
    );
    // After the API's scope, which owns `/admin/api/v1/`.
    dashboard::configure(cfg);
}

pub(crate) use dashboard::DashboardPages;

/// `{"errors": [message]}` with the given status.
pub(crate) fn error(
    status: actix_web::http::StatusCode,
    message: String,
) -> actix_web::HttpResponse {
    actix_web::HttpResponse::build(status).json(serde_json::json!({ "errors": [message] }))
}

/// Records an operator's action in the audit log (durable before the caller answers) and logs it
/// at warn: `who` did `action` (`pause`, `deposit-seal`, …) to `target` (`module birthnotice`,
/// `user klinik`, …). Targets name things, never personal data such as an address.
pub(crate) async fn audit(
    store: &Arc<dyn Store>,
    who: &str,
    action: &str,
    target: String,
) -> Result<(), StoreError> {
    tracing::warn!(who = %log_str(who), action, target = %log_str(&target), "operator action");
    let entry = AuditEntry {
        at: Utc::now(),
        who: who.to_owned(),
        action: action.to_owned(),
        target,
    };
    store.append_audit(entry).await.map(|_| ())
}

/// Records `operator`'s `action` on `target` once `answer` says it succeeded, and hands the
/// answer on (500 or 503 when the record cannot be written).
pub(crate) async fn audited(
    answer: HttpResponse,
    store: &Arc<dyn Store>,
    operator: &crate::auth::Operator,
    action: &str,
    target: String,
) -> HttpResponse {
    if !answer.status().is_success() {
        return answer;
    }
    match audit(store, &operator.0, action, target).await {
        Ok(()) => answer,
        Err(e) => store_failed(e),
    }
}

/// A store failure as the operator API answers it, logged with its cause: 503 with
/// `Retry-After` while the store is unavailable (a full disk; nothing was changed), else 500
/// `{"errors": ["internal error"]}`.
pub(crate) fn store_failed(e: impl std::borrow::Borrow<StoreError>) -> HttpResponse {
    let e = e.borrow();
    if e.is_unavailable() {
        tracing::warn!(error = %e, "operator API refused: the store is unavailable");
        return crate::module_layer::unavailable_response(crate::module_layer::UNAVAILABLE_MESSAGE);
    }
    tracing::error!(error = %e, "store failed in the operator API");
    error(StatusCode::INTERNAL_SERVER_ERROR, "internal error".into())
}

/// Why an operator action (retry, discard, pause, resume) was not done; the API answers it in its
/// JSON shape ([`ActionFailure::json`]), the dashboard as a page.
#[derive(Debug)]
pub(crate) enum ActionFailure {
    /// Refused with this status and message (an unknown job or module, a job being worked on).
    Refused(StatusCode, String),
    /// The store failed.
    Store(StoreError),
}

impl ActionFailure {
    /// `{"errors": [message]}` with the status; a store failure as [`store_failed`] answers it.
    pub(crate) fn json(self) -> HttpResponse {
        match self {
            ActionFailure::Refused(status, message) => error(status, message),
            ActionFailure::Store(e) => store_failed(e),
        }
    }
}

impl From<StoreError> for ActionFailure {
    fn from(e: StoreError) -> Self {
        ActionFailure::Store(e)
    }
}

impl crate::transports::NoSimulator {
    /// The answer: `{"errors": [message]}` with the status.
    pub(crate) fn answer(self) -> HttpResponse {
        error(self.status, self.message)
    }
}
