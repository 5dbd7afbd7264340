//! Magic links, `/bal/` logins and browser sessions against the real server (spec/01 §2.1, §3,
//! §4.2, §5 and the `/bal/` row of spec/04): a valid token logs in and redirects to the form with a
//! correctly flagged session cookie; every kind of broken, expired or revoked token ends in exactly
//! `302 /login?error` without a cookie; tokens are reusable until expiry; mementos are bound to
//! their user; logout ends the session; `/bal/` keeps the query and refuses unsafe targets; no
//! redirect leaves the site; and the log never shows tokens, mementos or passwords.

mod common;

use std::io::{Read, Write};

use base64::Engine as _;
use common::*;
use reqwest::blocking::Response;
use serde_json::Value;

/// What a memento request hands out.
struct Issued {
    memento: String,
    token: String,
    link: String,
}

fn issue(server: &Server, user: &str, id: &str) -> Issued {
    let response = server.memento(user, &complete_notice(id));
    assert_eq!(response.status(), 200);
    let body: Value = response.json().unwrap();
    let memento = body["memento"].as_str().unwrap().to_string();
    let link = body["magicLink"].as_str().unwrap().to_string();
    let token = link
        .strip_prefix("/mtl/")
        .unwrap()
        .split('?')
        .next()
        .unwrap()
        .to_string();
    Issued {
        memento,
        token,
        link,
    }
}

/// The Location header; every redirect must stay on this site.
fn location(response: &Response) -> String {
    let location = response
        .headers()
        .get("location")
        .expect("a Location header")
        .to_str()
        .unwrap();
    assert_local(location);
    location.to_string()
}

fn assert_local(location: &str) {
    assert!(
        location.starts_with('/') && !location.starts_with("//") && !location.starts_with("http"),
        "open redirect: {location}"
    );
}

fn set_cookies(response: &Response) -> Vec<String> {
    response
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .collect()
}

/// The `meldewerk_session` cookie's value and its attributes (lower-case).
fn session_cookie(response: &Response) -> (String, Vec<String>) {
    let cookies = set_cookies(response);
    let cookie = cookies
        .iter()
        .find(|c| c.starts_with("meldewerk_session="))
        .unwrap_or_else(|| panic!("no session cookie in {cookies:?}"));
    let mut parts = cookie.split(';').map(str::trim);
    let value = parts
        .next()
        .unwrap()
        .trim_start_matches("meldewerk_session=")
        .to_string();
    (value, parts.map(str::to_ascii_lowercase).collect())
}

/// GET without cookies.
fn get(server: &Server, path: &str) -> Response {
    server.client().get(server.url(path)).send().unwrap()
}

/// A 302 to `target`.
fn assert_redirect(response: &Response, target: &str) {
    assert_eq!(response.status(), 302);
    assert_eq!(location(response), target);
}

/// Whether every `wanted` attribute is present.
fn assert_attributes(attributes: &[String], wanted: &[&str]) {
    for w in wanted {
        assert!(attributes.iter().any(|a| a == w), "{w}: {attributes:?}");
    }
}

fn form_path(memento: &str) -> String {
    format!("/forms/birthnotice?m={memento}")
}

/// Exactly `302 /login?error` and no cookie at all.
fn assert_login_error(response: &Response, what: &str) {
    assert_eq!(response.status(), 302, "{what}");
    assert_eq!(location(response), "/login?error", "{what}");
    let cookies = set_cookies(response);
    assert!(cookies.is_empty(), "{what}: {cookies:?}");
}

/// GET with an explicit session cookie (no cookie jar involved).
fn get_with_cookie(server: &Server, path: &str, cookie: &str) -> Response {
    server
        .client()
        .get(server.url(path))
        .header("cookie", format!("meldewerk_session={cookie}"))
        .send()
        .unwrap()
}

