//! Logs keep secrets (health reporting and court mailbox): as `tests/log_secrets.rs` for the
//! civil registry, with `RUST_LOG=debug` a marker in every string member of each module's memento
//! request and in every input of its forms, a refused first submit and the corrected one
//! delivered, the memento and magic-link token (and a tampered one); for the bed occupancy also
//! the `/bal/` login with the password in the URL and the direct submission; for the court
//! mailbox also a court's message whose XML and attachment names carry markers, listed,
//! downloaded and acknowledged. The server's whole log shows none of them.

mod common;
mod hospreport_common;
mod labreport_support;
mod log_secrets_support;

use common::court::{
    acknowledge, court_server, drop_court_message, memento_body, wait_hydrated, BESCHLUSS,
};
use common::demis::complete_bed_report;
use common::*;
use log_secrets_support::*;

use serde_json::{json, Value};

/// Standard base64 decoded.
fn base64_decoded(text: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap()
}

/// A journey's user, module, and the members that stay unmarked.
struct Journey<'a> {
    server: &'a Server,
    user: &'a str,
    module: &'a str,
    keep: &'a [&'a str],
}

/// The form of the journey's module for the unmarked `sample` and for the marked `request`
/// (each in its browser, through its magic link and `open`, which goes from where the link
/// landed to the form); the marked form sent with markers in every input (see
/// [`send_marked`]). Returns the answer of the submit that was taken and the form sent.
fn marked_form_journey(
    Journey {
        server,
        user,
        module,
        keep,
    }: &Journey,
    (sample, request): (&Value, &Value),
    secrets: &mut Secrets,
    open: impl Fn(&Browser, &str) -> Form,
) -> (reqwest::blocking::Response, Form, Browser) {
    let (plain_browser, plain_location) = open_link(
        server,
        &issue(server, user, module, sample, secrets),
        secrets,
    );
    let plain = open(&plain_browser, &plain_location);
    let (browser, location) = open_link(
        server,
        &issue(server, user, module, request, secrets),
        secrets,
    );
    let form = open(&browser, &location);
    assert_eq!(form.status, 200, "{}", form.html);
    let (answer, sent) = send_marked(server, &browser, form, &plain, keep, secrets);
    (answer, sent, browser)
}

#[test]
fn a_hospitalisation_report_journey_logs_no_marker_memento_or_token() {
    use hospreport_common::*;
    let (_dir, server) = start(&DEBUG);
    let mut secrets = Secrets::new(MODULE);
    secrets.keep_login(USER, PASSWORD);
    secrets.keep("the PKCS#12 passphrase", common::pkcs12::PASSPHRASE);
    deposit_certificate(&server, KNOWN_BSNR);
    let id = "hosp-secret-1";
    let sample = complete(Some(id), KNOWN_BSNR);
    let keep = ["MeldeId", "BSNR"];
    let journey = Journey {
        server: &server,
        user: USER,
        module: MODULE,
        keep: &keep,
    };
    let (request, marked) = marked_request(&server, USER, MODULE, &sample, &keep, &mut secrets);
    assert!(marked >= 5, "only {marked} members took a marker");
    let open = |browser: &Browser, location: &str| browser.form(&server.url(location));
    let (answer, sent, browser) =
        marked_form_journey(&journey, (&sample, &request), &mut secrets, open);
    match answer.status().as_u16() {
        302 => assert_eq!(answer.headers()["location"], SUCCESS),
        202 => send_until_accepted(&server, &browser, &sent),
        other => panic!(
            "the corrected form answered {other}: {:?}",
            page_errors(answer)
        ),
    }
    server.wait_for_status_in(MODULE, USER, id, "SUCCESS");
    assert!(markers_in(&delivered(&server, MODULE, id)) >= 5);
    assert_log_keeps_secrets(&server, &secrets);
}

