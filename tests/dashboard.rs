//! The operators' dashboard over HTTP, as a browser without JavaScript uses it: the queue with
//! retry and discard, pause and resume per module, the report look-up, the audit log, the chart
//! of the last hour and the transports' last errors. Every action is a form with a CSRF token,
//! answered with a redirect to a page that says what was done, and recorded in the audit log.

mod common;

use common::*;
use reqwest::blocking::Response;
use serde_json::{json, Value};

/// An operator's GET of a dashboard page: status and HTML.
fn get_page(server: &Server, path: &str) -> (u16, String) {
    let response = server.admin_get(path);
    let status = response.status().as_u16();
    assert_eq!(
        response.headers()["content-type"],
        "text/html; charset=utf-8",
        "{path}"
    );
    // Under the service's `no-referrer` a browser would post the forms with `Origin: null`.
    assert_eq!(
        response.headers()["referrer-policy"],
        "same-origin",
        "{path}"
    );
    (status, response.text().unwrap())
}

/// The fields of the form posting to `action` on a page (its hidden CSRF token among them).
fn form_fields(html: &str, action: &str) -> Vec<(String, String)> {
    let at = html
        .find(&format!("action=\"{action}\""))
        .unwrap_or_else(|| panic!("no form for {action} in {html}"));
    let end = at + html[at..].find("</form>").unwrap();
    parse_form(&html[at..end])
}

/// Posts `fields` to `action` as the operator's browser does (its own origin, a form body).
fn post_form(server: &Server, action: &str, fields: &[(String, String)]) -> Response {
    server
        .client()
        .post(server.url(action))
        .basic_auth(OPERATOR.0, Some(OPERATOR.1))
        .header("Origin", &server.base)
        .header("Sec-Fetch-Site", "same-origin")
        .form(fields)
        .send()
        .unwrap()
}

/// Submits the form posting to `action` found on the page at `path`.
fn submit(server: &Server, path: &str, action: &str) -> Response {
    let (status, html) = get_page(server, path);
    assert_eq!(status, 200, "{html}");
    post_form(server, action, &form_fields(&html, action))
}

/// Where the 303 of an action leads.
fn redirected(response: Response) -> String {
    assert_eq!(response.status(), 303, "{:?}", response.text());
    response.headers()["location"].to_str().unwrap().to_owned()
}

/// The text of the element with `id` (its first text run).
fn text_of<'a>(html: &'a str, id: &str) -> &'a str {
    let open = format!("id=\"{id}\"");
    let start = html
        .find(&open)
        .unwrap_or_else(|| panic!("no #{id} in {html}"));
    let start = start + html[start..].find('>').unwrap() + 1;
    &html[start..start + html[start..].find('<').unwrap()]
}

fn add_rule(server: &Server, rule: Value) {
    let answer = server
        .client()
        .post(server.url("/admin/api/v1/transports/xpersonenstand/script/rules"))
        .basic_auth(OPERATOR.0, Some(OPERATOR.1))
        .json(&rule)
        .send()
        .unwrap();
    assert_eq!(answer.status(), 200);
}

/// Job ids of the outbox by report id.
fn job_of(server: &Server, report: &str) -> u64 {
    job_of_report(server, report).unwrap_or_else(|| panic!("no job of {report}"))["id"]
        .as_u64()
        .unwrap()
}

