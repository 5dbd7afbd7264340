//! The documents against the routes the service really has: every route registered by
//! [`crate::routes::configure`] (the same function the server uses) is a path of the combined
//! document, and every module's routes are in its own document.

use std::collections::BTreeSet;
use std::sync::Arc;

use meldewerk_actors::{BuildError, MessageSigner};
use meldewerk_storage::{MessageSignature, Report};
use serde_json::Value;

use super::route_map::{self, normalized, patterns};
use super::ApiDocs;
use crate::configuration::Settings;
use crate::module_layer::Module;

/// Signs nothing: the routes are only registered here, never called.
struct Unused;

#[async_trait::async_trait]
impl MessageSigner for Unused {
    async fn sign(&self, _: &Report, _: &[u8]) -> Result<Option<MessageSignature>, BuildError> {
        Ok(None)
    }
}

fn modules(data_dir: &std::path::Path) -> Vec<Arc<dyn Module>> {
    let settings = Settings {
        data_dir: data_dir.to_path_buf(),
        ..Settings::default()
    };
    crate::startup::build_modules(&settings, "http://127.0.0.1:8080").expect("default modules")
}

/// Every route the service registers ([`route_map::registered`]).
async fn registered_routes(modules: Vec<Arc<dyn Module>>, docs: &ApiDocs) -> BTreeSet<String> {
    let with_signers = modules
        .into_iter()
        .map(|m| (m, Arc::new(Unused) as Arc<dyn MessageSigner>))
        .collect();
    let routes =
        route_map::registered(crate::routes::configure(with_signers, docs.service())).await;
    assert!(routes.len() > 20, "too few routes: {routes:?}");
    routes
}

/// Routes whose pattern differs from how the document names them, with the document's path:
/// `/bal{tail}` takes any path after `/bal` (the document says `/bal/{target}`).
const SPELLED_OTHERWISE: &[(&str, &str)] = &[("/bal{}", "/bal/{}")];

fn documented(doc: &Value) -> BTreeSet<String> {
    doc["paths"]
        .as_object()
        .expect("paths")
        .keys()
        .map(|p| normalized(p))
        .collect()
}

#[actix_web::test]
async fn every_route_the_service_has_is_in_the_combined_document() {
    let dir = tempfile::tempdir().unwrap();
    let modules = modules(dir.path());
    let docs = ApiDocs::new(&modules);
    let documented = documented(docs.combined());
    let missing: Vec<String> = registered_routes(modules, &docs)
        .await
        .into_iter()
        .map(|route| {
            SPELLED_OTHERWISE
                .iter()
                .find(|(actix, _)| *actix == route)
                .map_or(route, |(_, doc)| doc.to_string())
        })
        .filter(|route| !documented.contains(route))
        .collect();
    assert!(
        missing.is_empty(),
        "routes the document lacks: {missing:#?}"
    );
}

#[actix_web::test]
async fn each_module_document_holds_its_routes_and_only_those_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let modules = modules(dir.path());
    let docs = ApiDocs::new(&modules);
    for module in &modules {
        let info = module.info();
        let doc = docs.module(info.module).expect("a document per module");
        let paths = documented(doc);
        let api = format!("/api/{}/v1/", info.module);
        for tail in ["memento", "reports", "reports/{}"] {
            assert!(
                paths.contains(&format!("{api}{tail}")),
                "{} lacks {tail}",
                info.module
            );
        }
        for form in info.forms {
            assert!(
                paths.contains(form.path),
                "{} lacks {}",
                info.module,
                form.path
            );
        }
        for path in &paths {
            let own = path.starts_with(&api)
                || info
                    .forms
                    .iter()
                    .any(|f| path.starts_with(f.path.trim_end_matches('/')))
                || path.starts_with(&format!("/{}/", info.module));
            assert!(
                own,
                "{} documents {path}, not a route of its own",
                info.module
            );
        }
    }
}

#[test]
fn the_patterns_of_nested_scopes_are_joined_and_named_copies_skipped() {
    let node = |indent: usize, pattern: &str, prefix: bool, inner: &str| {
        let pad = " ".repeat(indent);
        format!(
            "{pad}pattern: ResourceDef {{\n{pad}    patterns: Single(\n{pad}        \"{pattern}\",\n\
             {pad}    ),\n{pad}    is_prefix: {prefix},\n{pad}}},\n{pad}named: {{\n\
             {pad}    \"x\": ResourceMap {{\n{pad}        pattern: ResourceDef {{\n\
             {pad}            patterns: Single(\n{pad}                \"/named\",\n\
             {pad}            ),\n{pad}            is_prefix: false,\n{pad}        }},\n\
             {pad}    }},\n{pad}}},\n{inner}"
        )
    };
    let scope = node(4, "/api/x/v1", true, &node(8, "/reports/{id}", false, ""));
    let mut debug = node(0, "", true, &(node(4, "/healthz", false, "") + &scope));
    // After the scope, a route at the root again.
    debug.push_str(&node(4, "/bal{tail:(/.*)?}", false, ""));
    for i in 0..20 {
        debug.push_str(&node(4, &format!("/r{i}"), false, ""));
    }
    let routes = patterns(&debug);
    assert!(routes.contains("/healthz"));
    assert!(routes.contains("/api/x/v1/reports/{}"));
    assert!(routes.contains("/bal{}"));
    assert!(!routes.contains("/api/x/v1"));
    assert!(!routes.contains("/named"));
    assert!(!routes.contains("/api/x/v1/bal{}"));
}

/// Every text pattern of every module's field table says in its `pattern` what its `fits`
/// checks: texts generated from the pattern fit, and of arbitrary texts exactly those fit that
/// match it and hold no control character.
#[test]
fn the_documents_patterns_say_what_the_checks_check() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};

    use crate::module_layer::FieldKind;

    let dir = tempfile::tempdir().unwrap();
    let mut seen = BTreeSet::new();
    for module in modules(dir.path()) {
        let info = module.info();
        let own = info.forms.iter().flat_map(|f| f.own.iter());
        for field in info.fields.iter().chain(own) {
            let FieldKind::Pattern(pattern) = field.kind else {
                continue;
            };
            if !seen.insert(pattern.pattern) {
                continue;
            }
            let regex = regex::Regex::new(pattern.pattern).expect("a valid regex");
            let body = pattern
                .pattern
                .trim_start_matches('^')
                .trim_end_matches('$');
            let mut runner = TestRunner::new(Config::with_cases(300));
            runner
                .run(&proptest::string::string_regex(body).unwrap(), |text| {
                    if pattern
                        .max_length
                        .is_some_and(|most| text.chars().count() > most)
                    {
                        return Ok(());
                    }
                    prop_assert!(
                        (pattern.fits)(&text),
                        "{} fits not {text:?}",
                        pattern.pattern
                    );
                    Ok(())
                })
                .unwrap();
            let alphabet = "[0-9A-Za-z.@_ /:\\-\n\tÄé]{0,40}";
            let mut runner = TestRunner::new(Config::with_cases(2000));
            runner
                .run(&alphabet, |text| {
                    let documented = regex.is_match(&text)
                        && !text.chars().any(char::is_control)
                        && pattern
                            .max_length
                            .is_none_or(|most| text.chars().count() <= most);
                    prop_assert_eq!(
                        documented,
                        (pattern.fits)(&text),
                        "{:?} against {}",
                        text,
                        pattern.pattern
                    );
                    Ok(())
                })
                .unwrap();
        }
    }
    assert!(seen.len() >= 6, "patterns found: {seen:?}");
}