#[test]
fn a_laboratory_report_journey_logs_no_marker_memento_or_token() {
    use labreport_support::*;
    let (_dir, server) = start(&DEBUG);
    let module = "labreport";
    let mut secrets = Secrets::new(module);
    secrets.keep_login(USER, PASSWORD);
    let id = "lab-secret-1";
    let sample = standard(id);
    let keep = ["reportId", "BSNR"];
    let journey = Journey {
        server: &server,
        user: USER,
        module,
        keep: &keep,
    };
    let (request, marked) = marked_request(&server, USER, module, &sample, &keep, &mut secrets);
    assert!(marked >= 5, "only {marked} members took a marker");
    // The link lands on the disease index; the Influenza form, its findings chosen.
    let open = |browser: &Browser, index: &str| {
        let page = browser.get(&server.url(index)).text().unwrap();
        let link = disease_link(&page, "Influenza").replace("&amp;", "&");
        let mut form = browser.form(&server.url(&link));
        fill_findings(&mut form, "POSITIVE");
        form
    };
    let (answer, _, _) = marked_form_journey(&journey, (&sample, &request), &mut secrets, open);
    assert_eq!(answer.status(), 303, "{:?}", page_errors(answer));
    final_result(&server, id, "SUCCESS");
    assert!(markers_in(&delivered(&server, module, id)) >= 5);
    assert_log_keeps_secrets(&server, &secrets);
}

#[test]
fn a_bed_occupancy_journey_logs_no_marker_memento_or_password() {
    const USER: &str = "klinikum";
    let module = "bedreport";
    let dir = DataDir::new();
    dir.add_user(USER);
    let server = debug_server(&dir, &[]);
    let mut secrets = Secrets::new(module);
    secrets.keep_login(USER, PASSWORD);
    let id = "bett-secret-1";
    let sample = complete_bed_report(id);
    let keep = ["reportId", "StandortId", "IK_Nummer"];
    let (request, marked) = marked_request(&server, USER, module, &sample, &keep, &mut secrets);
    assert!(marked >= 4, "only {marked} members took a marker");

    // Its memento has no magic link: an integration's browser logs in at `/bal/` with the
    // password in the URL.
    let with_password = server.base.replacen(
        "http://",
        &format!("http://{USER}:correct%20horse%20battery@"),
        1,
    );
    let open = |body: &Value, secrets: &mut Secrets| {
        let memento = issue(&server, USER, module, body, secrets)["memento"]
            .as_str()
            .unwrap()
            .to_owned();
        let browser = Browser::new();
        let path = format!("/bedreport/pm/De/Bettenbelegung?m={memento}");
        let login = browser.get(&format!("{with_password}/bal{path}"));
        assert_eq!(login.status(), 302);
        keep_session(&login, secrets);
        secrets.keep("the password in a URL", "correct%20horse%20battery");
        let form = browser.form(&server.url(&path));
        assert_eq!(form.status, 200, "{}", form.html);
        (browser, form)
    };
    let (_, plain) = open(&sample, &mut secrets);
    let (browser, form) = open(&request, &mut secrets);
    let (answer, _) = send_marked(&server, &browser, form, &plain, &keep, &mut secrets);
    assert_eq!(answer.status(), 303, "{:?}", page_errors(answer));

    // The direct submission of the marked report under another id.
    let mut direct = request.clone();
    direct["reportId"] = json!("bett-secret-2");
    let decided = server.post_as(USER, "/api/bedreport/v1/report", &direct);
    assert_eq!(decided.status(), 200);
    assert_eq!(decided.json::<Value>().unwrap()["succeeded"], true);
    for id in [id, "bett-secret-2"] {
        let status = wait_until(&format!("{id} decided"), || {
            let answer = server.get_as(USER, &format!("/api/bedreport/v1/status/{id}"));
            (answer.status() == 200).then(|| answer.json::<Value>().unwrap())
        });
        assert_eq!(status["succeeded"], true, "{status}");
        assert!(markers_in(&delivered(&server, module, id)) >= 4);
    }
    assert_log_keeps_secrets(&server, &secrets);
}

