//! The operators' queue: jobs listed with what they wait for, a waiting message delivered again at
//! once, a job discarded (its report ends in FAILURE), and both actions in the audit log with who
//! and when.

mod common;

use common::*;
use serde_json::{json, Value};

fn jobs(server: &Server) -> Vec<Value> {
    let page: Value = server.admin_get("/admin/api/v1/jobs").json().unwrap();
    page["jobs"].as_array().unwrap().clone()
}

#[test]
fn operators_retry_and_discard_jobs_and_the_audit_log_says_who() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(
        &dir,
        &[("MELDEWERK_TRANSPORTS__XPERSONENSTAND__ACK_DELAY_MS", "0")],
    );
    // The office holds both acknowledgements back: the jobs wait.
    for report in ["geb-q-1", "geb-q-2"] {
        server.script_rule(&json!({"kind": "ack_lost", "report_id": report}));
    }
    dispatch(&server, "klinik", &complete_notice("geb-q-1"));
    dispatch(&server, "klinik", &complete_notice("geb-q-2"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let listed = loop {
        let listed = jobs(&server);
        if listed.len() == 2 && listed.iter().all(|j| j["waitingFor"] == "acknowledgement") {
            break listed;
        }
        assert!(std::time::Instant::now() < deadline, "{listed:?}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let id_of = |report: &str| {
        listed.iter().find(|j| j["report"] == report).unwrap()["id"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(listed[0]["module"], "birthnotice");
    assert_eq!(listed[0]["owner"], "klinik");

    // Discarded: the authority accepted the message already, so only with `force`; then the
    // report ends in FAILURE with the reason and the job is gone.
    let refused = server.admin_post(&format!("/admin/api/v1/jobs/{}/discard", id_of("geb-q-1")));
    assert_eq!(refused.status(), 409);
    let discarded = server.admin_post(&format!(
        "/admin/api/v1/jobs/{}/discard?force=true",
        id_of("geb-q-1")
    ));
    assert_eq!(discarded.status(), 200);
    let failed = server.wait_for_status("klinik", "geb-q-1", "FAILURE");
    assert_eq!(failed["failureReason"], "discarded by the operator");
    // Counted like any other FAILURE (and alerted: the same engine event).
    let metrics = server.admin_get("/metrics").text().unwrap();
    assert!(
        metrics.contains(r#"meldewerk_reports_total{module="birthnotice",outcome="failure"} 1"#),
        "{metrics}"
    );

    // Retried: the waiting message is delivered again now instead of after `ack_timeout_secs`;
    // the office answers the repeat with the original acceptance.
    assert_eq!(received(&server, "geb-q-2")[0]["repeat_submissions"], 0);
    let retried = server.admin_post(&format!("/admin/api/v1/jobs/{}/retry", id_of("geb-q-2")));
    assert_eq!(retried.status(), 200);
    assert_eq!(
        retried.json::<Value>().unwrap(),
        json!({"job": id_of("geb-q-2"), "action": "retry-now"})
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while received(&server, "geb-q-2")[0]["repeat_submissions"] != 1 {
        assert!(std::time::Instant::now() < deadline, "not delivered again");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(received(&server, "geb-q-2").len(), 1, "registered once");
    let waiting = jobs(&server);
    assert_eq!(waiting.len(), 1);
    assert_eq!(waiting[0]["waitingFor"], "acknowledgement");
    // Once the office lets the acknowledgement go, the report succeeds.
    server.reset_script();
    server.wait_for_status("klinik", "geb-q-2", "SUCCESS");
    assert!(jobs(&server).is_empty());

    let audit: Value = server.admin_get("/admin/api/v1/audit").json().unwrap();
    let entries = audit["entries"].as_array().unwrap();
    let actions: Vec<&str> = entries
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(
        actions,
        [
            "add-script-rule",
            "add-script-rule",
            "discard",
            "retry-now",
            "reset-script"
        ],
        "{audit}"
    );
    let entries = &entries[2..4];
    assert_eq!(entries[0]["who"], OPERATOR.0);
    assert!(entries[1]["target"]
        .as_str()
        .unwrap()
        .contains("klinik/birthnotice/geb-q-2"));
    assert!(entries[1]["at"].is_string());

    // What is gone cannot be acted on; the views need an operator and sane paging.
    let gone = server.admin_post(&format!("/admin/api/v1/jobs/{}/retry", id_of("geb-q-2")));
    assert_eq!(gone.status(), 404);
    assert_eq!(server.admin_get("/admin/api/v1/jobs?limit=0").status(), 400);
    let anonymous = server
        .client()
        .get(server.url("/admin/api/v1/audit"))
        .send()
        .unwrap();
    assert_eq!(anonymous.status(), 401);
}

/// Status, content type and body of an operator API answer.
fn answer(response: reqwest::blocking::Response) -> (u16, String, Value) {
    let status = response.status().as_u16();
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    (status, content_type, response.json().unwrap())
}

#[test]
fn path_and_query_values_that_do_not_parse_answer_in_the_error_shape() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    let json = "application/json".to_owned();
    for (path, job) in [
        ("/admin/api/v1/jobs/-1/retry", "-1"),
        ("/admin/api/v1/jobs/x/discard", "x"),
        (
            "/admin/api/v1/jobs/18446744073709551616/retry",
            "18446744073709551616",
        ),
    ] {
        assert_eq!(
            answer(server.admin_post(path)),
            (
                404,
                json.clone(),
                json!({"errors": [format!("no job {job} in the outbox")]})
            ),
            "{path}"
        );
    }
    // A path that does not parse is no reason to skip the credentials.
    let anonymous = server
        .client()
        .post(server.url("/admin/api/v1/jobs/-1/retry"))
        .send()
        .unwrap();
    assert_eq!(anonymous.status(), 401);
    for (path, error) in [
        (
            "/admin/api/v1/jobs?after=abc",
            "invalid digit found in string",
        ),
        (
            "/admin/api/v1/jobs?limit=-1",
            "invalid digit found in string",
        ),
        (
            "/admin/api/v1/audit?after=-5",
            "invalid digit found in string",
        ),
        (
            "/admin/api/v1/jobs/1/discard?force=maybe",
            "provided string was not `true` or `false`",
        ),
    ] {
        let response = if path.contains("discard") {
            server.admin_post(path)
        } else {
            server.admin_get(path)
        };
        assert_eq!(
            answer(response),
            (
                400,
                json.clone(),
                json!({"errors": [format!("invalid query string: Query deserialize error: {error}")]})
            ),
            "{path}"
        );
    }
    assert_eq!(
        answer(server.admin_get("/admin/api/v1/jobs?limit=0")),
        (
            400,
            json.clone(),
            json!({"errors": ["limit must be from 1 to 1000"]})
        )
    );
    // Sequence numbers end where the store's do (int64), as the document says; one past is
    // refused rather than answered with an empty page.
    for path in ["/admin/api/v1/jobs", "/admin/api/v1/audit"] {
        assert_eq!(
            answer(server.admin_get(&format!("{path}?after=9223372036854775808"))),
            (
                400,
                json.clone(),
                json!({"errors": ["after must be from 0 to 9223372036854775807"]})
            ),
            "{path}"
        );
        assert_eq!(
            server
                .admin_get(&format!("{path}?after=9223372036854775807"))
                .status(),
            200,
            "{path}"
        );
    }
}
