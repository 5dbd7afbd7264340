//! Operator alert mails and API users' notices over a real SMTP server on loopback (Python's
//! aiosmtpd, writing every mail it receives into a Maildir): a report ending in FAILURE is mailed
//! to the operators and to its owner's address (set and removed on the command line and online,
//! with exact errors for bad addresses), failures within the window are grouped into one mail,
//! a dead mail server blocks nothing and gets the mail once it is up, and an acknowledgement
//! inbox that stops answering is mailed once as a degraded collector.

mod common;

use std::time::{Duration, Instant};

use common::remote::Peer;
use common::smtp::*;
use common::*;

const OPERATORS: &str = "ops@example.org,oncall@example.org";

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A server whose every report is refused by the office, mailing alerts to `port`.
fn failing_server(dir: &DataDir, port: u16, window_secs: &str) -> Server {
    failing_server_with(dir, port, window_secs, &[])
}

/// [`failing_server`] with `more` settings.
fn failing_server_with(
    dir: &DataDir,
    port: u16,
    window_secs: &str,
    more: &[(&str, &str)],
) -> Server {
    let port = port.to_string();
    let mut env = mailing(&port, window_secs);
    env.push(("MELDEWERK_TRANSPORTS__XPERSONENSTAND__FAILURE_RATE", "1.0"));
    env.extend_from_slice(more);
    Server::start(dir, &env)
}

/// Settings that mail alerts to [`OPERATORS`] through the SMTP server on `port`, grouped over
/// `window_secs`.
fn mailing<'a>(port: &'a str, window_secs: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("MELDEWERK_MAIL__SMTP_HOST", "127.0.0.1"),
        ("MELDEWERK_MAIL__SMTP_PORT", port),
        ("MELDEWERK_MAIL__TLS", "none"),
        (
            "MELDEWERK_MAIL__FROM",
            "meldewerk <alerts@meldewerk.example>",
        ),
        ("MELDEWERK_MAIL__OPERATORS", OPERATORS),
        ("MELDEWERK_MAIL__GROUP_WINDOW_SECS", window_secs),
        ("MELDEWERK_MAIL__RETRY_MAX_SECS", "2"),
    ]
}

#[test]
fn a_failed_report_is_mailed_to_the_operators() {
    let port = free_port();
    let smtp = SmtpServer::start(port);
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = failing_server(&dir, port, "1");
    let id = dispatch(&server, "klinik", &complete_notice("geb-mail-1"));
    let result = server.wait_for_status("klinik", &id, "FAILURE");
    let reason = result["failureReason"].as_str().unwrap().to_string();

    wait_until("the alert mail", || !smtp.mails().is_empty());
    let mails = smtp.mails();
    assert_eq!(mails.len(), 1, "{mails:?}");
    let mail = &mails[0];
    assert_eq!(mail.subject, "[meldewerk] delivery failed: 1 event");
    assert!(mail.from.contains("alerts@meldewerk.example"), "{mail:?}");
    for operator in OPERATORS.split(',') {
        assert!(mail.to.contains(operator), "{mail:?}");
        assert!(mail.rcpt_to.contains(operator), "{mail:?}");
    }
    let line = format!("module=birthnotice report={id} reason={reason}");
    assert!(mail.body.contains(&line), "{line} in {}", mail.body);
    // Nothing of the report's content: no names, no places.
    for personal in ["Muster", "Lina", "Anna", "Gartenweg", "Berlin", "klinik"] {
        assert!(!mail.body.contains(personal), "{personal} in {}", mail.body);
    }
    // Logged once the server has the SMTP server's answer, which may come after the mail arrived.
    wait_until("the sent mail in the log", || {
        server.log().contains("alert mail sent")
    });
}

#[test]
fn ten_failures_within_the_window_make_one_mail() {
    let port = free_port();
    let smtp = SmtpServer::start(port);
    let dir = DataDir::new();
    dir.add_user("klinik");
    // A window far longer than the test: the mail goes out at shutdown, with everything pending.
    let mut server = failing_server(&dir, port, "3600");
    let ids: Vec<String> = (0..10)
        .map(|i| {
            let notice = complete_notice(&format!("geb-group-{i}"));
            dispatch(&server, "klinik", &notice)
        })
        .collect();
    for id in &ids {
        server.wait_for_status("klinik", id, "FAILURE");
    }
    assert!(smtp.mails().is_empty(), "nothing before the window closes");
    assert!(server.terminate(), "clean exit");

    let mails = smtp.mails();
    assert_eq!(mails.len(), 1, "one grouped mail: {mails:?}");
    assert_eq!(mails[0].subject, "[meldewerk] delivery failed: 10 events");
    for id in &ids {
        let line = format!("module=birthnotice report={id} reason=");
        assert!(mails[0].body.contains(&line), "{id} in {}", mails[0].body);
    }
}

