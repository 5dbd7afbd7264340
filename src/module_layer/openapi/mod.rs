//! The OpenAPI document of a module: the layer writes what it serves for every module (memento,
//! results, forms) from the module's [`ModuleInfo`] and field table; the module adds its own
//! routes and result shape through [`Module::document`]. The service publishes it at
//! `/api-docs/{module}/openapi.json` (see [`crate::api_docs`]).

pub mod schema;

use serde_json::{json, Map, Value};

use super::{ErrorStyle, MementoAnswer, Module, ModuleInfo};

/// Name of the security scheme of the API: HTTP Basic with an API user's credentials.
pub const API_USER: &str = "apiUser";
/// Name of the security scheme of the forms: the session cookie a magic link or `/bal/` sets.
pub const FORM_SESSION: &str = "formSession";

/// A module's OpenAPI document while it is written: paths and component schemas, with the
/// helpers a module needs to describe its own routes in the layer's terms.
pub struct ModuleDocument {
    info: &'static ModuleInfo,
    style: ErrorStyle,
    paths: Map<String, Value>,
    schemas: Map<String, Value>,
}

impl ModuleDocument {
    /// The module's API path of `tail`: `/api/{module}/v1{tail}`.
    pub fn api_path(&self, tail: &str) -> String {
        format!("/api/{}/v1{tail}", self.info.module)
    }

    /// Adds (or replaces) the operation `method` (lower case) at `path`, with the module's tag.
    pub fn operation(&mut self, method: &str, path: &str, mut operation: Value) {
        operation["tags"] = json!([self.info.module]);
        let item = self
            .paths
            .entry(path.to_string())
            .or_insert_with(|| json!({}));
        item[method] = operation;
    }

    /// Rewrites the description of the answer `status` of the operation `method` at `path`.
    pub fn describe_response(&mut self, method: &str, path: &str, status: &str, description: &str) {
        if let Some(response) = self
            .paths
            .get_mut(path)
            .and_then(|item| item.get_mut(method))
            .and_then(|operation| operation["responses"].get_mut(status))
        {
            response["description"] = json!(description);
        }
    }

    /// Removes the operation `method` at `path`, and the path when it has none left.
    pub fn remove_operation(&mut self, method: &str, path: &str) {
        if let Some(Value::Object(item)) = self.paths.get_mut(path) {
            item.remove(method);
            if item.is_empty() {
                self.paths.remove(path);
            }
        }
    }

    /// Registers `schema` as the component `name` and answers a reference to it.
    pub fn schema(&mut self, name: &str, schema: Value) -> Value {
        self.schemas.insert(name.to_string(), schema);
        json!({"$ref": format!("#/components/schemas/{name}")})
    }

    /// Registers the schema of the type `T` (from its `utoipa::ToSchema` derive) as the
    /// component `name` and answers a reference to it.
    pub fn schema_of<T: utoipa::ToSchema>(&mut self, name: &str) -> Value {
        let schema = serde_json::to_value(T::schema()).expect("a schema serializes");
        self.schema(name, schema)
    }

    /// The component schema `name`, to derive another from it.
    pub fn component(&self, name: &str) -> Option<&Value> {
        self.schemas.get(name)
    }

    /// The error answers of `statuses` in the module's error style (`401` and `429` as the
    /// Basic authentication writes them), each with `description`s from `reasons` where given.
    pub fn errors(&self, statuses: &[u16], reasons: &[(u16, &str)]) -> Map<String, Value> {
        let mut responses = Map::new();
        for &status in statuses {
            let reason = reasons
                .iter()
                .find(|(s, _)| *s == status)
                .map(|(_, r)| *r)
                .unwrap_or_else(|| default_reason(status));
            responses.insert(status.to_string(), self.error(status, reason));
        }
        responses
    }

    fn error(&self, status: u16, reason: &str) -> Value {
        match status {
            401 => json!({
                "description": reason,
                "headers": {"WWW-Authenticate": {"schema": {"type": "string"}}},
            }),
            // Written by the authentication, before any module: plain errors.
            429 => json!({
                "description": reason,
                "headers": {"Retry-After": {"schema": {"type": "integer"}}},
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PlainErrors"}}},
            }),
            _ => json!({
                "description": reason,
                "content": {schema::error_media_type(&self.style): {
                    "schema": {"$ref": format!("#/components/schemas/{}", self.error_schema_name())}
                }},
            }),
        }
    }

    fn error_schema_name(&self) -> &'static str {
        match self.style {
            ErrorStyle::Plain => "PlainErrors",
            ErrorStyle::Summarised => "SummarisedErrors",
            ErrorStyle::Problem { .. } => "ProblemDetails",
        }
    }

    /// The finished document as JSON (OpenAPI 3.1).
    pub(crate) fn finish(mut self) -> Value {
        self.schemas
            .insert("PlainErrors".into(), schema::error_body(&ErrorStyle::Plain));
        if !matches!(self.style, ErrorStyle::Plain) {
            self.schemas.insert(
                self.error_schema_name().into(),
                schema::error_body(&self.style),
            );
        }
        json!({
            "openapi": "3.1.0",
            "info": {
                "title": format!("meldewerk {}", self.info.module),
                "version": "v1",
                "description": format!(
                    "The `{}` module: its API under `/api/{}/v1/` and its forms.",
                    self.info.module, self.info.module
                ),
            },
            "tags": [{"name": self.info.module}],
            "paths": self.paths,
            "components": {
                "schemas": self.schemas,
                "securitySchemes": security_schemes(),
            },
        })
    }
}

