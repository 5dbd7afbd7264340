//! The simulator process's own OpenAPI 3.1 document, served at [`PATH`]: the routes every
//! simulator has (the testers' script, received log and mailbox drops, the mailbox face, health;
//! described at their handlers in [`super::routes`]) and those of its protocol (the wire
//! protocol's `/deliveries` and `/acknowledgements`, or the authority's FHIR operation).

use actix_web::{get, web, HttpResponse};
use meldewerk_transports::{Protocol, TransportKind};
use serde_json::{json, Value};
use utoipa::OpenApi;

use super::routes::{CommonRoutes, WireRoutes};
use super::Shared;

/// Where the process serves its document.
pub(super) const PATH: &str = "/api-docs/openapi.json";

/// The document of the simulator `kind`.
pub(super) fn document(kind: &TransportKind) -> Value {
    let mut api = CommonRoutes::openapi();
    if matches!(kind.protocol, Protocol::Wire) {
        api.merge(WireRoutes::openapi());
    }
    let mut doc = serde_json::to_value(api).expect("a document serializes");
    let paths = doc["paths"]
        .as_object_mut()
        .expect("the document has paths");
    if let Protocol::FhirOperation { operation } = kind.protocol {
        paths.extend(super::fhir::paths(operation));
    }
    paths.insert(
        PATH.into(),
        json!({"get": {
            "tags": ["testers"],
            "operationId": "openapi",
            "summary": "This document",
            "responses": {"200": {
                "description": "An OpenAPI 3.1 document.",
                "content": {"application/json": {"schema": {"type": "object"}}},
            }},
        }}),
    );
    // The host check answers before any route (see `hosts`): every operation can meet it.
    for item in paths.values_mut() {
        if let Value::Object(operations) = item {
            for operation in operations.values_mut() {
                operation["responses"]["421"] = json!({
                    "description": "The request's `Host` is none the process answers to.",
                    "content": {"application/json": {
                        "schema": {"$ref": "#/components/schemas/WireError"},
                    }},
                });
            }
        }
    }
    doc["info"] = json!({
        "title": format!("meldewerk simulator {}", kind.name),
        "version": env!("CARGO_PKG_VERSION"),
        "description": "A simulated authority as its own process (`meldewerk simulate`): its \
            protocol, and for testers its script, received log and mailbox drops. It asks for \
            no credentials.",
    });
    doc["tags"] = json!([
        {"name": "wire", "description": "The wire protocol (docs/testing-integrations.md)"},
        {"name": "fhir", "description": "The authority's own FHIR operation"},
        {"name": "testers", "description": "Script, received log, drops, health"},
    ]);
    doc
}

/// `GET /api-docs/openapi.json`: the process's document.
#[get("/api-docs/openapi.json")]
pub(super) async fn serve(shared: web::Data<Shared>) -> HttpResponse {
    HttpResponse::Ok().json(document(shared.kind))
}

#[cfg(test)]
mod tests {
    use meldewerk_transports::Protocol;

    use super::document;
    use crate::api_docs::route_map::{normalized, registered};

    /// Every route the process registers for the simulator `name` is a path of its document.
    async fn every_route_is_documented(name: &str) {
        let kind = meldewerk_transports::kind(name).expect("a registered transport");
        let routes = registered(|cfg| super::super::routes::configure(cfg, kind.protocol)).await;
        let doc = document(kind);
        let documented: Vec<String> = doc["paths"]
            .as_object()
            .expect("paths")
            .keys()
            .map(|p| normalized(p))
            .collect();
        assert!(
            routes.contains("/script") && routes.contains("/healthz"),
            "{routes:?}"
        );
        let missing: Vec<&String> = routes.iter().filter(|r| !documented.contains(r)).collect();
        assert!(
            missing.is_empty(),
            "{name}: routes the document lacks: {missing:#?}"
        );
    }

    #[actix_web::test]
    async fn the_wire_simulators_document_holds_every_route_it_registers() {
        let kind = meldewerk_transports::kind("xpersonenstand").unwrap();
        assert!(matches!(kind.protocol, Protocol::Wire));
        every_route_is_documented("xpersonenstand").await;
        every_route_is_documented("egvp").await;
    }

    #[actix_web::test]
    async fn the_fhir_simulators_document_holds_every_route_it_registers() {
        let kind = meldewerk_transports::kind("demis").unwrap();
        assert!(matches!(kind.protocol, Protocol::FhirOperation { .. }));
        every_route_is_documented("demis").await;
    }
}
