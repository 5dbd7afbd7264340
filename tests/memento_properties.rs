//! Property tests of every module's memento endpoint over HTTP against the real server:
//! arbitrary JSON (anything at all, and valid requests with one member replaced by anything)
//! never makes the server fail. Every answer is 200 with a memento, or 400 in the module's own
//! error style: `{"errors": [...]}`, problem details (`birthdata`), or `{"error", "errors"}`
//! (`guardianship`).

mod common;

use common::court::memento_body;
use common::demis::complete_bed_report;
use common::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{json, Map, Value};

/// How a module writes a 400.
#[derive(Clone, Copy, Debug)]
enum Style {
    Plain,
    Problem,
    Summarised,
}

/// Every module, its error style, and a valid request to mutate.
fn modules() -> Vec<(&'static str, Style, Value)> {
    // Without a sending account, which this server has none of: the memento is valid.
    let mut guardianship = memento_body("p-1");
    guardianship["absender"]
        .as_object_mut()
        .unwrap()
        .remove("egvp_account_id");
    vec![
        ("birthnotice", Style::Plain, complete_notice("p-1")),
        ("birthdata", Style::Problem, complete_birth_data("p-1")),
        (
            "deathnotice",
            Style::Plain,
            json!({"id": "p-1", "Einrichtung": {
                "anzeigender": {"nameOrganisation": "Klinikum Süd",
                    "kontaktdaten": [{"kanal": "01", "kennung": "station3@klinikum.example"}]},
                "verstorbener": {"vorname": "Karl", "familienname": "Muster",
                    "geschlecht": "maennlich", "geburtstag": "1940-02-03"},
                "leichenID": "L-2026-0001"}}),
        ),
        ("hospreport", Style::Plain, json!({})),
        ("labreport", Style::Plain, json!({"reportId": "p-1"})),
        ("bedreport", Style::Plain, complete_bed_report("p-1")),
        ("guardianship", Style::Summarised, guardianship),
    ]
}

/// Arbitrary JSON, a few levels deep, with strings of any Unicode.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "\\PC{0,30}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 30, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::from),
            prop::collection::btree_map("\\PC{1,10}", inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// The dotted paths of every leaf of `value`.
fn leaves(value: &Value, prefix: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(members) => {
            for (key, member) in members {
                let path = match prefix.is_empty() {
                    true => key.clone(),
                    false => format!("{prefix}.{key}"),
                };
                leaves(member, &path, out);
            }
        }
        _ => out.push(prefix.to_owned()),
    }
}

/// `valid` with the member at `path` replaced by `replacement`.
fn replaced(valid: &Value, path: &str, replacement: Value) -> Value {
    let mut body = valid.clone();
    let mut at = &mut body;
    for key in path.split('.') {
        at = at
            .as_object_mut()
            .and_then(|m| m.get_mut(key))
            .expect("a leaf path");
    }
    *at = replacement;
    body
}

/// Asserts the answer is a memento or a 400 in `style`.
fn check_answer(module: &str, style: Style, body: &Value, status: u16, text: &str) {
    let shown = || format!("{module}: {body} → {status} {text}");
    if status == 200 {
        let answer: Value = serde_json::from_str(text).unwrap_or_else(|_| panic!("{}", shown()));
        assert!(answer["memento"].is_string(), "{}", shown());
        return;
    }
    assert_eq!(status, 400, "{}", shown());
    let answer: Map<String, Value> =
        serde_json::from_str(text).unwrap_or_else(|_| panic!("{}", shown()));
    let strings = |v: &Value| {
        v.as_array().is_some_and(|a| {
            !a.is_empty() && a.iter().all(|e| e.as_str().is_some_and(|s| !s.is_empty()))
        })
    };
    match style {
        Style::Plain => {
            assert_eq!(answer.len(), 1, "{}", shown());
            assert!(strings(&answer["errors"]), "{}", shown());
        }
        Style::Summarised => {
            assert_eq!(answer.len(), 2, "{}", shown());
            assert!(answer["error"].is_string(), "{}", shown());
            assert!(strings(&answer["errors"]), "{}", shown());
        }
        Style::Problem => {
            assert_eq!(answer["status"], 400, "{}", shown());
            assert!(
                answer["type"]
                    .as_str()
                    .unwrap_or_default()
                    .ends_with("/problems/validation-error"),
                "{}",
                shown()
            );
            let errors = answer["errors"]
                .as_array()
                .unwrap_or_else(|| panic!("{}", shown()));
            assert!(
                errors.iter().all(|e| e["detail"].is_string()),
                "{}",
                shown()
            );
        }
    }
}

#[test]
fn no_json_makes_a_memento_endpoint_fail_and_every_refusal_is_in_the_modules_style() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    let client = server.client();
    let post = |module: &str, body: &Value| {
        let response = client
            .post(server.url(&format!("/api/{module}/v1/memento")))
            .basic_auth("klinik", Some(PASSWORD))
            .json(body)
            .send()
            .unwrap();
        let status = response.status().as_u16();
        (status, response.text().unwrap())
    };
    for (module, style, valid) in modules() {
        let (status, text) = post(module, &valid);
        assert_eq!(
            status, 200,
            "{module}: the request mutated is valid: {text}"
        );
        let mut paths = Vec::new();
        leaves(&valid, "", &mut paths);
        let mut runner = TestRunner::new(Config {
            cases: 128,
            failure_persistence: None,
            ..Config::default()
        });
        // Anything at all as the body.
        runner
            .run(&json_value(), |body| {
                let (status, text) = post(module, &body);
                check_answer(module, style, &body, status, &text);
                Ok(())
            })
            .unwrap();
        // A valid request with one member replaced by anything.
        let one_member = (0..paths.len(), json_value());
        runner
            .run(&one_member, |(i, replacement)| {
                let body = replaced(&valid, &paths[i], replacement);
                let (status, text) = post(module, &body);
                check_answer(module, style, &body, status, &text);
                Ok(())
            })
            .unwrap();
    }
}