/// The security schemes every document names.
pub(crate) fn security_schemes() -> Value {
    json!({
        API_USER: {
            "type": "http",
            "scheme": "basic",
            "description": "An API user's name and password (created by an operator).",
        },
        FORM_SESSION: {
            "type": "apiKey",
            "in": "cookie",
            "name": crate::auth::session::COOKIE_NAME,
            "description": "The session a magic link (`/mtl/{token}`) or `/bal/` login opens.",
        },
    })
}

fn default_reason(status: u16) -> &'static str {
    match status {
        400 => "The request is invalid; every problem is listed.",
        401 => "Missing or wrong credentials (empty body).",
        403 => "Not allowed for this API user.",
        404 => "Not found (also another user's or another module's report).",
        405 => "Method not allowed.",
        408 => "The body did not arrive in time.",
        409 => "The id was used before.",
        410 => "Already retrieved, or removed by retention.",
        413 => "The body is too large.",
        415 => "The body is not `application/json`.",
        429 => "Too many failed logins; try again after `Retry-After` seconds.",
        503 => "The store is unavailable; try again later.",
        _ => "Error.",
    }
}

/// The statuses every endpoint with a JSON body may answer besides its own.
pub const BODY_ERRORS: [u16; 4] = [400, 408, 413, 415];
/// The statuses every endpoint of the API may answer besides its own.
pub const API_ERRORS: [u16; 3] = [401, 429, 503];

/// The document of `module`: the layer's routes, then the module's own.
pub fn document(module: &dyn Module) -> Value {
    let info = module.info();
    let mut doc = ModuleDocument {
        info,
        style: module.error_style().clone(),
        paths: Map::new(),
        schemas: Map::new(),
    };
    layer_operations(&mut doc);
    module.document(&mut doc);
    doc.finish()
}

/// `{"application/json": {"schema": schema}}`, the content of a JSON body.
pub fn json_content(schema: Value) -> Value {
    json!({"application/json": {"schema": schema}})
}

/// A response described by `description` whose body is JSON of `schema`.
pub fn json_response(description: &str, schema: Value) -> Value {
    json!({"description": description, "content": json_content(schema)})
}

fn layer_operations(doc: &mut ModuleDocument) {
    let info = doc.info;
    let request = doc.schema("MementoRequest", schema::memento_request(info));
    let mut answer = json!({
        "type": "object",
        "required": ["memento"],
        "properties": {
            "memento": {
                "type": "string",
                "description": "Encrypted pre-fill data; the form's query parameter `m`.",
            },
        },
    });
    if info.memento_answer == MementoAnswer::MementoAndLink {
        answer["required"] = json!(["memento", "magicLink"]);
        answer["properties"]["magicLink"] = json!({
            "type": ["string", "null"],
            "description": "Relative URL that opens the form authenticated; opaque.",
        });
    }
    let answer = doc.schema("MementoResponse", answer);
    let mut responses = Map::new();
    responses.insert("200".into(), json_response("The memento.", answer));
    responses.extend(doc.errors(&[BODY_ERRORS.as_slice(), &API_ERRORS, &[405]].concat(), &[]));
    let path = doc.api_path("/memento");
    doc.operation(
        "post",
        &path,
        json!({
            "operationId": format!("{}_memento", info.module),
            "summary": "Validate pre-fill data and encrypt it into a memento (nothing is stored)",
            "security": [{API_USER: []}],
            "requestBody": {"required": true, "content": json_content(request)},
            "responses": responses,
        }),
    );
    let result = doc.schema("ReportResult", result_schema(info));
    let mut responses = Map::new();
    responses.insert(
        "200".into(),
        json!({
            "description": "Ids of the user's reports with a result not yet retrieved.",
            "content": json_content(json!({"type": "array", "items": {"type": "string"}})),
        }),
    );
    responses.extend(doc.errors(&[&API_ERRORS[..], &[405]].concat(), &[]));
    let path = doc.api_path("/reports");
    doc.operation(
        "get",
        &path,
        json!({
            "operationId": format!("{}_pending", info.module),
            "summary": "List the reports whose result was not yet retrieved",
            "security": [{API_USER: []}],
            "responses": responses,
        }),
    );
    let mut responses = Map::new();
    responses.insert("200".into(), json_response("The report's result.", result));
    responses.extend(doc.errors(&[&API_ERRORS[..], &[400, 404, 405, 410]].concat(), &[]));
    let path = doc.api_path("/reports/{id}");
    doc.operation(
        "get",
        &path,
        json!({
            "operationId": format!("{}_result", info.module),
            "summary": "Read a report's result; without `peek=true` a final result is consumed",
            "security": [{API_USER: []}],
            "parameters": [
                {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}},
                {"name": "peek", "in": "query", "required": false,
                 "schema": {"type": "boolean", "default": false},
                 "description": "`true` reads without consuming."},
            ],
            "responses": responses,
        }),
    );
    for form in info.forms {
        form_operations(doc, form.path, &form.sent_path(), form.title);
    }
    if let Some(landing) = info.landing {
        let page = |description: &str| json!({"description": description, "content": html_page()});
        doc.operation(
            "get",
            landing,
            json!({
                "operationId": format!("{}_index", info.module),
                "summary": "Where a magic link lands: the module's forms, to pick one",
                "security": [{FORM_SESSION: []}],
                "parameters": [{"name": "m", "in": "query", "required": false, "schema": {"type": "string"}}],
                "responses": {
                    "200": page("The list of forms, each with the memento."),
                    "302": found_to_login(),
                    "400": page("The memento cannot be opened by this user."),
                },
            }),
        );
    }
}