/// The court's message of the fixture with a marker in every text a person wrote (names, case
/// references, descriptions, file names; codes, times and ids aside), and its files: the XML
/// and one attachment per file name it gives.
fn marked_court_message(secrets: &mut Secrets) -> Vec<(String, Vec<u8>)> {
    let xml = String::from_utf8(BESCHLUSS.to_vec()).unwrap();
    let mut marked = String::new();
    let mut attachments = Vec::new();
    let mut rest = xml.as_str();
    while let Some(end) = rest.find("</") {
        let (before, after) = rest.split_at(end);
        let start = before.rfind('>').map_or(0, |at| at + 1);
        let text = &before[start..];
        let element = after[2..].split('>').next().unwrap();
        let written = text.chars().any(char::is_alphabetic)
            && !text.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
            && !text.starts_with(|c: char| c.is_ascii_digit() && text.contains("T"))
            && element != "code";
        marked.push_str(&before[..start]);
        if written && element.ends_with("dateiname") {
            let name = format!("{}{}", secrets.marker(), &text[text.find('.').unwrap()..]);
            attachments.push((name.clone(), b"%PDF-1.7".to_vec()));
            marked.push_str(&name);
        } else if written {
            marked.push_str(&secrets.marker());
        } else {
            marked.push_str(text);
        }
        marked.push_str("</");
        rest = &after[2..];
    }
    marked.push_str(rest);
    let mut files = vec![("xjustiz_nachricht.xml".to_owned(), marked.into_bytes())];
    files.extend(attachments);
    files
}

#[test]
fn court_forms_and_a_court_message_log_no_marker_memento_or_token() {
    const USER: &str = "betreuung";
    let module = "guardianship";
    let (_dir, server) = court_server(&[USER], &DEBUG);
    let mut secrets = Secrets::new(module);
    secrets.keep_login(USER, PASSWORD);
    let keep = ["jobId", "safeId"];
    let journey = Journey {
        server: &server,
        user: USER,
        module,
        keep: &keep,
    };
    for (n, form) in [
        "BetreuungAnregung",
        "UnterbringungAntrag",
        "FreiheitsentzugAntrag",
    ]
    .into_iter()
    .enumerate()
    {
        let job = format!("vorgang-secret-{n}");
        let sample = memento_body(&job);
        let (request, marked) = marked_request(&server, USER, module, &sample, &keep, &mut secrets);
        assert!(marked >= 5, "only {marked} members took a marker");
        // The link lands on the index of the three forms.
        let open = |browser: &Browser, index: &str| {
            let memento = index.split_once("?m=").unwrap().1;
            browser.form(&server.url(&format!("/guardianship/{form}?m={memento}")))
        };
        let (answer, _, _) = marked_form_journey(&journey, (&sample, &request), &mut secrets, open);
        assert_eq!(answer.status(), 303, "{:?}", page_errors(answer));
        server.wait_for_status_in(module, USER, &job, "SUCCESS");
        // The message to the court: its files, the XJustiz XML first, in base64.
        let message: Value = serde_json::from_str(&delivered(&server, module, &job)).unwrap();
        let xml = base64_decoded(message["files"][0]["content"].as_str().unwrap());
        assert!(markers_in(&String::from_utf8_lossy(&xml)) >= 5);
    }

    let files = marked_court_message(&mut secrets);
    let files: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(n, c)| (n.as_str(), c.as_slice()))
        .collect();
    assert!(files.len() >= 3 && markers_in(&String::from_utf8_lossy(files[0].1)) >= 8);
    let message_id = drop_court_message(&server, &files);
    let listed = wait_hydrated(&server, USER, &message_id);
    let archive = server.get_as(USER, listed["url"].as_str().unwrap());
    assert_eq!(archive.status(), 200);
    let names = common::court::open_zip(&archive.bytes().unwrap())["names"].to_string();
    assert!(markers_in(&names) >= 2, "{names}");
    let acknowledged = acknowledge(&server, USER, &json!({"messageIds": [listed["id"]]}));
    assert_eq!(acknowledged.status(), 200);
    assert_log_keeps_secrets(&server, &secrets);
}
