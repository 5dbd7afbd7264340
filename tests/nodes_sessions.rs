//! Two nodes on one PostgreSQL database (`store.engine = "postgres"`), two server processes with
//! one master key, seen by one browser and by integrators: a session opened on one node (magic
//! link or `/bal/`) serves forms on the other, CSRF token included; a logout on one ends it on
//! the other; a password change through one node ends the user's sessions and the old password
//! on the other at once (the credential cache's tag holds the stored hash, read on every
//! request); failed logins spread over both nodes count against one allowance, and the block
//! holds on both.

mod common;

use common::*;
use meldewerk_storage::postgres::testing::cluster;
use reqwest::blocking::{Client, Response};
use serde_json::json;

/// The master key both nodes share: magic links, mementos and the credential cache's tags
/// derive from it.
const MASTER_KEY: [u8; 32] = [3; 32];

/// Three failures a minute per name: a block lasts 20 s, far longer than a test needs.
const PER_NAME: (&str, &str) = ("MELDEWERK_SECURITY__FAILED_LOGINS_PER_USER_PER_MINUTE", "3");

/// Two nodes on one fresh database, each with a data directory of its own; user `klinik` added
/// through the command line with [`PASSWORD`].
struct Nodes {
    a: Server,
    b: Server,
    _dirs: (DataDir, DataDir),
}

fn start_nodes(extra: &[(&str, &str)]) -> Nodes {
    let url = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(cluster().fresh_database());
    let store = on_database(&url, MASTER_KEY);
    let dirs = (DataDir::sharing(&store), DataDir::sharing(&store));
    dirs.0.add_user("klinik");
    let a = Server::start(&dirs.0, extra);
    let b = Server::start(&dirs.1, extra);
    Nodes { a, b, _dirs: dirs }
}

/// Where a response redirects to.
fn location(response: &Response) -> String {
    response.headers()["location"].to_str().unwrap().to_string()
}

/// Opens `link` on `node` in `browser`: the form's path its redirect names.
fn redeem(browser: &Browser, node: &Server, link: &str) -> String {
    let response = browser.get(&node.url(link));
    assert_eq!(response.status(), 302, "the magic link redirects");
    let target = location(&response);
    assert!(target.starts_with("/forms/"), "{target}");
    target
}

/// Fills the signature where the form asks for one.
fn sign(form: &mut Form) {
    if form.html.contains("name=\"signatur.name\"") {
        form.set("signatur.name", "Dr. Erika Beispiel");
        form.set("signatur.bestaetigt", "true");
    }
}

/// `GET /logout` on `node`: the CSRF token of the session's logout button.
fn logout_token(browser: &Browser, node: &Server) -> String {
    let page = browser.form(&node.url("/logout"));
    assert_eq!(page.status, 200);
    page.get("csrf").expect("a logout button").to_string()
}

fn post_logout(browser: &Browser, node: &Server, csrf: &str) -> u16 {
    let mut form = Form::read(browser.get(&node.url("/logout")));
    form.fields = vec![("csrf".into(), csrf.into())];
    browser.submit_to(node, "/logout", &form).status().as_u16()
}

fn assert_login_error(response: Response, what: &str) {
    assert_eq!(response.status(), 302, "{what}");
    assert_eq!(location(&response), "/login?error", "{what}");
}

fn reports_as(client: &Client, node: &Server, user: &str, password: &str) -> Response {
    client
        .get(node.url("/api/birthnotice/v1/reports"))
        .basic_auth(user, Some(password))
        .send()
        .unwrap()
}