/// POST `/logout` with an explicit session cookie and the given form body.
fn post_logout(server: &Server, cookie: &str, body: &[(&str, &str)]) -> Response {
    server
        .client()
        .post(server.url("/logout"))
        .header("cookie", format!("meldewerk_session={cookie}"))
        .form(body)
        .send()
        .unwrap()
}

/// The CSRF token in the logout button of `GET /logout` for the session `cookie`.
fn logout_token(server: &Server, cookie: &str) -> String {
    let page = get_with_cookie(server, "/logout", cookie);
    assert_eq!(page.status(), 200);
    let html = page.text().unwrap();
    assert!(html.contains("action=\"/logout\""), "{html}");
    parse_form(&html)
        .into_iter()
        .find(|(name, _)| name == "csrf")
        .map(|(_, value)| value)
        .unwrap_or_else(|| panic!("no csrf field in {html}"))
}

/// Redeems a magic link and returns the session cookie value and the redirect target.
fn redeem(server: &Server, link: &str) -> (String, String) {
    let response = get(server, link);
    assert_eq!(response.status(), 302);
    let target = location(&response);
    (session_cookie(&response).0, target)
}

/// A request sent byte for byte (reqwest would normalise `..` and `%2e%2e` away). Returns the status
/// and the headers (names lower-case).
fn raw_get(
    server: &Server,
    path: &str,
    credentials: Option<(&str, &str)>,
) -> (u16, Vec<(String, String)>) {
    let host = server.base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    let mut request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    if let Some((user, password)) = credentials {
        let encoded =
            base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        request.push_str(&format!("Authorization: Basic {encoded}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let answer = String::from_utf8_lossy(&answer);
    let head = &answer[..answer.find("\r\n\r\n").unwrap_or(answer.len())];
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap();
    let status = status_line[9..12].parse().unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    (status, headers)
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(k, _)| k == name).map(|(_, v)| &**v)
}

/// GET with Basic credentials of `klinik`.
fn get_as_klinik(server: &Server, path: &str, password: &str) -> Response {
    let request = server.client().get(server.url(path));
    request.basic_auth("klinik", Some(password)).send().unwrap()
}

#[test]
fn magic_link_logs_in_with_a_lax_http_only_cookie_and_can_be_reused() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    let issued = issue(&server, "klinik", "geb-ml-1");

    for round in 0..2 {
        let response = get(&server, &issued.link);
        assert_eq!(response.status(), 302, "round {round}");
        assert_eq!(location(&response), form_path(&issued.memento));
        let (value, attributes) = session_cookie(&response);
        assert!(value.len() >= 32, "session id {value}");
        assert_attributes(&attributes, &["httponly", "samesite=lax", "path=/"]);
        let secure = attributes.iter().any(|a| a == "secure");
        assert!(!secure, "Secure on http: {attributes:?}");
        // The session opens the pre-filled form.
        let form = get_with_cookie(&server, &location(&response), &value);
        assert_eq!(form.status(), 200, "round {round}");
        assert!(form.text().unwrap().contains("Muster"));
    }
    // The browser helper sees the same (a second, independent redemption).
    let form = Browser::new().open_magic_link(&server, &issued.link);
    assert_eq!(form.status, 200);
    assert_eq!(form.get("nameEinrichtung"), Some("Klinikum Süd"));
}

#[test]
fn https_base_url_marks_the_session_cookie_secure() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(
        &dir,
        &[("MELDEWERK_BASE_URL", "https://meldungen.example.org")],
    );
    let issued = issue(&server, "klinik", "geb-ml-https");
    let response = get(&server, &issued.link);
    assert_redirect(&response, &form_path(&issued.memento));
    let (cookie, attributes) = session_cookie(&response);
    assert_attributes(
        &attributes,
        &["secure", "httponly", "samesite=lax", "path=/"],
    );
    // `/bal/` sessions and the removal cookie of `/logout` are HTTPS-only as well.
    let response = get_as_klinik(&server, "/bal/", PASSWORD);
    assert_eq!(response.status(), 302);
    assert!(session_cookie(&response).1.iter().any(|a| a == "secure"));
    let token = logout_token(&server, &cookie);
    let response = post_logout(&server, &cookie, &[("csrf", &token)]);
    assert_eq!(response.status(), 200);
    assert!(session_cookie(&response).1.iter().any(|a| a == "secure"));
}

