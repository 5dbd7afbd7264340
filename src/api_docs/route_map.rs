//! The routes an actix-web application really registers, for the tests that hold an OpenAPI
//! document to them (the service's here, the simulator process's in `crate::simulate`).

use std::collections::BTreeSet;

use actix_web::web::ServiceConfig;
use actix_web::{test as actix_test, web, App, HttpRequest, HttpResponse};

/// The full pattern of every resource `configure` registers, read off actix-web's resource map
/// (its `Debug` form is the only view of it actix-web offers): a scope's prefix joined with the
/// patterns inside it, parameters unnamed ([`normalized`]). Scopes themselves are not routes.
pub(crate) async fn registered(configure: impl FnOnce(&mut ServiceConfig)) -> BTreeSet<String> {
    let app =
        actix_test::init_service(App::new().configure(configure).default_service(web::to(
            |req: HttpRequest| async move {
                HttpResponse::Ok().body(format!("{:#?}", req.resource_map()))
            },
        )))
        .await;
    let map = actix_test::call_and_read_body(
        &app,
        actix_test::TestRequest::get()
            .uri("/no/such/route/anywhere")
            .to_request(),
    )
    .await;
    patterns(std::str::from_utf8(&map).expect("the map is text"))
}

/// Reads the resource tree out of the pretty `Debug` form: each node's `patterns`, its
/// indentation giving its depth, `is_prefix` whether it is a scope. The `named` maps (copies of
/// named resources, relative to their scope) are skipped.
pub(crate) fn patterns(debug: &str) -> BTreeSet<String> {
    // (indentation, patterns, is a scope)
    let mut nodes: Vec<(usize, Vec<String>, bool)> = Vec::new();
    let mut skipping: Option<usize> = None;
    let mut current: Option<(usize, Vec<String>)> = None;
    let mut reading_patterns = false;
    for line in debug.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if let Some(until) = skipping {
            if indent == until && trimmed.starts_with('}') {
                skipping = None;
            }
            continue;
        }
        if trimmed == "named: {" {
            skipping = Some(indent);
        } else if trimmed == "pattern: ResourceDef {" {
            current = Some((indent, Vec::new()));
        } else if trimmed.starts_with("patterns: ") {
            reading_patterns = true;
        } else if reading_patterns && trimmed.starts_with('"') {
            let pattern = trimmed.trim_end_matches(',').trim_matches('"').to_string();
            if let Some((_, patterns)) = current.as_mut() {
                patterns.push(pattern);
            }
        } else if reading_patterns && trimmed.starts_with(')') {
            reading_patterns = false;
        } else if let Some(prefix) = trimmed.strip_prefix("is_prefix: ") {
            if let Some((indent, patterns)) = current.take() {
                nodes.push((indent, patterns, prefix == "true,"));
            }
        }
    }
    assert!(
        !nodes.is_empty(),
        "the resource map's form changed:\n{}",
        &debug[..debug.len().min(3000)]
    );
    let mut routes = BTreeSet::new();
    let mut scopes: Vec<(usize, String)> = Vec::new();
    for (indent, patterns, prefix) in nodes {
        while scopes.last().is_some_and(|(i, _)| *i >= indent) {
            scopes.pop();
        }
        let above: String = scopes.iter().map(|(_, p)| p.as_str()).collect();
        if prefix {
            scopes.push((indent, patterns.concat()));
            continue;
        }
        for pattern in patterns {
            routes.insert(normalized(&format!("{above}{pattern}")));
        }
    }
    routes
}

/// A route pattern with its parameters' regexes left out (`{tail:(/.*)?}` → `{tail}`) and
/// its parameters unnamed, as both actix-web and OpenAPI write `{…}`.
pub(crate) fn normalized(pattern: &str) -> String {
    let mut out = String::new();
    let mut depth = 0;
    for c in pattern.chars() {
        match c {
            '{' => {
                if depth == 0 {
                    out.push_str("{}");
                }
                depth += 1;
            }
            '}' => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}