#[test]
fn retry_and_discard_through_the_queue_page_are_redirected_shown_and_audited() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(
        &dir,
        &[("MELDEWERK_TRANSPORTS__XPERSONENSTAND__ACK_DELAY_MS", "0")],
    );
    for report in ["geb-d-1", "geb-d-2"] {
        add_rule(&server, json!({"kind": "ack_lost", "report_id": report}));
    }
    dispatch(&server, "klinik", &complete_notice("geb-d-1"));
    dispatch(&server, "klinik", &complete_notice("geb-d-2"));
    let html = wait_until("both jobs to await their acknowledgement", || {
        let (_, html) = get_page(&server, "/admin/jobs");
        (html.matches("awaiting acknowledgement").count() == 2).then_some(html)
    });
    let (first, second) = (job_of(&server, "geb-d-1"), job_of(&server, "geb-d-2"));
    assert!(html.contains(&format!("<tr id=\"job-{first}\">")), "{html}");
    assert!(html
        .contains("href=\"/admin/reports?module=birthnotice&amp;id=geb%2Dd%2D1&amp;user=klinik\""));

    // Retry: 303 back to the queue, which says what was done; the office sees the repeat.
    let retry = format!("/admin/jobs/{second}/retry");
    let location = redirected(submit(&server, "/admin/jobs", &retry));
    assert_eq!(
        location,
        format!("/admin/jobs?page=1&done=retry-now&job={second}")
    );
    let (status, shown) = get_page(&server, &location);
    assert_eq!(status, 200);
    assert_eq!(
        text_of(&shown, "done"),
        format!("Job {second} is due now and goes to the authority with the next round. Recorded in the ")
    );
    wait_until("the message to be delivered again", || {
        (received(&server, "geb-d-2")[0]["repeat_submissions"] == 1).then_some(())
    });

    // Discard of a job the authority accepted: without ticking "discard anyway" it is refused
    // with the API's reason, and nothing happens.
    let discard = format!("/admin/jobs/{first}/discard");
    let (_, html) = get_page(&server, "/admin/jobs");
    let mut fields = form_fields(&html, &discard);
    assert!(fields.iter().all(|(name, _)| name != "force"));
    let refused = post_form(&server, &discard, &fields);
    assert_eq!(refused.status(), 409);
    let page = refused.text().unwrap();
    assert!(
        text_of(&page, "problem").starts_with(&format!(
            "job {first} waits for the acknowledgement of a message the authority accepted"
        )),
        "{page}"
    );
    fields.push(("force".into(), "true".into()));
    let location = redirected(post_form(&server, &discard, &fields));
    assert_eq!(
        location,
        format!("/admin/jobs?page=1&done=discard&job={first}")
    );
    let (_, shown) = get_page(&server, &location);
    assert!(text_of(&shown, "done").starts_with(&format!("Job {first} was discarded")));
    assert!(
        shown.contains(">birthnotice / geb-d-1</a> (klinik)</td><td data-label=\"Reason\" class=\"error\">discarded by the operator</td>"),
        "{shown}"
    );
    let failed = server.wait_for_status("klinik", "geb-d-1", "FAILURE");
    assert_eq!(failed["failureReason"], "discarded by the operator");

    // The same audit log as the API's actions.
    let audit = audited(&server);
    assert_eq!(
        audit[2..],
        [
            (
                "retry-now".to_owned(),
                format!("job {second} (klinik/birthnotice/geb-d-2)")
            ),
            (
                "discard".to_owned(),
                format!("job {first} (klinik/birthnotice/geb-d-1)")
            ),
        ]
    );
    let (_, log) = get_page(&server, "/admin/audit");
    assert!(
        log.contains("<td data-label=\"Action\">retry-now</td>"),
        "{log}"
    );
    assert!(log.contains("<td data-label=\"Action\">discard</td>"));

    // What is gone, or never was, gets a page with the right status, not an error.
    let token = form_fields(&html, &retry);
    for (job, shown) in [
        (first.to_string(), first.to_string()),
        ("-1".into(), "-1".into()),
    ] {
        let gone = post_form(&server, &format!("/admin/jobs/{job}/retry"), &token);
        assert_eq!(gone.status(), 404);
        let page = gone.text().unwrap();
        assert_eq!(
            text_of(&page, "problem"),
            format!("no job {shown} in the outbox")
        );
    }
    assert_eq!(audited(&server).len(), 4, "refusals are no actions");
}

#[test]
fn forms_without_the_operators_token_or_from_another_site_are_refused() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    let action = "/admin/modules/birthnotice/pause";
    let (_, html) = get_page(&server, "/admin/");
    let fields = form_fields(&html, action);
    let token = fields
        .iter()
        .find(|(name, _)| name == "csrf")
        .unwrap()
        .1
        .clone();
    assert!(token.len() >= 40, "{token}");

    let wrong = {
        let mut flipped = token.clone().into_bytes();
        flipped[0] = if flipped[0] == b'A' { b'B' } else { b'A' };
        String::from_utf8(flipped).unwrap()
    };
    for posted in [
        vec![],
        vec![("csrf".to_owned(), wrong)],
        vec![("csrf".to_owned(), "not base64 !".to_owned())],
        vec![("csrf".to_owned(), String::new())],
    ] {
        let refused = post_form(&server, action, &posted);
        assert_eq!(refused.status(), 403, "{posted:?}");
        let page = refused.text().unwrap();
        assert_eq!(
            text_of(&page, "problem"),
            "The form's security token is missing or wrong. Open the dashboard again and repeat \
             the action from there."
        );
    }
    // The right token from a page of another site: refused before anything else.
    let cross = server
        .client()
        .post(server.url(action))
        .basic_auth(OPERATOR.0, Some(OPERATOR.1))
        .header("Origin", "https://evil.example")
        .header("Sec-Fetch-Site", "cross-site")
        .form(&fields)
        .send()
        .unwrap();
    assert_eq!(cross.status(), 403);
    let page = cross.text().unwrap();
    assert!(text_of(&page, "problem").starts_with("This form was sent from a page of another site"));
    // Without credentials: the challenge, as everywhere in the operator's part.
    let anonymous = server
        .client()
        .post(server.url(action))
        .form(&fields)
        .send()
        .unwrap();
    assert_eq!(anonymous.status(), 401);
    assert!(anonymous.headers().contains_key("www-authenticate"));

    assert_eq!(server.actor("module:birthnotice")["paused"], false);
    assert!(audited(&server).is_empty());
    // A form of the dashboard may also come from a client that sends no provenance headers.
    let plain = server
        .client()
        .post(server.url(action))
        .basic_auth(OPERATOR.0, Some(OPERATOR.1))
        .form(&fields)
        .send()
        .unwrap();
    assert_eq!(plain.status(), 303);
    assert_eq!(server.actor("module:birthnotice")["paused"], true);
}