#[test]
fn broken_tokens_end_at_login_error_without_a_cookie() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    let issued = issue(&server, "klinik", "geb-ml-broken");
    let token = &issued.token;
    let m = format!("?m={}", issued.memento);

    let mut broken: Vec<(String, String)> = Vec::new();
    let len = token.len();
    let ends = [len / 3, len / 2, len - 20, len - 2, len - 1];
    for position in [0, 1, 5, 14, 20].into_iter().chain(ends) {
        let mut chars: Vec<char> = token.chars().collect();
        chars[position] = if chars[position] == 'A' { 'B' } else { 'A' };
        let changed = chars.into_iter().collect();
        broken.push((format!("changed at {position}"), changed));
    }
    broken.push(("truncated by one".into(), token[..len - 1].to_string()));
    broken.push(("truncated by half".into(), token[..len / 2].to_string()));
    broken.push(("first 20 characters".into(), token[..20].to_string()));
    broken.push(("garbage".into(), "not-a-token".into()));
    broken.push(("garbage, long".into(), "A".repeat(200)));
    broken.push(("memento as token".into(), issued.memento.clone()));
    broken.push(("token twice".into(), format!("{token}{token}")));
    for (what, bad) in &broken {
        for query in [m.as_str(), ""] {
            let response = get(&server, &format!("/mtl/{bad}{query}"));
            assert_login_error(&response, what);
        }
    }
    // The untouched token still works, so the refusals above were about the changes.
    let response = get(&server, &issued.link);
    assert_redirect(&response, &form_path(&issued.memento));
}

#[test]
fn expired_token_is_refused() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[("MELDEWERK_TOKEN_LIFETIME_SECS", "3")]);
    let issued = issue(&server, "klinik", "geb-ml-expired");
    // The token works while it is valid, so the refusal below is about its age.
    let response = get(&server, &issued.link);
    assert_redirect(&response, &form_path(&issued.memento));
    std::thread::sleep(std::time::Duration::from_millis(4000));
    let response = get(&server, &issued.link);
    assert_login_error(&response, "expired token");
}

#[test]
fn removed_user_cannot_redeem_links() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    dir.add_user("andere");
    let mut server = Server::start(&dir, &[]);
    let issued = issue(&server, "klinik", "geb-ml-removed");
    let kept = issue(&server, "andere", "geb-ml-kept");
    server.terminate();
    let (ok, out, err) = dir.cli(&["user", "remove", "klinik"], None);
    assert!(ok, "user remove: {out} {err}");
    server.start_again();

    let response = get(&server, &issued.link);
    assert_login_error(&response, "removed user");
    // Another user's link is unaffected.
    let (_, target) = redeem(&server, &kept.link);
    assert_eq!(target, form_path(&kept.memento));
}

#[test]
fn password_change_revokes_links_mementos_and_sessions() {
    const NEW_PASSWORD: &str = "a brand new passphrase 42";
    let dir = DataDir::new();
    dir.add_user("klinik");
    let mut server = Server::start(&dir, &[]);
    let old = issue(&server, "klinik", "geb-ml-pw");
    let (cookie, target) = redeem(&server, &old.link);
    assert_eq!(get_with_cookie(&server, &target, &cookie).status(), 200);

    server.terminate();
    let (ok, out, err) = dir.cli(
        &["user", "passwd", "klinik", "--password-stdin"],
        Some(NEW_PASSWORD),
    );
    assert!(ok, "user passwd: {out} {err}");
    server.start_again();

    // The old link and the open session no longer work.
    let response = get(&server, &old.link);
    assert_login_error(&response, "link from before the password change");
    let response = get_with_cookie(&server, &target, &cookie);
    assert_redirect(&response, "/login?error");
    // The old password is refused; the new one issues a working link.
    let refused = server.memento("klinik", &complete_notice("geb-ml-pw2"));
    assert_eq!(refused.status(), 401);
    let response = server
        .client()
        .post(server.url("/api/birthnotice/v1/memento"))
        .basic_auth("klinik", Some(NEW_PASSWORD))
        .json(&complete_notice("geb-ml-pw2"))
        .send()
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().unwrap();
    let new_memento = body["memento"].as_str().unwrap();
    let new_link = body["magicLink"].as_str().unwrap();
    let (cookie, target) = redeem(&server, new_link);
    assert_eq!(target, form_path(new_memento));
    assert_eq!(get_with_cookie(&server, &target, &cookie).status(), 200);
    // An old memento does not open under the new key.
    let response = get_with_cookie(&server, &form_path(&old.memento), &cookie);
    assert_eq!(response.status(), 400);
    assert!(!server.log().contains(NEW_PASSWORD));
}

