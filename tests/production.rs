//! Running in production: behind a reverse proxy the failed-login limits count the client the
//! trusted proxy names (and never believe a header from anyone else), and without a proxy the
//! service serves HTTPS itself, taking a renewed certificate on SIGHUP or when its files change.

mod common;

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use common::{loopback_client, wait_until, DataDir, Server, OPERATOR, PASSWORD};
use reqwest::blocking::{Client, Response};

const REPORTS: &str = "/api/birthnotice/v1/reports";

/// Failed logins a minute per client address in these tests: small, so that a few failures
/// under different user names (far from the per-name limit) block an address.
const PER_ADDRESS: usize = 3;

/// A client whose connections come from `local` (any of 127.0.0.0/8 reaches the server).
fn client_from(local: &str) -> Client {
    loopback_client()
        .local_address(local.parse::<IpAddr>().unwrap())
        .build()
        .unwrap()
}

/// `GET /api/birthnotice/v1/reports` as `user` with `password`, sent from `client` with the
/// forwarding `headers`.
fn reports(
    server: &Server,
    client: &Client,
    headers: &[(&str, &str)],
    user: &str,
    password: &str,
) -> Response {
    let mut request = client
        .get(server.url(REPORTS))
        .basic_auth(user, Some(password));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().unwrap()
}

/// Forwarded addresses, a new one for each failure of [`use_up_allowance`].
const CHANGING: [&str; PER_ADDRESS] = ["203.0.113.1", "203.0.113.2", "203.0.113.3"];

/// Uses up the per-address allowance ([`PER_ADDRESS`]) with failed logins, each under a new user
/// name, from `client` with the forwarding `headers` of each attempt.
fn use_up_allowance(
    server: &Server,
    client: &Client,
    headers: impl Fn(usize) -> Vec<(&'static str, &'static str)>,
) {
    for i in 0..PER_ADDRESS {
        let headers = headers(i);
        let response = reports(server, client, &headers, &format!("guess-{i}"), "wrong");
        assert_eq!(response.status(), 401, "failure {i} with {headers:?}");
    }
}

/// A 429 with `Retry-After` and the API's `errors` body.
fn assert_limited(response: Response, what: &str) {
    assert_eq!(response.status(), 429, "{what}");
    assert!(response.headers().contains_key("retry-after"), "{what}");
    let body: serde_json::Value = response.json().unwrap();
    assert!(
        body["errors"][0]
            .as_str()
            .unwrap()
            .starts_with("too many failed logins; try again in "),
        "{what}: {body}"
    );
}

/// A server with the user `klinik`, the small per-address limit, 127.0.0.1 as its trusted proxy,
/// and `extra` settings.
fn proxy_server(dir: &DataDir, extra: &[(&str, &str)]) -> Server {
    dir.add_user("klinik");
    let limit = PER_ADDRESS.to_string();
    let mut env = vec![
        ("MELDEWERK_SERVER__TRUSTED_PROXIES", "127.0.0.1"),
        (
            "MELDEWERK_SECURITY__FAILED_LOGINS_PER_ADDRESS_PER_MINUTE",
            &limit,
        ),
    ];
    env.extend_from_slice(extra);
    Server::start(dir, &env)
}

#[test]
fn behind_a_trusted_proxy_failed_logins_count_against_the_forwarded_client() {
    let dir = DataDir::new();
    let server = proxy_server(&dir, &[]);
    let proxy = client_from("127.0.0.1");
    // The client wrote its own X-Forwarded-For entry; the proxy appended the real address.
    use_up_allowance(&server, &proxy, |_| {
        vec![("x-forwarded-for", "198.51.100.1, 203.0.113.7")]
    });
    let from = |address: &'static str| [("x-forwarded-for", address)];
    assert_limited(
        reports(&server, &proxy, &from("203.0.113.7"), "klinik", PASSWORD),
        "the client, right password",
    );
    // Naming someone else first does not help: the proxy appends the real address.
    assert_limited(
        reports(
            &server,
            &proxy,
            &from("203.0.113.8, 203.0.113.7"),
            "klinik",
            PASSWORD,
        ),
        "the client pretending to be forwarded",
    );
    // Other clients behind the same proxy, the one named first above among them, and the
    // proxy's own requests are not blocked.
    for headers in [&from("203.0.113.8")[..], &from("198.51.100.1")[..], &[]] {
        let response = reports(&server, &proxy, headers, "klinik", PASSWORD);
        assert_eq!(response.status(), 200, "{headers:?}");
    }
}