#[test]
fn a_session_opened_on_one_node_serves_forms_on_the_other_until_a_logout_on_either() {
    let nodes = start_nodes(&[]);
    let (a, b) = (&nodes.a, &nodes.b);

    // Opened on A by a magic link; the form loads on B, and its post, with the session's CSRF
    // token, dispatches on B.
    let browser = Browser::new();
    let target = redeem(
        &browser,
        a,
        &magic_link(a, "klinik", &complete_notice("geb-n-1")),
    );
    let mut form = browser.form(&b.url(&target));
    assert_eq!(form.status, 200, "the form on B");
    assert!(form.get("csrf").is_some_and(|t| !t.is_empty()));
    sign(&mut form);
    let sent = browser.submit(b, &form);
    assert_eq!(sent.status(), 303, "dispatched on B");
    let confirmation = location(&sent);
    assert_eq!(
        browser.get(&a.url(&confirmation)).status(),
        200,
        "and read on A"
    );

    // A post with another token is refused on B, and the session stays.
    let mut forged = browser.form(&b.url(&target));
    forged.set("csrf", "not-the-token");
    assert_eq!(browser.submit(b, &forged).status(), 403);
    assert_eq!(browser.form(&b.url(&target)).status, 200);

    // Logged out on A: B sends the browser to the login page; so does A.
    let csrf = logout_token(&browser, a);
    assert_eq!(post_logout(&browser, a, &csrf), 200);
    assert_login_error(browser.get(&b.url(&target)), "B after the logout on A");
    assert_login_error(browser.get(&a.url(&target)), "A after the logout on A");

    // A `/bal/` login on B serves forms on A, and a logout on B ends it on A.
    let link = magic_link(a, "klinik", &complete_notice("geb-n-2"));
    let target = redeem(&Browser::new(), a, &link);
    let bal = Browser::new();
    // Credentials in the URL, as a browser sends them after the challenge.
    let with_userinfo = b
        .base
        .replacen("http://", "http://klinik:correct%20horse%20battery@", 1);
    let response = bal.get(&format!("{with_userinfo}/bal{target}"));
    assert_eq!(response.status(), 302);
    assert_eq!(location(&response), target);
    assert_eq!(
        bal.form(&a.url(&target)).status,
        200,
        "the /bal/ session on A"
    );
    let csrf = logout_token(&bal, b);
    assert_eq!(post_logout(&bal, b, &csrf), 200);
    assert_login_error(bal.get(&a.url(&target)), "A after the logout on B");
}

#[test]
fn a_password_change_on_one_node_ends_sessions_and_the_old_password_on_the_other() {
    const NEW_PASSWORD: &str = "a brand new passphrase 42";
    let nodes = start_nodes(&[]);
    let (a, b) = (&nodes.a, &nodes.b);
    let integrator = loopback_client().build().unwrap();
    // The old password works on B and is in B's credential cache now.
    for _ in 0..2 {
        assert_eq!(reports_as(&integrator, b, "klinik", PASSWORD).status(), 200);
    }
    let browser = Browser::new();
    let target = redeem(
        &browser,
        b,
        &magic_link(b, "klinik", &complete_notice("geb-n-3")),
    );
    assert_eq!(browser.form(&a.url(&target)).status, 200);
    assert_eq!(browser.form(&b.url(&target)).status, 200);

    // The operator changes the password on A.
    let changed = a
        .client()
        .put(a.url("/admin/api/v1/users/klinik/password"))
        .basic_auth(OPERATOR.0, Some(OPERATOR.1))
        .json(&json!({ "password": NEW_PASSWORD }))
        .send()
        .unwrap();
    assert_eq!(changed.status(), 204);

    // B's very next requests: the session is refused, the old password too (its cached
    // success was for the old hash), the new one admitted.
    assert_login_error(browser.get(&b.url(&target)), "the session on B");
    assert_eq!(reports_as(&integrator, b, "klinik", PASSWORD).status(), 401);
    assert_eq!(
        reports_as(&integrator, b, "klinik", NEW_PASSWORD).status(),
        200
    );
    assert_login_error(browser.get(&a.url(&target)), "the session on A");
}

#[test]
fn failed_logins_spread_over_two_nodes_count_against_one_allowance() {
    let nodes = start_nodes(&[PER_NAME]);
    let (a, b) = (&nodes.a, &nodes.b);
    let attacker = loopback_client()
        .local_address("127.0.0.2".parse::<std::net::IpAddr>().unwrap())
        .build()
        .unwrap();
    // Three wrong passwords, on A, B, A: each answered as such.
    for (n, node) in [a, b, a].into_iter().enumerate() {
        let response = reports_as(&attacker, node, "klinik", "wrong password");
        assert_eq!(response.status(), 401, "failure {}", n + 1);
    }
    // The allowance is used up in all: both nodes refuse, the right password included.
    for (name, node) in [("B", b), ("A", a)] {
        for password in ["wrong password", PASSWORD] {
            let response = reports_as(&attacker, node, "klinik", password);
            assert_eq!(response.status(), 429, "{name}");
            let retry: u64 = response.headers()["retry-after"]
                .to_str()
                .unwrap()
                .parse()
                .unwrap();
            assert!((1..=20).contains(&retry), "{name}: Retry-After {retry}");
        }
    }

    // The operator's password alike, on its own count.
    let operator = |node: &Server, password: &str| {
        attacker
            .get(node.url("/admin/api/v1/actors"))
            .basic_auth(OPERATOR.0, Some(password))
            .send()
            .unwrap()
            .status()
            .as_u16()
    };
    assert_eq!(operator(b, "guess 1"), 401);
    assert_eq!(operator(a, "guess 2"), 401);
    assert_eq!(operator(b, "guess 3"), 401);
    assert_eq!(operator(a, OPERATOR.1), 429);
    assert_eq!(operator(b, OPERATOR.1), 429);
}