#[test]
fn a_paused_module_shows_as_paused_until_resumed_from_the_overview() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    let (_, html) = get_page(&server, "/admin/");
    assert!(html.contains("<td data-label=\"Deliveries\" class=\"state-running\">delivering</td>"));
    assert_eq!(text_of(&html, "paused"), "0");

    let location = redirected(submit(
        &server,
        "/admin/",
        "/admin/modules/birthnotice/pause",
    ));
    assert_eq!(location, "/admin/?done=pause&module=birthnotice");
    let (_, html) = get_page(&server, &location);
    assert_eq!(
        text_of(&html, "done"),
        "Module birthnotice paused: its reports wait in the outbox. Recorded in the "
    );
    assert_eq!(text_of(&html, "paused"), "1");
    let row = &html[html.find("<tr id=\"module-birthnotice\">").unwrap()..];
    let row = &row[..row.find("</tr>").unwrap()];
    assert!(row.contains("class=\"state-paused\">paused</td>"), "{row}");
    assert!(row.contains("action=\"/admin/modules/birthnotice/resume\""));
    assert!(html.contains("<td data-label=\"State\" class=\"state-paused\">paused</td>"));
    assert!(
        html.contains(
            "module:deathnotice</td><td data-label=\"State\" class=\"state-running\">running</td>"
        ),
        "{html}"
    );

    let location = redirected(submit(
        &server,
        "/admin/",
        "/admin/modules/birthnotice/resume",
    ));
    assert_eq!(location, "/admin/?done=resume&module=birthnotice");
    let (_, html) = get_page(&server, &location);
    assert!(text_of(&html, "done").starts_with("Module birthnotice resumed"));
    assert_eq!(text_of(&html, "paused"), "0");
    assert_eq!(
        audited(&server),
        [
            ("pause".to_owned(), "module birthnotice".to_owned()),
            ("resume".to_owned(), "module birthnotice".to_owned())
        ]
    );

    // A module that does not exist: a page saying so.
    let fields = form_fields(&html, "/admin/modules/birthnotice/pause");
    let unknown = post_form(&server, "/admin/modules/nosuchmodule/pause", &fields);
    assert_eq!(unknown.status(), 404);
    assert_eq!(
        text_of(&unknown.text().unwrap(), "problem"),
        "no module nosuchmodule"
    );
    let unknown = post_form(&server, "/admin/modules/birthnotice/halt", &fields);
    assert_eq!(unknown.status(), 404);
    assert_eq!(
        text_of(&unknown.text().unwrap(), "problem"),
        "There is no action halt."
    );
    // The counters say since when they count.
    assert!(text_of(&html, "since").starts_with("Counts since the service started, "));
}