#[test]
fn a_dead_mail_server_blocks_nothing_and_gets_the_mail_once_it_is_up() {
    let port = free_port();
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = failing_server(&dir, port, "1");
    let first = dispatch(&server, "klinik", &complete_notice("geb-dead-1"));
    server.wait_for_status("klinik", &first, "FAILURE");
    wait_until("the failed send in the log", || {
        server
            .log()
            .contains("alert mail could not be sent; will retry")
    });

    // Deliveries and the API go on meanwhile.
    let second = dispatch(&server, "klinik", &complete_notice("geb-dead-2"));
    server.wait_for_status("klinik", &second, "FAILURE");
    assert_eq!(
        server
            .client()
            .get(server.url("/healthz"))
            .send()
            .unwrap()
            .status(),
        200
    );
    let listed = server.get_as("klinik", "/api/birthnotice/v1/reports");
    assert_eq!(listed.status(), 200);

    let smtp = SmtpServer::start(port);
    wait_until("the retried mail", || {
        let bodies: String = smtp.mails().iter().map(|m| m.body.clone()).collect();
        bodies.contains("report=geb-dead-1 ") && bodies.contains("report=geb-dead-2 ")
    });
    for mail in smtp.mails() {
        assert!(
            mail.subject.starts_with("[meldewerk] delivery failed: "),
            "{mail:?}"
        );
    }
}

#[test]
fn an_acknowledgement_inbox_that_does_not_answer_degrades_its_collector_and_is_mailed() {
    let port = free_port();
    let smtp = SmtpServer::start(port);
    let sim_dir = DataDir::new();
    let mut simulator = Peer::simulator(sim_dir.path(), &[]);
    let dir = DataDir::new();
    dir.add_user("klinik");
    let port = port.to_string();
    let mut env = mailing(&port, "1");
    env.push(("MELDEWERK_TRANSPORTS__XPERSONENSTAND__URL", &simulator.base));
    let server = Server::start(&dir, &env);
    let first = dispatch(&server, "klinik", &complete_notice("geb-inbox-1"));
    server.wait_for_status("klinik", &first, "SUCCESS");
    let collector = "inbox:xpersonenstand";
    assert_eq!(server.actor(collector)["state"], "running");

    simulator.kill();
    wait_until("the collector to degrade", || {
        server.actor(collector)["state"] == "degraded"
    });
    let health = server.actor(collector);
    let error = health["last_error"].as_str().unwrap();
    assert!(
        error.starts_with("inbox fetch failed: ") && error.contains("Connection refused"),
        "{health}"
    );
    let dashboard = server.admin_get("/admin/").text().unwrap();
    assert!(
        dashboard.contains("<strong id=\"degraded\">1</strong>"),
        "{dashboard}"
    );
    wait_until("the alert mail", || !smtp.mails().is_empty());
    let mails = smtp.mails();
    assert_eq!(mails.len(), 1, "{mails:?}");
    assert_eq!(mails[0].subject, "[meldewerk] actor degraded: 1 event");
    let line = format!("actor={collector} last_error=inbox fetch failed: ");
    assert!(mails[0].body.contains(&line), "{line} in {}", mails[0].body);

    simulator.start_again();
    wait_until("the collector to run again", || {
        server.actor(collector)["state"] == "running"
    });
    let second = dispatch(&server, "klinik", &complete_notice("geb-inbox-2"));
    server.wait_for_status("klinik", &second, "SUCCESS");
    // One episode, one mail.
    assert_eq!(smtp.mails().len(), 1, "{:?}", smtp.mails());
}

/// `PUT /admin/api/v1/users/{name}/email` with `body` as operator.
fn set_email(server: &Server, name: &str, body: &str) -> reqwest::blocking::Response {
    server
        .client()
        .put(server.url(&format!("/admin/api/v1/users/{name}/email")))
        .basic_auth(OPERATOR.0, Some(OPERATOR.1))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .unwrap()
}

