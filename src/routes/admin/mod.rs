//! The operator API under `/admin/api/v1/` and the dashboard at `/admin/` (operator credentials
//! from configuration).

pub mod actors;
pub mod dashboard;
pub mod jobs;
pub mod messages;
pub mod modules;
pub mod transport_health;
pub mod transport_script;
pub mod transports;
pub mod users;

use actix_web::web;

/// Registers the operator endpoints.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(dashboard::dashboard).service(
        web::scope("/admin/api/v1")
            .service(messages::delivered_message)
            .service(actors::actors)
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
            .service(users::list_users)
            .service(users::add_user)
            .service(users::change_password)
            .service(users::remove_user)
            .service(users::deposit_seal),
    );
}

/// `{"errors": [message]}` with the given status.
pub(crate) fn error(
    status: actix_web::http::StatusCode,
    message: String,
) -> actix_web::HttpResponse {
    actix_web::HttpResponse::build(status).json(serde_json::json!({ "errors": [message] }))
}