/// A receipt PDF in a JSON answer: base64, nullable.
pub fn receipt(description: &str) -> Value {
    json!({
        "type": ["string", "null"],
        "contentEncoding": "base64",
        "contentMediaType": "application/pdf",
        "description": description,
    })
}

/// An HTML page's content.
pub fn html_page() -> Value {
    json!({"text/html": {"schema": {"type": "string"}}})
}

/// The answer of a form route without a session: 302 to `/login?error`.
fn found_to_login() -> Value {
    json!({
        "description": "No session: to `/login?error`.",
        "headers": {"Location": {"schema": {"type": "string"}}},
    })
}

/// The HTML pages of a form: the form itself (`GET`, `POST`) and its confirmation page.
fn form_operations(doc: &mut ModuleDocument, path: &str, sent: &str, title: &str) {
    let page = |description: &str| json!({"description": description, "content": html_page()});
    let found = found_to_login();
    let id = format!("{}_{}", doc.info.module, operation_name(path));
    doc.operation(
        "get",
        path,
        json!({
            "operationId": format!("{id}_show"),
            "summary": format!("The form {title}, pre-filled from the memento `m`"),
            "security": [{FORM_SESSION: []}],
            "parameters": [{"name": "m", "in": "query", "required": false, "schema": {"type": "string"}}],
            "responses": {
                "200": page("The form."),
                "302": found,
                "400": page("The memento cannot be opened."),
                "404": page("No such form for this memento."),
                "409": page("The report was sent already."),
            },
        }),
    );
    doc.operation(
        "post",
        path,
        json!({
            "operationId": format!("{id}_submit"),
            "summary": format!("Send the form {title}"),
            "security": [{FORM_SESSION: []}],
            "requestBody": {"required": true, "content": {
                "application/x-www-form-urlencoded": {"schema": {"type": "object"}},
            }},
            "responses": {
                "202": page("Still being sent; the report stays with the engine."),
                "302": {"description": "Sent, or no session.", "headers": {"Location": {"schema": {"type": "string"}}}},
                "303": {"description": "Sent: to the confirmation page.", "headers": {"Location": {"schema": {"type": "string"}}}},
                "400": page("Problems, each shown at its field; every value kept."),
                "403": page("The form's anti-forgery token does not fit the session."),
                "409": page("The report was sent already."),
                "413": page("The body is too large."),
                "422": page("The authority cannot take the report as it stands."),
                "503": page("The store is unavailable; nothing was sent."),
            },
        }),
    );
    doc.operation(
        "get",
        sent,
        json!({
            "operationId": format!("{id}_sent"),
            "summary": format!("What was sent with the form {title}"),
            "security": [{FORM_SESSION: []}],
            "parameters": [{"name": "id", "in": "query", "required": true, "schema": {"type": "string"}}],
            "responses": {
                "200": page("The confirmation page."),
                "302": found,
                "404": page("No such report of this user."),
            },
        }),
    );
}

/// A form path as part of an operation id: `/forms/birthnotice` → `forms_birthnotice`.
fn operation_name(path: &str) -> String {
    path.trim_matches('/')
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// The layer's result body (spec 01 §2.1).
fn result_schema(info: &ModuleInfo) -> Value {
    let mut schema = json!({
        "type": "object",
        "required": ["id", "status", "module", "submittedAt"],
        "properties": {
            "id": {"type": "string", "description": "The report's id."},
            "status": {"enum": ["SUCCESS", "FAILURE", "PENDING"]},
            "module": {"const": info.module},
            "submittedAt": {"type": "string", "format": "date-time"},
            "portal": {"type": ["string", "null"], "description": "The delivery portal used."},
            "receiptPdf": receipt("The receipt; only for successful reports."),
            "failureReason": {"type": ["string", "null"], "description": "Why it failed."},
        },
    });
    if info.echoes_client_reference {
        schema["properties"]["clientReference"] = json!({"type": ["string", "null"]});
    }
    schema
}