#[test]
fn the_queue_and_the_audit_log_are_paged() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    // 27 audit entries, and 27 reports waiting while their module is paused.
    for _ in 0..13 {
        assert_eq!(
            server
                .admin_post("/admin/api/v1/modules/birthdata/pause")
                .status(),
            200
        );
        assert_eq!(
            server
                .admin_post("/admin/api/v1/modules/birthdata/resume")
                .status(),
            200
        );
    }
    assert_eq!(
        server
            .admin_post("/admin/api/v1/modules/birthnotice/pause")
            .status(),
        200
    );
    for n in 0..27 {
        dispatch(
            &server,
            "klinik",
            &complete_notice(&format!("geb-p-{n:02}")),
        );
    }

    let (status, first) = get_page(&server, "/admin/jobs");
    assert_eq!(status, 200);
    assert_eq!(first.matches("<tr id=\"job-").count(), 25);
    assert_eq!(first.matches(">waiting</td>").count(), 25);
    assert!(first.contains("<a rel=\"next\" href=\"/admin/jobs?page=2\">"));
    assert!(!first.contains("rel=\"prev\""));
    let (_, second) = get_page(&server, "/admin/jobs?page=2");
    assert_eq!(second.matches("<tr id=\"job-").count(), 2);
    assert!(second.contains("geb-p-26"));
    assert!(second.contains("<a rel=\"prev\" href=\"/admin/jobs?page=1\">"));
    assert!(!second.contains("rel=\"next\""));

    let (_, first) = get_page(&server, "/admin/audit");
    assert_eq!(first.matches("<td data-label=\"No.\">").count(), 25);
    assert!(first.contains("<td data-label=\"No.\">1</td>"));
    let (_, second) = get_page(&server, "/admin/audit?page=2");
    assert_eq!(second.matches("<td data-label=\"No.\">").count(), 2);
    assert!(second.contains("<td data-label=\"No.\">27</td>"));
    assert!(second.contains("<td data-label=\"Action\">pause</td>"));

    for path in ["/admin/jobs?page=3", "/admin/audit?page=3"] {
        let (status, html) = get_page(&server, path);
        assert_eq!(status, 404, "{path}");
        assert!(text_of(&html, "problem").ends_with("has no page 3; it ends earlier."));
    }
    for path in [
        "/admin/jobs?page=0",
        "/admin/jobs?page=-1",
        "/admin/audit?page=x",
        "/admin/audit?page=99999999999",
    ] {
        let (status, html) = get_page(&server, path);
        assert_eq!(status, 400, "{path}");
        assert_eq!(
            text_of(&html, "problem"),
            "The page number must be a whole number from 1."
        );
    }
}

#[test]
fn a_report_is_looked_up_by_module_and_id_with_its_history_and_message() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    dispatch(&server, "klinik", &complete_notice("geb-l-1"));
    server.wait_for_status("klinik", "geb-l-1", "SUCCESS");

    let (status, html) = get_page(&server, "/admin/reports");
    assert_eq!(status, 200);
    assert!(html.contains("<form id=\"lookup\" method=\"get\" action=\"/admin/reports\">"));
    assert!(html.contains("<option value=\"deathnotice\">deathnotice</option>"));

    let (status, html) = get_page(&server, "/admin/reports?module=birthnotice&id=geb-l-1");
    assert_eq!(status, 200, "{html}");
    assert_eq!(text_of(&html, "report"), "birthnotice / geb-l-1 of klinik");
    let history = &html[html.find("id=\"history\"").unwrap()..];
    let history = &history[..history.find("</table>").unwrap()];
    for step in [
        "submitted by the end user (PENDING)",
        "message built and signed",
        "accepted by the transport xpersonenstand",
        "SUCCESS",
    ] {
        assert!(history.contains(step), "{step} in {history}");
    }
    // Times in local time beside UTC.
    assert!(history.contains("(Europe/Berlin, 20"), "{history}");
    let message = server.admin_get("/admin/api/v1/reports/birthnotice/geb-l-1/message");
    let uuid = message.headers()["x-message-uuid"]
        .to_str()
        .unwrap()
        .to_owned();
    let sha = message.headers()["x-message-sha256"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(html.contains(&format!("<code>{uuid}</code>")));
    assert!(html.contains(&format!("<code>{sha}</code>")));
    assert!(text_of(&html, "message").contains("portal2StA.Geburt.081020"));
    assert!(html.contains("<option value=\"birthnotice\" selected>birthnotice</option>"));

    for (path, status, problem) in [
        (
            "/admin/reports?module=birthnotice&id=geb-l-2",
            404,
            "No birthnotice report with id geb-l-2 was submitted.",
        ),
        (
            "/admin/reports?module=deathnotice&id=geb-l-1",
            404,
            "No deathnotice report with id geb-l-1 was submitted.",
        ),
        (
            "/admin/reports?module=nosuchmodule&id=geb-l-1",
            404,
            "There is no module nosuchmodule.",
        ),
    ] {
        let (answered, html) = get_page(&server, path);
        assert_eq!(answered, status, "{path}");
        assert_eq!(text_of(&html, "problem"), problem, "{path}");
    }
}