#[test]
fn tampered_or_foreign_mementos_show_the_invalid_link_page() {
    let dir = DataDir::new();
    dir.add_user("klinik-a");
    dir.add_user("klinik-b");
    let server = Server::start(&dir, &[]);
    let a = issue(&server, "klinik-a", "geb-ml-a");
    let b = issue(&server, "klinik-b", "geb-ml-b");

    // A valid token with a changed memento: the login works, the form refuses the data.
    let mut chars: Vec<char> = a.memento.chars().collect();
    let middle = chars.len() / 2;
    chars[middle] = if chars[middle] == 'A' { 'B' } else { 'A' };
    let tampered: String = chars.into_iter().collect();
    let response = get(&server, &format!("/mtl/{}?m={tampered}", a.token));
    assert_eq!(response.status(), 302);
    let target = location(&response);
    assert_eq!(target, form_path(&tampered));
    let (cookie, _) = session_cookie(&response);
    let page = get_with_cookie(&server, &target, &cookie);
    assert_eq!(page.status(), 400);
    assert!(page.text().unwrap().contains("Link ungültig"));
    // The same session with the genuine memento works.
    let page = get_with_cookie(&server, &form_path(&a.memento), &cookie);
    assert_eq!(page.status(), 200);

    // A's memento in B's session.
    let (cookie_b, _) = redeem(&server, &b.link);
    let page = get_with_cookie(&server, &form_path(&a.memento), &cookie_b);
    assert_eq!(page.status(), 400);
    let html = page.text().unwrap();
    assert!(html.contains("Link ungültig"), "{html}");
    assert!(!html.contains("Muster"), "A's data leaked into B's session");
    // B's token with A's memento in the query: the login is B's, the form refuses A's data.
    let response = get(&server, &format!("/mtl/{}?m={}", b.token, a.memento));
    assert_eq!(response.status(), 302);
    let (cookie_b2, _) = session_cookie(&response);
    let page = get_with_cookie(&server, &location(&response), &cookie_b2);
    assert_eq!(page.status(), 400);
}

#[test]
fn form_without_session_goes_to_login_error() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    let issued = issue(&server, "klinik", "geb-ml-nosession");
    let path = form_path(&issued.memento);
    let response = Browser::new().get(&server.url(&path));
    assert_redirect(&response, "/login?error");
    // A made-up cookie is no session either.
    let response = get_with_cookie(&server, &path, "made-up-session-id-0123456789abcdef");
    assert_redirect(&response, "/login?error");
}

#[test]
fn login_page_explains_only_after_an_error() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    let with_error = get(&server, "/login?error");
    assert_eq!(with_error.status(), 200);
    let content_type = with_error.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(content_type.starts_with("text/html"), "{content_type}");
    let html = with_error.text().unwrap();
    assert!(html.contains("ungültig"), "{html}");
    let plain = get(&server, "/login");
    assert_eq!(plain.status(), 200);
    let html = plain.text().unwrap();
    assert!(!html.contains("ungültig"), "{html}");
}

