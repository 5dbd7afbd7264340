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
    refuse_control_characters(&mut doc);
    doc
}

/// The values the handlers refuse with a control character in them (customer ids, the names of
/// facilities and mailbox accounts, street and city): said with an unanchored `not`, which the
/// attributes of the derive macros cannot write (see `control_characters` for why not `^…$`).
fn refuse_control_characters(doc: &mut Value) {
    let not = crate::module_layer::openapi::schema::control_characters();
    if let Some(Value::Object(paths)) = doc.get_mut("paths") {
        for operation in paths.values_mut().filter_map(Value::as_object_mut) {
            for operation in operation.values_mut() {
                let Some(Value::Array(parameters)) = operation.get_mut("parameters") else {
                    continue;
                };
                for parameter in parameters.iter_mut() {
                    if parameter["name"] == "customer" {
                        parameter["schema"]["not"] = not.clone();
                    }
                }
            }
        }
    }
    let schemas = &mut doc["components"]["schemas"];
    for (schema, member) in [
        ("NewUser", "customer"),
        ("NewCustomer", "customer"),
        ("FacilityBody", "name"),
        ("AddressBody", "street"),
        ("AddressBody", "city"),
        ("MailboxAccountBody", "name"),
    ] {
        if let Some(property) = schemas[schema]["properties"].get_mut(member) {
            property["not"] = not.clone();
        }
    }
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::Value;

    use super::{document, OPERATOR};

    /// Every `$ref` target under `value`.
    fn refs(value: &Value, out: &mut BTreeSet<String>) {
        match value {
            Value::Object(members) => {
                for (key, member) in members {
                    match (key.as_str(), member) {
                        ("$ref", Value::String(target)) => {
                            out.insert(target.clone());
                        }
                        _ => refs(member, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|item| refs(item, out)),
            _ => {}
        }
    }

    #[test]
    fn every_operation_is_an_operators_with_its_refusals_and_a_name_of_its_own() {
        let doc = document();
        let mut names = BTreeSet::new();
        let mut operations = 0;
        for (path, item) in doc["paths"].as_object().unwrap() {
            assert!(path.starts_with("/admin/"), "{path}");
            for (method, operation) in item.as_object().unwrap() {
                operations += 1;
                let name = operation["operationId"].as_str().unwrap().to_owned();
                assert!(names.insert(name.clone()), "{name} names two operations");
                assert_eq!(operation["security"], serde_json::json!([{ OPERATOR: [] }]));
                let responses = &operation["responses"];
                assert!(
                    responses["401"]["headers"]["WWW-Authenticate"].is_object(),
                    "{method} {path} lacks its 401"
                );
                assert!(
                    responses["429"].is_object(),
                    "{method} {path} lacks its 429"
                );
                if method != "get" {
                    assert!(
                        responses["403"].is_object(),
                        "{method} {path} lacks its 403"
                    );
                }
            }
        }
        assert!(operations >= 49, "{operations}");
        assert_eq!(
            doc["components"]["securitySchemes"]["operator"]["scheme"],
            "basic"
        );
        assert_eq!(
            doc["components"]["securitySchemes"]["metricsToken"]["scheme"],
            "bearer"
        );
    }

    #[test]
    fn every_reference_names_a_schema_of_the_document() {
        let doc = document();
        let mut targets = BTreeSet::new();
        refs(&doc, &mut targets);
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        for target in targets {
            let name = target.strip_prefix("#/components/schemas/").unwrap();
            assert!(schemas.contains_key(name), "{target} names no schema");
        }
    }
}