#[test]
fn the_chart_draws_the_last_hours_reports_and_a_recovered_transport_shows_its_error_as_past() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    let (_, html) = get_page(&server, "/admin/");
    assert_eq!(
        text_of(&html, "chart-empty"),
        "No report finished in the last hour."
    );
    assert!(html.contains("<svg xmlns=\"http://www.w3.org/2000/svg\""));

    add_rule(
        &server,
        json!({"kind": "transient", "message": "Wartungsfenster", "count": 1, "report_id": "geb-c-1"}),
    );
    add_rule(
        &server,
        json!({"kind": "reject", "reason": "Standesamt: nicht zuständig", "report_id": "geb-c-3"}),
    );
    for id in ["geb-c-1", "geb-c-2", "geb-c-3"] {
        dispatch(&server, "klinik", &complete_notice(id));
    }
    server.wait_for_status("klinik", "geb-c-1", "SUCCESS");
    server.wait_for_status("klinik", "geb-c-2", "SUCCESS");
    server.wait_for_status("klinik", "geb-c-3", "FAILURE");

    let (_, html) = get_page(&server, "/admin/");
    let chart = &html[html.find("<figure class=\"chart\" id=\"chart\">").unwrap()..];
    let chart = &chart[..chart.find("</figure>").unwrap()];
    assert_eq!(chart.matches("<polyline").count(), 2, "{chart}");
    assert!(chart.contains(
        "<polyline class=\"series\" data-module=\"birthnotice\" data-outcome=\"success\""
    ));
    assert!(chart.contains("<title>birthnotice success: 2 in the last hour</title>"));
    assert!(chart.contains("<title>birthnotice failure: 1 in the last hour</title>"));
    assert!(chart.contains("reports per minute"));
    assert!(chart.contains("local time (Europe/Berlin)"));
    assert!(chart.contains("<li data-series=\"birthnotice failure\">"));
    // Started moments ago: the hour before the start is marked as not counted.
    assert!(chart.contains("not counted (before start)"));
    assert!(chart.contains("Counted in memory since the service started"));

    // The delivery's fault is over: shown with its time, as past.
    let transport = &html[html
        .find("<td data-label=\"Transport\">xpersonenstand</td>")
        .unwrap()..];
    let transport = &transport[..transport.find("</tr>").unwrap()];
    assert!(
        transport.contains("<span class=\"past\">last error "),
        "{transport}"
    );
    assert!(
        transport.contains(" ago, recovered since</span>"),
        "{transport}"
    );
    assert!(transport.contains("Wartungsfenster"), "{transport}");
    assert!(transport.contains("<time datetime=\"20"), "{transport}");
    // Which authority it reaches, and where, from the registry of transports.
    assert!(
        transport.contains("the civil-registry office (Standesamt)")
            && transport.contains("; simulated in this process</td>"),
        "{transport}"
    );
    let health: Value = server.admin_get("/admin/api/v1/transports").json().unwrap();
    let office = health
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "xpersonenstand")
        .unwrap_or_else(|| panic!("{health}"));
    assert!(office["last_error_at"].is_string(), "{health}");
}

#[test]
fn a_failing_job_shows_as_retrying_with_its_reason_and_failed_reports_are_listed() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    add_rule(
        &server,
        json!({"kind": "transient", "message": "Wartungsfenster", "count": 1000000, "report_id": "geb-r-1"}),
    );
    add_rule(
        &server,
        json!({"kind": "reject", "reason": "Standesamt: nicht zuständig", "report_id": "geb-r-2"}),
    );
    dispatch(&server, "klinik", &complete_notice("geb-r-1"));
    dispatch(&server, "klinik", &complete_notice("geb-r-2"));
    server.wait_for_status("klinik", "geb-r-2", "FAILURE");
    let html = wait_until("the job to be retried", || {
        let (_, html) = get_page(&server, "/admin/jobs");
        html.contains(">retrying</td>").then_some(html)
    });
    let job = job_of(&server, "geb-r-1");
    let row = &html[html.find(&format!("<tr id=\"job-{job}\">")).unwrap()..];
    let row = &row[..row.find("</tr>").unwrap()];
    assert!(
        row.contains("<td data-label=\"Reason\" class=\"error\">")
            && row.contains("Wartungsfenster"),
        "{row}"
    );
    let failures = &html[html.find("<table id=\"failures\">").unwrap()..];
    let failures = &failures[..failures.find("</table>").unwrap()];
    assert_eq!(
        failures.matches("<tr>").count(),
        2,
        "the header and one report"
    );
    assert!(
        failures.contains(">birthnotice / geb-r-2</a> (klinik)"),
        "{failures}"
    );
    assert!(
        failures.contains("Standesamt: nicht zuständig"),
        "{failures}"
    );
}