#[test]
fn behind_a_trusted_proxy_operator_and_bal_logins_count_the_forwarded_client() {
    let dir = DataDir::new();
    let server = proxy_server(&dir, &[]);
    let proxy = client_from("127.0.0.1");
    let operator = |client_address: &str, password: &str| {
        proxy
            .get(server.url("/admin/api/v1/actors"))
            .basic_auth(OPERATOR.0, Some(password))
            .header("x-forwarded-for", client_address)
            .send()
            .unwrap()
            .status()
    };
    for _ in 0..PER_ADDRESS {
        assert_eq!(operator("203.0.113.20", "wrong"), 401);
    }
    assert_eq!(operator("203.0.113.20", OPERATOR.1), 429);
    assert_eq!(operator("203.0.113.21", OPERATOR.1), 200);

    // `/bal/` answers every refused login with the same redirect; a blocked client is refused
    // even with the right password, while another client behind the proxy gets its session.
    let bal = |client_address: &str, user: &str, password: &str| {
        let response = proxy
            .get(server.url("/bal/forms/birthnotice"))
            .basic_auth(user, Some(password))
            .header("x-forwarded-for", client_address)
            .send()
            .unwrap();
        assert_eq!(response.status(), 302);
        response.headers()["location"].to_str().unwrap().to_string()
    };
    for i in 0..PER_ADDRESS {
        let location = bal("203.0.113.30", &format!("guess-{i}"), "wrong");
        assert_eq!(location, "/login?error");
    }
    assert_eq!(bal("203.0.113.30", "klinik", PASSWORD), "/login?error");
    assert_eq!(
        bal("203.0.113.31", "klinik", PASSWORD),
        "/forms/birthnotice"
    );
}

#[test]
fn an_untrusted_peer_is_counted_whatever_it_forwards() {
    let dir = DataDir::new();
    let server = proxy_server(&dir, &[]);
    let stranger = client_from("127.0.0.2");
    // A new forwarded address with every failure: none of them is believed.
    use_up_allowance(&server, &stranger, |i| {
        vec![("x-forwarded-for", CHANGING[i])]
    });
    assert_limited(
        reports(
            &server,
            &stranger,
            &[("x-forwarded-for", "203.0.113.4")],
            "klinik",
            PASSWORD,
        ),
        "the untrusted peer under yet another forwarded address",
    );
    // The addresses it named were never counted, and other peers are not blocked.
    let proxy = client_from("127.0.0.1");
    let forwarded = [("x-forwarded-for", "203.0.113.1")];
    assert_eq!(
        reports(&server, &proxy, &forwarded, "klinik", PASSWORD).status(),
        200
    );
    let neighbour = client_from("127.0.0.3");
    assert_eq!(
        reports(&server, &neighbour, &forwarded, "klinik", PASSWORD).status(),
        200
    );
}

#[test]
fn without_trusted_proxies_forwarding_headers_are_ignored() {
    let dir = DataDir::new();
    let limit = PER_ADDRESS.to_string();
    dir.add_user("klinik");
    let server = Server::start(
        &dir,
        &[(
            "MELDEWERK_SECURITY__FAILED_LOGINS_PER_ADDRESS_PER_MINUTE",
            &limit,
        )],
    );
    let client = client_from("127.0.0.1");
    use_up_allowance(&server, &client, |i| {
        vec![
            ("x-forwarded-for", CHANGING[i]),
            ("forwarded", "for=192.0.2.1"),
        ]
    });
    assert_limited(
        reports(
            &server,
            &client,
            &[("x-forwarded-for", "203.0.113.9")],
            "klinik",
            PASSWORD,
        ),
        "the peer under a forwarded address",
    );
}