#[test]
fn logout_ends_the_session_and_removes_the_cookie() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    let issued = issue(&server, "klinik", "geb-ml-logout");
    let (cookie, target) = redeem(&server, &issued.link);
    assert_eq!(get_with_cookie(&server, &target, &cookie).status(), 200);

    // A GET (a link, an image on another site) ends nothing: it shows the button.
    let token = logout_token(&server, &cookie);
    assert_eq!(get_with_cookie(&server, &target, &cookie).status(), 200);
    // A post without the session's token is refused and ends nothing either.
    for body in [vec![], vec![("csrf", "wrong")], vec![("csrf", "")]] {
        let response = post_logout(&server, &cookie, &body);
        assert_eq!(response.status(), 403, "{body:?}");
        assert!(set_cookies(&response).is_empty(), "{body:?}");
        assert_eq!(get_with_cookie(&server, &target, &cookie).status(), 200);
    }

    let response = post_logout(&server, &cookie, &[("csrf", &token)]);
    assert_eq!(response.status(), 200);
    let (value, attributes) = session_cookie(&response);
    assert!(value.is_empty(), "removal cookie carries {value}");
    assert_attributes(&attributes, &["max-age=0"]);
    // The server forgot the session: the old cookie value no longer opens the form.
    let response = get_with_cookie(&server, &target, &cookie);
    assert_redirect(&response, "/login?error");
    // Without a session the page has no button, and other methods are not allowed.
    let page = get(&server, "/logout");
    assert_eq!(page.status(), 200);
    assert!(!page.text().unwrap().contains("name=\"csrf\""));
    let put = server.client().put(server.url("/logout")).send().unwrap();
    assert_eq!(put.status(), 405);
}

#[test]
fn bal_login_keeps_the_query_and_opens_forms() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    let issued = issue(&server, "klinik", "geb-bal-1");
    let bal = |path: &str, password: &str| get_as_klinik(&server, path, password);

    let response = bal(
        &format!("/bal/forms/birthnotice?m={}", issued.memento),
        PASSWORD,
    );
    assert_eq!(response.status(), 302);
    let target = location(&response);
    assert_eq!(target, form_path(&issued.memento));
    let (cookie, attributes) = session_cookie(&response);
    assert!(attributes.iter().any(|a| a == "httponly"), "{attributes:?}");
    let form = get_with_cookie(&server, &target, &cookie);
    assert_eq!(form.status(), 200);
    assert!(form.text().unwrap().contains("Klinikum Süd"));

    let response = bal("/bal/some/page?a=1&b=x%20y", PASSWORD);
    assert_redirect(&response, "/some/page?a=1&b=x%20y");
    for root in ["/bal", "/bal/"] {
        let response = bal(root, PASSWORD);
        assert_eq!(response.status(), 302, "{root}");
        assert_eq!(location(&response), "/", "{root}");
        session_cookie(&response);
    }

    // Credentials in the URL (`user:password@host`) work like the header.
    let with_userinfo =
        server
            .base
            .replacen("http://", "http://klinik:correct%20horse%20battery@", 1);
    let response = server
        .client()
        .get(format!("{with_userinfo}/bal/forms/birthnotice?m=X"))
        .send()
        .unwrap();
    assert_redirect(&response, "/forms/birthnotice?m=X");
    session_cookie(&response);

    // Wrong password: login error, no cookie.
    let response = bal("/bal/forms/birthnotice", "wrong password");
    assert_login_error(&response, "wrong /bal password");
    // No credentials: a Basic challenge.
    let response = get(&server, "/bal/forms/birthnotice");
    assert_eq!(response.status(), 401);
    let challenge = response.headers()["www-authenticate"].to_str().unwrap();
    assert!(challenge.starts_with("Basic"), "{challenge}");
    assert!(set_cookies(&response).is_empty());
}

