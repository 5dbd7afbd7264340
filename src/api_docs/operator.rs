//! The operators' part of the combined document: the operator API under `/admin/api/v1/` (with
//! the simulated transports' operator routes), the dashboard under `/admin/`, and the security
//! schemes only operators and scrapers use. The routes are described at their handlers
//! (`#[utoipa::path]`, path and method taken from the actix route macro) and listed in
//! [`AdminApi`] and [`DashboardPages`]; here they are put under their scopes.

use serde_json::{json, Value};
use utoipa::OpenApi;

use crate::routes::admin::openapi::AdminApi;
use crate::routes::admin::DashboardPages;

/// Name of the operators' security scheme: HTTP Basic with the configured operator credentials.
pub(crate) const OPERATOR: &str = "operator";
/// Name of the metrics scrapers' security scheme: the metrics token as a bearer token.
pub(crate) const METRICS_TOKEN: &str = "metricsToken";

/// The operator API and the dashboard under the scopes `routes::admin::configure` gives them.
#[derive(OpenApi)]
#[openapi(
    nest(
        (path = "/admin/api/v1", api = AdminApi),
        (path = "/admin", api = DashboardPages),
    ),
    tags(
        (name = "operator", description = "The operator API: engine health, the queue, \
            modules, API users, facilities, certificates, mailbox accounts, the audit log"),
        (name = "transports", description = "Simulated authorities, for testers: their \
            script, what they received, their court mailboxes"),
        (name = "dashboard", description = "The operators' dashboard (HTML pages and forms)"),
    ),
)]
struct OperatorApi;

/// The operators' part: paths, schemas, tags and the security schemes [`OPERATOR`] and
/// [`METRICS_TOKEN`] (under `components/securitySchemes`).
pub(super) fn document() -> Value {
    let mut doc = serde_json::to_value(OperatorApi::openapi()).expect("a document serializes");
    if let Some(Value::Object(paths)) = doc.get_mut("paths") {
        for (path, item) in paths.iter_mut() {
            let tag = if path.starts_with("/admin/api/v1/transports/{name}/") {
                "transports"
            } else if path.starts_with("/admin/api/v1/") {
                "operator"
            } else {
                "dashboard"
            };
            let Value::Object(operations) = item else {
                continue;
            };
            // Every route under `/admin/` asks for the operator's credentials (the `Operator`
            // extractor), so the scheme is named here once rather than at each handler.
            for operation in operations.values_mut() {
                operation["tags"] = json!([tag]);
                operation["security"] = json!([{ OPERATOR: [] }]);
            }
        }
    }
    doc["components"]["securitySchemes"] = security_schemes();
    doc
}

/// The schemes of operators and metrics scrapers.
fn security_schemes() -> Value {
    json!({
        OPERATOR: {
            "type": "http",
            "scheme": "basic",
            "description": "The operator credentials of configuration (`operator.username`, \
                `operator.password`); failed logins are limited like the API users'.",
        },
        METRICS_TOKEN: {
            "type": "http",
            "scheme": "bearer",
            "description": "The metrics token of configuration (`metrics.token`), for `/metrics` \
                only.",
        },
    })
}