#[test]
fn a_proxy_writing_forwarded_is_read_by_its_for_parameter_only() {
    let dir = DataDir::new();
    let server = proxy_server(&dir, &[("MELDEWERK_SERVER__FORWARDED_HEADER", "forwarded")]);
    let proxy = client_from("127.0.0.1");
    use_up_allowance(&server, &proxy, |_| {
        vec![(
            "forwarded",
            "for=198.51.100.1, for=\"[2001:db8::7]:4711\";proto=https",
        )]
    });
    assert_limited(
        reports(
            &server,
            &proxy,
            &[("forwarded", "for=\"[2001:db8::7]\"")],
            "klinik",
            PASSWORD,
        ),
        "the client",
    );
    // Another client; and X-Forwarded-For, which this proxy does not write, is not read (the
    // request counts as the proxy's own).
    for headers in [
        [("forwarded", "for=\"[2001:db8::8]\"")],
        [("x-forwarded-for", "2001:db8::7")],
    ] {
        let response = reports(&server, &proxy, &headers, "klinik", PASSWORD);
        assert_eq!(response.status(), 200, "{headers:?}");
    }
}

/// A certificate for 127.0.0.1 with its own subject, so that clients trusting several of them
/// tell them apart: (certificate PEM, key PEM, certificate DER).
fn self_signed(name: &str) -> (String, String, Vec<u8>) {
    let mut params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, name);
    let key = rcgen::KeyPair::generate().unwrap();
    let certificate = params.self_signed(&key).unwrap();
    (
        certificate.pem(),
        key.serialize_pem(),
        certificate.der().to_vec(),
    )
}

/// Replaces `path` the way renewal tools do: a new file renamed over the old one.
fn replace(path: &Path, contents: &str) {
    let new = path.with_extension("new");
    std::fs::write(&new, contents).unwrap();
    std::fs::rename(&new, path).unwrap();
}

/// A new client (no pooled connection, no resumed session) trusting the certificates `roots`.
fn trusting(roots: &[&str]) -> Client {
    let mut builder = loopback_client().tls_info(true);
    for root in roots {
        builder =
            builder.add_root_certificate(reqwest::Certificate::from_pem(root.as_bytes()).unwrap());
    }
    builder.build().unwrap()
}

/// `/healthz` over a new connection trusting `roots`: the certificate the server presented, and
/// the answer.
fn served_certificate(server: &Server, roots: &[&str]) -> (Vec<u8>, Response) {
    let response = trusting(roots).get(server.url("/healthz")).send().unwrap();
    let info = response
        .extensions()
        .get::<reqwest::tls::TlsInfo>()
        .expect("TLS info");
    let certificate = info.peer_certificate().expect("a certificate").to_vec();
    (certificate, response)
}

/// The fields of the certificate events the server logged (JSON log) with `message`, oldest
/// first.
fn certificate_events(server: &Server, message: &str) -> Vec<serde_json::Value> {
    server
        .log()
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|event| event["fields"]["message"] == message)
        .map(|event| event["fields"].clone())
        .collect()
}

/// Waits until the server has logged `count` events with `message` that SIGHUP triggered;
/// returns them.
fn wait_for_sighup_events(server: &Server, message: &str, count: usize) -> Vec<serde_json::Value> {
    wait_until(&format!("{message:?} is logged {count} times"), || {
        let events: Vec<_> = certificate_events(server, message)
            .into_iter()
            .filter(|event| event["trigger"] == "SIGHUP")
            .collect();
        (events.len() >= count).then_some(events)
    })
}