#[test]
fn bal_refuses_unsafe_targets() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    let refused = [
        "/bal//evil.example",
        "/bal//evil.example/forms",
        "/bal/a/../b",
        "/bal/..",
        "/bal/bal/x",
        "/bal/mtl/x",
        "/bal/%2e%2e/x",
        "/bal/%2E%2E/x",
        "/bal/%5cevil",
        "/bal/%5c%5cevil.example",
        "/bal/%2fevil.example",
        "/bal/%2F%2Fevil.example",
    ];
    for path in refused {
        let (status, headers) = raw_get(&server, path, Some(("klinik", PASSWORD)));
        assert_eq!(status, 302, "{path}");
        assert_eq!(header(&headers, "location"), Some("/login?error"), "{path}");
        let cookie = header(&headers, "set-cookie");
        assert!(cookie.is_none(), "{path}: {headers:?}");
    }
    // The same raw request with a safe target logs in, so the refusals were about the targets.
    let (status, headers) = raw_get(
        &server,
        "/bal/forms/birthnotice?m=X",
        Some(("klinik", PASSWORD)),
    );
    assert_eq!(status, 302);
    assert_eq!(header(&headers, "location"), Some("/forms/birthnotice?m=X"));
    assert!(header(&headers, "set-cookie").is_some_and(|c| c.starts_with("meldewerk_session=")));
}

#[test]
fn no_redirect_leaves_the_site() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    let issued = issue(&server, "klinik", "geb-ml-open");
    let paths = [
        format!("/mtl/{}?m=//evil.example", issued.token),
        format!("/mtl/{}?m=https://evil.example", issued.token),
        format!("/mtl/{}?m=%2F%2Fevil.example", issued.token),
        "/mtl/%2F%2Fevil.example".to_string(),
        "/mtl/https:%2F%2Fevil.example".to_string(),
        "/bal?//evil.example".to_string(),
        "/bal//evil.example".to_string(),
        "/bal/%2F%2Fevil.example".to_string(),
        "/bal///evil.example".to_string(),
        "/bal/%09/evil.example".to_string(),
        "/bal/http://evil.example".to_string(),
        "/bal/https:%2F%2Fevil.example".to_string(),
    ];
    for path in &paths {
        for credentials in [Some(("klinik", PASSWORD)), Some(("klinik", "nope")), None] {
            let (status, headers) = raw_get(&server, path, credentials);
            // Only `/bal/` without credentials may answer without a redirect: with the Basic
            // challenge. Everything else is a redirect, and it stays on this site.
            if credentials.is_none() && path.starts_with("/bal") {
                assert_eq!(status, 401, "{path} without credentials");
                continue;
            }
            assert_eq!(status, 302, "{path} with {credentials:?}");
            let location = header(&headers, "location")
                .unwrap_or_else(|| panic!("{path}: redirect without Location"));
            assert_local(location);
        }
    }
}

#[test]
fn log_never_shows_tokens_mementos_or_passwords() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[("MELDEWERK_LOG__LEVEL", "debug")]);
    let issued = issue(&server, "klinik", "geb-ml-log");
    let (cookie, target) = redeem(&server, &issued.link);
    assert_eq!(get_with_cookie(&server, &target, &cookie).status(), 200);
    let broken = format!("/mtl/{}x?m={}", issued.token, issued.memento);
    assert_login_error(&get(&server, &broken), "broken");
    let bal = format!("/bal/forms/birthnotice?m={}", issued.memento);
    for password in [PASSWORD, "wrong password"] {
        get_as_klinik(&server, &bal, password);
    }
    server.get_as("klinik", "/api/birthnotice/v1/reports");

    let log = server.log();
    assert!(log.contains("magic link redeemed"), "no log?\n{log}");
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("klinik:{PASSWORD}"));
    for (what, secret) in [
        ("token", issued.token.as_str()),
        ("memento", issued.memento.as_str()),
        ("password", PASSWORD),
        ("Basic credentials", basic.as_str()),
        ("session cookie", cookie.as_str()),
    ] {
        assert!(!log.contains(secret), "the log shows the {what}");
    }
}
