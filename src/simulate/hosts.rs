//! Which `Host` the simulator answers. It asks for no credentials, so a web page in a tester's
//! browser could otherwise reach it by DNS rebinding (a name of the page's own that turns into
//! `127.0.0.1`), read the delivered reports and rewrite the script. The browser sends the page's
//! name as `Host`; only loopback names, the bound address and the configured
//! `transports.<name>.allowed_hosts` are answered, everything else is 421.

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::{header, StatusCode};
use actix_web::middleware::Next;
use actix_web::{web, Error, HttpResponse};
use meldewerk_transports::wire::WireError;

use crate::telemetry::log_str;

/// The host names (without port, lowercase, IPv6 in brackets) the simulator answers.
pub(super) struct AllowedHosts(Vec<String>);

impl AllowedHosts {
    /// Loopback names, the address the simulator is bound to, and `configured`.
    pub(super) fn new(bound: std::net::IpAddr, configured: &[String]) -> Self {
        let bound = match bound {
            std::net::IpAddr::V4(ip) => ip.to_string(),
            std::net::IpAddr::V6(ip) => format!("[{ip}]"),
        };
        let loopback = ["localhost", "127.0.0.1", "[::1]"].map(str::to_owned);
        let names = loopback
            .into_iter()
            .chain([bound])
            .chain(configured.iter().map(|name| name.to_ascii_lowercase()))
            .collect();
        AllowedHosts(names)
    }

    /// Whether a request with this `Host` value is answered (the port is not looked at: a proxy
    /// in front may forward from another).
    fn allows(&self, host: &str) -> bool {
        let name = host_name(host).to_ascii_lowercase();
        self.0.contains(&name)
    }
}

/// The name part of a `Host` value: `[::1]:9001` → `[::1]`, `sim.example:80` → `sim.example`.
fn host_name(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map_or(host, |end| &host[..=end]);
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
}

/// Answers 421 `{"error": …}` (the protocol's error shape) to a request without a `Host` the
/// simulator answers; passes every other request on.
pub(super) async fn check_host<B: MessageBody>(
    allowed: web::Data<AllowedHosts>,
    req: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<EitherBody<B>>, Error> {
    let host = req
        .headers()
        .get(header::HOST)
        .map(|value| value.to_str().unwrap_or("(not text)"));
    if host.is_some_and(|host| allowed.allows(host)) {
        return Ok(next.call(req).await?.map_into_left_body());
    }
    let host = host.unwrap_or("(none)").to_owned();
    tracing::warn!(host = %log_str(&host), "request for another host refused");
    let answer = HttpResponse::build(StatusCode::MISDIRECTED_REQUEST).json(WireError {
        error: format!(
            "this simulator does not answer for host {}; add the name to allowed_hosts",
            log_str(&host)
        ),
    });
    Ok(req.into_response(answer).map_into_right_body())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_port_is_cut_from_names_and_addresses() {
        assert_eq!(host_name("127.0.0.1:9001"), "127.0.0.1");
        assert_eq!(host_name("[::1]:9001"), "[::1]");
        assert_eq!(host_name("[::1]"), "[::1]");
        assert_eq!(host_name("Sim.Example"), "Sim.Example");
        assert_eq!(host_name("evil.example:x"), "evil.example:x");
    }

    #[test]
    fn loopback_bound_and_configured_names_are_answered() {
        let allowed = AllowedHosts::new("10.0.0.5".parse().unwrap(), &["Sim.Internal".to_owned()]);
        for host in [
            "localhost:9001",
            "LOCALHOST",
            "127.0.0.1:1",
            "[::1]:9001",
            "10.0.0.5:9001",
            "sim.internal",
        ] {
            assert!(allowed.allows(host), "{host}");
        }
        for host in [
            "evil.example:9001",
            "127.0.0.1.evil.example",
            "",
            "10.0.0.6",
        ] {
            assert!(!allowed.allows(host), "{host}");
        }
    }
}
