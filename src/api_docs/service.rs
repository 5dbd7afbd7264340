//! The part of the combined document that belongs to no module: health, metrics, the magic
//! link, `/bal/`, the login pages and the documents themselves. The handlers with an actix route
//! macro are described at the handler (`#[utoipa::path]`); the rest here.

use serde_json::{json, Value};
use utoipa::OpenApi;

use crate::routes;

/// The service's own routes that are described at their handlers.
#[derive(OpenApi)]
#[openapi(
    paths(
        routes::health::healthz,
        routes::health::readyz,
        crate::metrics::scrape,
        routes::magic_link::redeem,
        routes::bal::bal_login,
        routes::login::login,
    ),
    tags((name = "service", description = "Health, metrics, login and the documents")),
)]
struct ServiceApi;

/// The service's part of the combined document, with the documents of `modules`.
pub(super) fn document(modules: &[&str]) -> Value {
    let mut doc = serde_json::to_value(ServiceApi::openapi()).expect("a document serializes");
    let paths = doc["paths"]
        .as_object_mut()
        .expect("the document has paths");
    let html = |description: &str| json!({"description": description, "content": {"text/html": {"schema": {"type": "string"}}}});
    paths.insert(
        "/logout".into(),
        json!({
            "get": {
                "tags": ["service"],
                "operationId": "logout_page",
                "summary": "A page with the button that ends the session",
                "responses": {"200": html("The page (or a note that nobody is logged in).")},
            },
            "post": {
                "tags": ["service"],
                "operationId": "logout",
                "summary": "End the session (the form's anti-forgery token required)",
                "requestBody": {"content": {"application/x-www-form-urlencoded": {"schema": {
                    "type": "object",
                    "properties": {"csrf": {"type": "string"}},
                }}}},
                "responses": {
                    "200": html("The session ended."),
                    "403": html("The anti-forgery token does not fit the session."),
                },
            },
        }),
    );
    let document = |summary: &str, id: &str| {
        json!({"get": {
            "tags": ["service"],
            "operationId": id,
            "summary": summary,
            "responses": {"200": {
                "description": "An OpenAPI 3.1 document.",
                "content": {"application/json": {"schema": {"type": "object"}}},
            }},
        }})
    };
    paths.insert(
        super::COMBINED_PATH.into(),
        document(
            "This document: every route of the service",
            "openapi_combined",
        ),
    );
    for module in modules {
        paths.insert(
            super::module_path(module),
            document(
                &format!("The document of the module `{module}`"),
                &format!("openapi_{module}"),
            ),
        );
    }
    paths.insert(
        "/api-docs/{file}".into(),
        json!({"get": {
            "tags": ["service"],
            "operationId": "openapi_ui",
            "summary": "Swagger UI over these documents (`/api-docs/` is its page)",
            "parameters": [{"name": "file", "in": "path", "required": true, "schema": {"type": "string"}}],
            "responses": {
                "200": {"description": "A page or asset of the UI."},
                "404": {"description": "No such file."},
            },
        }}),
    );
    doc
}