#[test]
fn a_users_failed_report_is_mailed_to_the_address_on_their_account_only() {
    let port = free_port();
    let smtp = SmtpServer::start(port);
    let dir = DataDir::new();
    dir.add_user("klinik");
    dir.add_user("praxis");
    let (ok, out, err) = dir.cli(&["user", "email", "klinik", "it@klinik.example"], None);
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "notices of klinik go to it@klinik.example");
    // A short pause between two mails to one audience, so that the test sees a second one.
    let mut server = failing_server_with(
        &dir,
        port,
        "1",
        &[("MELDEWERK_MAIL__ALERT_MIN_INTERVAL_SECS", "1")],
    );
    // praxis (no address yet) fails first, so its batch is settled before klinik's mail goes
    // out: one mail at a time, in the order they are due.
    let praxis = dispatch(&server, "praxis", &complete_notice("geb-notice-2"));
    server.wait_for_status("praxis", &praxis, "FAILURE");
    let klinik = dispatch(&server, "klinik", &complete_notice("geb-notice-1"));
    let reason = server.wait_for_status("klinik", &klinik, "FAILURE")["failureReason"]
        .as_str()
        .unwrap()
        .to_string();

    wait_until("klinik's notice", || {
        !mails_to(&smtp, "it@klinik.example").is_empty()
    });
    let notice = &mails_to(&smtp, "it@klinik.example")[0];
    assert_eq!(notice.subject, "[meldewerk] delivery failed: 1 event");
    assert_eq!(notice.to, "klinik <it@klinik.example>");
    assert_eq!(
        notice.rcpt_to, "it@klinik.example",
        "no operator in the envelope"
    );
    assert!(
        notice.from.contains("alerts@meldewerk.example"),
        "{notice:?}"
    );
    assert!(
        notice
            .body
            .starts_with("meldewerk notice for API user klinik: delivery failed"),
        "{}",
        notice.body
    );
    let line = format!("module=birthnotice report={klinik} reason={reason}");
    assert!(notice.body.contains(&line), "{line} in {}", notice.body);
    // Nothing of another user's report, of the report's content, or of the operators' API.
    for foreign in [praxis.as_str(), "Muster", "Gartenweg", "/admin/"] {
        assert!(
            !notice.body.contains(foreign),
            "{foreign} in {}",
            notice.body
        );
    }
    // The operators hear of both reports.
    wait_until("the operators' alerts", || {
        let bodies: String = mails_to(&smtp, "ops@example.org")
            .iter()
            .map(|m| m.body.clone())
            .collect();
        bodies.contains(&format!("report={klinik} "))
            && bodies.contains(&format!("report={praxis} "))
    });

    // Online: praxis gets an address, klinik's is removed; both take effect at once.
    assert_eq!(
        set_email(&server, "praxis", r#"{"email": "edv@praxis.example"}"#).status(),
        204
    );
    assert_eq!(
        set_email(&server, "klinik", r#"{"email": null}"#).status(),
        204
    );
    let users: Vec<serde_json::Value> = server.admin_get("/admin/api/v1/users").json().unwrap();
    let emails: Vec<(&str, &serde_json::Value)> = users
        .iter()
        .map(|u| (u["name"].as_str().unwrap(), &u["email"]))
        .collect();
    assert_eq!(
        emails,
        [
            ("klinik", &serde_json::Value::Null),
            ("praxis", &serde_json::json!("edv@praxis.example"))
        ]
    );
    let klinik_later = dispatch(&server, "klinik", &complete_notice("geb-notice-3"));
    let praxis_later = dispatch(&server, "praxis", &complete_notice("geb-notice-4"));
    server.wait_for_status("klinik", &klinik_later, "FAILURE");
    server.wait_for_status("praxis", &praxis_later, "FAILURE");
    wait_until("praxis's notice", || {
        !mails_to(&smtp, "edv@praxis.example").is_empty()
    });
    // Shutdown settles every pending batch, klinik's included: it finds no address.
    assert!(server.terminate(), "clean exit");
    let praxis_mails = mails_to(&smtp, "edv@praxis.example");
    assert_eq!(praxis_mails.len(), 1, "{praxis_mails:?}");
    assert!(praxis_mails[0]
        .body
        .contains(&format!("report={praxis_later} ")));
    assert!(
        !praxis_mails[0].body.contains(&format!("report={praxis} ")),
        "only what failed since the address was set"
    );
    assert_eq!(
        mails_to(&smtp, "it@klinik.example").len(),
        1,
        "no mail after the address was removed"
    );
    let operators: String = mails_to(&smtp, "ops@example.org")
        .iter()
        .map(|m| m.body.clone())
        .collect();
    assert!(
        operators.contains(&format!("report={klinik_later} ")),
        "{operators}"
    );
}

#[test]
fn addresses_are_checked_with_exact_errors_online_and_on_the_command_line() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let (ok, _, err) = dir.cli(
        &[
            "user",
            "add",
            "labor",
            "--password-stdin",
            "--email",
            "kein-at",
        ],
        Some(PASSWORD),
    );
    assert!(!ok);
    assert!(
        err.contains("invalid email \"kein-at\": give one address like name@example.org, at most 254 characters"),
        "{err}"
    );
    let (ok, _, err) = dir.cli(&["user", "email", "klinik"], None);
    assert!(!ok, "an address or --none is required");
    assert!(err.contains("--none"), "{err}");
    let (ok, out, err) = dir.cli(
        &[
            "user",
            "add",
            "labor",
            "--password-stdin",
            "--email",
            "edv@labor.example",
        ],
        Some(PASSWORD),
    );
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "user labor added");
    let (ok, out, _) = dir.cli(&["user", "list"], None);
    assert!(ok);
    let labor = out.lines().find(|l| l.starts_with("labor ")).unwrap();
    assert!(labor.contains("edv@labor.example"), "{out}");
    let (ok, out, err) = dir.cli(&["user", "email", "labor", "--none"], None);
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "labor gets no notices");

    let server = Server::start(&dir, &[]);
    let errors = |response: reqwest::blocking::Response, status: u16| -> serde_json::Value {
        assert_eq!(response.status(), status);
        response.json::<serde_json::Value>().unwrap()["errors"].clone()
    };
    use serde_json::json;
    assert_eq!(
        errors(set_email(&server, "klinik", r#"{"email": "a@b@c"}"#), 400),
        json!(["invalid email \"a@b@c\": give one address like name@example.org, at most 254 characters"])
    );
    let long = format!(r#"{{"email": "{}@example.org"}}"#, "x".repeat(250));
    assert_eq!(
        errors(set_email(&server, "klinik", &long), 400)
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        errors(set_email(&server, "klinik", r#"{"email": 5}"#), 400),
        json!(["email must be a string"])
    );
    assert_eq!(
        errors(set_email(&server, "klinik", r#"{"email": " "}"#), 400),
        json!(["email must not be empty"])
    );
    assert_eq!(
        errors(set_email(&server, "klinik", "{}"), 400),
        json!(["email is required: an address, or null to remove it"])
    );
    assert_eq!(
        errors(
            set_email(&server, "klinik", r#"{"email": null, "cc": "x@y.z"}"#),
            400
        ),
        json!(["cc is not a known field"])
    );
    assert_eq!(
        errors(
            set_email(&server, "ghost", r#"{"email": "a@b.example"}"#),
            404
        ),
        json!(["there is no user ghost"])
    );
    let unauthenticated = server
        .client()
        .put(server.url("/admin/api/v1/users/klinik/email"))
        .json(&json!({"email": "a@b.example"}))
        .send()
        .unwrap();
    assert_eq!(unauthenticated.status(), 401);
    let created = server
        .client()
        .post(server.url("/admin/api/v1/users"))
        .basic_auth(OPERATOR.0, Some(OPERATOR.1))
        .json(&json!({"name": "praxis", "password": PASSWORD, "email": "kein-at"}))
        .send()
        .unwrap();
    assert_eq!(
        errors(created, 400),
        json!(["invalid email \"kein-at\": give one address like name@example.org, at most 254 characters"])
    );
    // Nothing refused changed anything.
    let users: Vec<serde_json::Value> = server.admin_get("/admin/api/v1/users").json().unwrap();
    let emails: Vec<&serde_json::Value> = users.iter().map(|u| &u["email"]).collect();
    assert_eq!(emails, [&serde_json::Value::Null, &serde_json::Value::Null]);
    assert_eq!(users.len(), 2);
}