#[test]
fn serves_https_itself_and_takes_a_renewed_certificate_on_sighup_or_file_change() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let tls_dir = tempfile::tempdir().unwrap();
    let (cert_file, key_file): (PathBuf, PathBuf) = (
        tls_dir.path().join("cert.pem"),
        tls_dir.path().join("key.pem"),
    );
    let first = self_signed("first");
    let second = self_signed("second");
    let third = self_signed("third");
    replace(&cert_file, &first.0);
    replace(&key_file, &first.1);
    let server = Server::start(
        &dir,
        &[
            (
                "MELDEWERK_SERVER__TLS__CERTIFICATE",
                cert_file.to_str().unwrap(),
            ),
            ("MELDEWERK_SERVER__TLS__KEY", key_file.to_str().unwrap()),
            ("MELDEWERK_LOG__FORMAT", "json"),
        ],
    );
    assert!(
        server.base.starts_with("https://127.0.0.1:"),
        "{}",
        server.base
    );
    let roots = [first.0.as_str(), second.0.as_str(), third.0.as_str()];

    // A TLS handshake with the configured certificate; with no base_url the service's address
    // is https, so every answer carries Strict-Transport-Security.
    let (served, response) = served_certificate(&server, &roots);
    assert_eq!(served, first.2);
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["strict-transport-security"],
        "max-age=31536000; includeSubDomains"
    );
    // The API over HTTPS, and a session cookie marked Secure.
    let client = trusting(&[&first.0]);
    let api = reports(&server, &client, &[], "klinik", PASSWORD);
    assert_eq!(api.status(), 200);
    let login = client
        .get(server.url("/bal/forms/birthnotice"))
        .basic_auth("klinik", Some(PASSWORD))
        .send()
        .unwrap();
    assert_eq!(login.status(), 302);
    let cookie = login.headers()["set-cookie"].to_str().unwrap();
    assert!(cookie.contains("; Secure"), "{cookie}");
    // HTTPS only: plain HTTP on the port gets no answer.
    let plain = server.base.replace("https://", "http://");
    assert!(loopback_client()
        .build()
        .unwrap()
        .get(format!("{plain}/healthz"))
        .send()
        .is_err());

    // SIGHUP: the renewed files are read at once, and the process lives on.
    replace(&key_file, &second.1);
    replace(&cert_file, &second.0);
    server.signal("HUP");
    wait_for_sighup_events(&server, "TLS certificate reloaded", 1);
    assert_eq!(served_certificate(&server, &roots).0, second.2);
    // Only the new certificate is served: a client trusting the first alone fails.
    let old_only = trusting(&[&first.0]);
    assert!(old_only.get(server.url("/healthz")).send().is_err());

    // A change of the files alone is noticed too.
    replace(&key_file, &third.1);
    replace(&cert_file, &third.0);
    wait_until("the renewed files are served", || {
        (served_certificate(&server, &roots).0 == third.2).then_some(())
    });

    // Files that cannot be used are reported and the current certificate stays: a broken PEM,
    // and a certificate whose key is not (yet) the one beside it.
    let failed = "TLS certificate reload failed; still serving the previous certificate";
    replace(
        &cert_file,
        "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n",
    );
    server.signal("HUP");
    let refusals = wait_for_sighup_events(&server, failed, 1);
    let error = refusals[0]["error"].as_str().unwrap();
    assert!(
        error.starts_with(&format!("server.tls.certificate {}: ", cert_file.display())),
        "{error}"
    );
    assert_eq!(served_certificate(&server, &roots).0, third.2);
    replace(&cert_file, &second.0);
    server.signal("HUP");
    let refusals = wait_for_sighup_events(&server, failed, 2);
    let error = refusals[1]["error"].as_str().unwrap();
    assert!(
        error.contains("does not fit server.tls.certificate"),
        "{error}"
    );
    assert_eq!(served_certificate(&server, &roots).0, third.2);
    let (_, response) = served_certificate(&server, &roots);
    assert_eq!(response.status(), 200);
}
