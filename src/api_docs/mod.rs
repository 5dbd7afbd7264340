//! The service's OpenAPI 3.1 documents and their browsable UI:
//!
//! - `GET /api-docs/{module}/openapi.json`: one document per module (its API under
//!   `/api/{module}/v1/` and its forms), as the reference platform publishes them;
//! - `GET /api-docs/openapi.json`: everything the service serves in one document, the modules,
//!   the magic link, `/bal/`, the login pages, health, metrics and these documents;
//! - `GET /api-docs/`: Swagger UI over all of them, its assets compiled into the binary.
//!
//! A module's document is written by the layer from the module's field table and identity, plus
//! what the module says of its own routes ([`crate::module_layer::Module::document`]); the
//! service's routes are described where their handlers are (`#[utoipa::path]`). The documents
//! are built once at start-up; the test in `tests.rs` holds them to the routes the service has.

mod operator;
#[cfg(test)]
pub(crate) mod route_map;
mod service;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use actix_web::dev::ResourceDef;
use serde_json::{json, Map, Value};
use utoipa_swagger_ui::{SwaggerUi, Url};

use crate::module_layer::openapi::{document, security_schemes};
use crate::module_layer::Module;

/// The methods the documents give each path: a request of another method for a path the
/// service has is answered 405 with `Allow`, not 404 (routes declared with a method, such as
/// `GET /healthz`, do not match other methods at all).
pub struct Methods(Vec<(ResourceDef, String)>);

impl Methods {
    /// The methods of the path `path`, as an `Allow` header says them (`GET, POST`).
    pub fn allowed(&self, path: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(pattern, _)| pattern.is_match(path))
            .map(|(_, allow)| allow.as_str())
    }
}

/// Every document the service publishes, built once at start-up.
#[derive(Clone)]
pub struct ApiDocs {
    /// Each module's document, by module name, in the order of [`crate::modules::MODULES`].
    modules: Vec<(&'static str, Value)>,
    /// The whole service in one document.
    combined: Value,
}

impl ApiDocs {
    /// The documents of `modules` and the service around them.
    pub fn new<'a>(modules: impl IntoIterator<Item = &'a Arc<dyn Module>>) -> ApiDocs {
        let modules: Vec<(&'static str, Value)> = modules
            .into_iter()
            .map(|module| (module.info().module, document(module.as_ref())))
            .collect();
        let mut paths = Map::new();
        let mut schemas = Map::new();
        let mut tags = Vec::new();
        let names: Vec<&str> = modules.iter().map(|(name, _)| *name).collect();
        let service = service::document(&names);
        merge(&mut paths, &mut schemas, &mut tags, &service, None);
        let operator = operator::document();
        merge(&mut paths, &mut schemas, &mut tags, &operator, None);
        let mut schemes = security_schemes();
        if let (Value::Object(all), Some(Value::Object(own))) = (
            &mut schemes,
            operator.pointer("/components/securitySchemes"),
        ) {
            all.extend(own.clone());
        }
        for (name, doc) in &modules {
            merge(&mut paths, &mut schemas, &mut tags, doc, Some(name));
        }
        let combined = json!({
            "openapi": "3.1.0",
            "info": {
                "title": "meldewerk",
                "version": env!("CARGO_PKG_VERSION"),
                "description": "Every route of the service: each module's API and forms, the \
                    magic link, `/bal/`, login, health, metrics and these documents.",
            },
            "tags": tags,
            "paths": paths,
            "components": {"schemas": schemas, "securitySchemes": schemes},
        });
        ApiDocs { modules, combined }
    }

    /// The whole service in one document.
    pub fn combined(&self) -> &Value {
        &self.combined
    }

    /// The methods of every documented path.
    pub fn methods(&self) -> Methods {
        let paths = self.combined["paths"].as_object().into_iter().flatten();
        Methods(
            paths
                .map(|(path, item)| {
                    let methods: Vec<String> = item
                        .as_object()
                        .into_iter()
                        .flat_map(|operations| operations.keys())
                        .map(|method| method.to_ascii_uppercase())
                        .collect();
                    (ResourceDef::new(path.as_str()), methods.join(", "))
                })
                .collect(),
        )
    }

    /// The document of `module`, if the service runs it.
    pub fn module(&self, module: &str) -> Option<&Value> {
        self.modules
            .iter()
            .find(|(name, _)| *name == module)
            .map(|(_, doc)| doc)
    }

    /// The routes `/api-docs/…`: the documents and Swagger UI.
    pub fn service(&self) -> SwaggerUi {
        let mut urls = vec![(Url::new("meldewerk", COMBINED_PATH), self.combined.clone())];
        for (name, doc) in &self.modules {
            // The UI's drop-down names each module; the URL is leaked once per start-up, as the
            // UI's configuration wants it for the process's lifetime.
            let path: &'static str = Box::leak(module_path(name).into_boxed_str());
            urls.push((Url::new(name, path), doc.clone()));
        }
        SwaggerUi::new(UI_PATTERN).external_urls_from_iter_unchecked(urls)
    }
}

/// Where the combined document is served.
pub(crate) const COMBINED_PATH: &str = "/api-docs/openapi.json";
/// The pattern of Swagger UI's pages and assets.
pub(crate) const UI_PATTERN: &str = "/api-docs/{_:.*}";

/// Where the document of `module` is served.
pub(crate) fn module_path(module: &str) -> String {
    format!("/api-docs/{module}/openapi.json")
}

/// Adds the paths, component schemas and tags of `doc` to the combined ones. A module's
/// component schemas are named after the module in the combined document (`birthnotice.…`),
/// since every module has its own `MementoRequest`; references are rewritten to match.
fn merge(
    paths: &mut Map<String, Value>,
    schemas: &mut Map<String, Value>,
    tags: &mut Vec<Value>,
    doc: &Value,
    module: Option<&str>,
) {
    let rename = |name: &str| match module {
        Some(module) if !SHARED_SCHEMAS.contains(&name) => format!("{module}.{name}"),
        _ => name.to_string(),
    };
    let mut doc = doc.clone();
    if module.is_some() {
        rewrite_refs(&mut doc, &rename);
    }
    if let Some(Value::Object(own)) = doc.pointer("/components/schemas") {
        for (name, schema) in own {
            schemas.insert(rename(name), schema.clone());
        }
    }
    if let Some(Value::Object(own)) = doc.get("paths") {
        for (path, item) in own {
            paths.insert(path.clone(), item.clone());
        }
    }
    if let Some(Value::Array(own)) = doc.get("tags") {
        tags.extend(own.iter().cloned());
    }
}

/// Schemas every module shares under one name.
const SHARED_SCHEMAS: &[&str] = &["PlainErrors", "SummarisedErrors", "ProblemDetails"];

fn rewrite_refs(value: &mut Value, rename: &impl Fn(&str) -> String) {
    match value {
        Value::Object(members) => {
            for (key, member) in members.iter_mut() {
                match (key.as_str(), member) {
                    ("$ref", Value::String(target)) => {
                        if let Some(name) = target.strip_prefix("#/components/schemas/") {
                            *target = format!("#/components/schemas/{}", rename(name));
                        }
                    }
                    (_, member) => rewrite_refs(member, rename),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| rewrite_refs(item, rename)),
        _ => {}
    }
}
