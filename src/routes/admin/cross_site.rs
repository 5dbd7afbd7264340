//! The operator API changes state only for requests that no other site can have made the
//! operator's browser send.
//!
//! Operators authenticate with HTTP Basic, and a browser that has the credentials cached sends
//! them with every request to the service, also one that a page of another site starts (a form
//! posted to `/admin/api/v1/jobs/7/discard`). So every request that may change state (any method
//! but `GET`, `HEAD` and `OPTIONS`) passes [`verdict`] before it is authenticated:
//!
//! - `Sec-Fetch-Site`, when present, must be `same-origin` or `none` (typed or bookmarked by the
//!   operator);
//! - `Origin`, when present, must be the service's own: the origin of `base_url`, or the scheme
//!   and host the request was sent to;
//! - without either header (curl, scripts, or a browser too old to send them), the body must not
//!   be declared as one of the three types an HTML form can send
//!   (`application/x-www-form-urlencoded`, `multipart/form-data`, `text/plain`): the operator API
//!   takes JSON or no body, which a form cannot send.
//!
//! A refused request gets 403 in the operator API's error shape, and nothing of it is looked at
//! further (its credentials are not checked, so it counts as no failed login either).
//!
//! The dashboard's own forms (`POST /admin/…`, outside the API) pass the same guard with one
//! difference: a form body without provenance headers is admitted ([`Provenance::FormsWithToken`]),
//! since each such form carries a CSRF token that its handler checks; what the browser says
//! about another site is refused all the same, as an HTML page ([`refuse_cross_site_forms`]).

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderMap};
use actix_web::http::{Method, StatusCode};
use actix_web::middleware::Next;
use actix_web::{web, Error, HttpResponse};

use super::error;
use crate::telemetry::log_str;
use crate::web::WebSettings;

/// The fetch-metadata header of browsers (Chrome 76, Firefox 90, Safari 16.4 and later).
const SEC_FETCH_SITE: &str = "sec-fetch-site";

/// The body types of HTML forms, which a page of any site may post anywhere (the Fetch
/// standard's CORS-safelisted `Content-Type` values).
const FORM_TYPES: [&str; 3] = [
    "application/x-www-form-urlencoded",
    "multipart/form-data",
    "text/plain",
];

/// Why a request was refused.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The browser says another site started it.
    CrossSite,
    /// Without provenance headers, a body only a form would send.
    FormPost,
}

impl Refusal {
    fn message(&self) -> &'static str {
        match self {
            Refusal::CrossSite => "cross-site requests to the operator API are refused",
            Refusal::FormPost => {
                "the operator API takes no form posts: send no body, or JSON with \
                 Content-Type: application/json"
            }
        }
    }
}

/// What a route takes besides requests of the service's own origin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Provenance {
    /// The JSON API: no form bodies without provenance headers.
    JsonOnly,
    /// The dashboard's forms: form bodies are admitted, their handlers check a CSRF token.
    FormsWithToken,
}

/// Whether a request may go on to the operator API, from its method and headers; `own` are the
/// origins that count as the service itself.
pub(crate) fn verdict(
    method: &Method,
    headers: &HeaderMap,
    own: &[&str],
    takes: Provenance,
) -> Result<(), Refusal> {
    if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
        return Ok(());
    }
    let site = headers.get(SEC_FETCH_SITE);
    if let Some(site) = site {
        if !matches!(site.as_bytes(), b"same-origin" | b"none") {
            return Err(Refusal::CrossSite);
        }
    }
    let origin = headers.get(header::ORIGIN);
    if let Some(origin) = origin {
        let origin = origin.to_str().unwrap_or("");
        if !own.iter().any(|o| o.eq_ignore_ascii_case(origin)) {
            return Err(Refusal::CrossSite);
        }
    }
    if takes == Provenance::JsonOnly
        && site.is_none()
        && origin.is_none()
        && declared_as_form(headers)
    {
        return Err(Refusal::FormPost);
    }
    Ok(())
}

fn declared_as_form(headers: &HeaderMap) -> bool {
    headers.get_all(header::CONTENT_TYPE).any(|value| {
        let essence = value.to_str().unwrap_or("").split(';').next().unwrap_or("");
        FORM_TYPES
            .iter()
            .any(|form| essence.trim().eq_ignore_ascii_case(form))
    })
}

/// `scheme://host[:port]` of a URL (a path is dropped).
fn origin_of(url: &str) -> &str {
    match url.find("://") {
        Some(at) => {
            let rest = &url[at + 3..];
            let end = rest.find('/').map_or(url.len(), |slash| at + 3 + slash);
            &url[..end]
        }
        None => url,
    }
}

/// Refuses state-changing requests of another site with 403 `{"errors": [...]}` (see the
/// module's documentation); everything else goes on.
pub(crate) async fn refuse_cross_site<B: MessageBody + 'static>(
    settings: web::Data<WebSettings>,
    req: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    guard(&settings, req, next, Provenance::JsonOnly, |refusal| {
        error(StatusCode::FORBIDDEN, refusal.message().into())
    })
    .await
}

/// Answers a refused request with `answer`, lets the others go on to `next`.
pub(crate) async fn guard<B: MessageBody + 'static>(
    settings: &WebSettings,
    req: ServiceRequest,
    next: Next<B>,
    takes: Provenance,
    answer: impl FnOnce(&Refusal) -> HttpResponse,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let reached = {
        let info = req.connection_info();
        format!("{}://{}", info.scheme(), info.host())
    };
    let own = [origin_of(&settings.base_url), reached.as_str()];
    if let Err(refusal) = verdict(req.method(), req.headers(), &own, takes) {
        let header_text = |name: &str| {
            req.headers()
                .get(name)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                .unwrap_or_default()
        };
        let (origin, site) = (
            header_text(header::ORIGIN.as_str()),
            header_text(SEC_FETCH_SITE),
        );
        tracing::warn!(
            reason = ?refusal,
            origin = %log_str(&origin),
            sec_fetch_site = %log_str(&site),
            "operator request refused as cross-site"
        );
        let answer = answer(&refusal);
        return Ok(req.into_response(answer));
    }
    Ok(next.call(req).await?.map_into_boxed_body())
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::header::{HeaderName, HeaderValue};

    const OWN: [&str; 2] = ["https://meldungen.example.org", "http://127.0.0.1:8080"];

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                HeaderName::from_static(name),
                HeaderValue::from_static(value),
            );
        }
        map
    }

    fn check(pairs: &[(&'static str, &'static str)]) -> Result<(), Refusal> {
        verdict(&Method::POST, &headers(pairs), &OWN, Provenance::JsonOnly)
    }

    /// The verdict on a `method` request with just the header `name: value`.
    fn with_header(method: Method, name: HeaderName, value: &str) -> Result<(), Refusal> {
        let mut map = HeaderMap::new();
        map.insert(name, HeaderValue::from_str(value).unwrap());
        verdict(&method, &map, &OWN, Provenance::JsonOnly)
    }

    #[test]
    fn reads_are_never_refused() {
        let cross = headers(&[("sec-fetch-site", "cross-site")]);
        assert_eq!(
            verdict(&Method::GET, &cross, &OWN, Provenance::JsonOnly),
            Ok(())
        );
        assert_eq!(
            verdict(&Method::HEAD, &cross, &OWN, Provenance::JsonOnly),
            Ok(())
        );
    }

    #[test]
    fn fetch_metadata_admits_only_the_own_origin_and_the_operator_themselves() {
        assert_eq!(check(&[("sec-fetch-site", "same-origin")]), Ok(()));
        assert_eq!(check(&[("sec-fetch-site", "none")]), Ok(()));
        for site in ["cross-site", "same-site", "anything"] {
            let name = HeaderName::from_static(SEC_FETCH_SITE);
            assert_eq!(
                with_header(Method::POST, name, site),
                Err(Refusal::CrossSite),
                "{site}"
            );
        }
    }

    #[test]
    fn an_origin_must_be_the_services_own() {
        assert_eq!(
            check(&[("origin", "https://meldungen.example.org")]),
            Ok(())
        );
        assert_eq!(check(&[("origin", "HTTP://127.0.0.1:8080")]), Ok(()));
        for origin in [
            "https://evil.example",
            "null",
            "https://meldungen.example.org.evil.example",
            "http://127.0.0.1:8081",
        ] {
            assert_eq!(
                with_header(Method::DELETE, header::ORIGIN, origin),
                Err(Refusal::CrossSite),
                "{origin}"
            );
        }
        // A same-origin fetch-metadata header does not excuse a foreign Origin.
        assert_eq!(
            check(&[
                ("sec-fetch-site", "same-origin"),
                ("origin", "https://evil.example")
            ]),
            Err(Refusal::CrossSite)
        );
    }

    #[test]
    fn without_provenance_headers_form_bodies_are_refused() {
        assert_eq!(check(&[]), Ok(()));
        assert_eq!(check(&[("content-type", "application/json")]), Ok(()));
        for form in [
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "text/plain;charset=UTF-8",
            "Text/Plain",
        ] {
            assert_eq!(
                with_header(Method::PUT, header::CONTENT_TYPE, form),
                Err(Refusal::FormPost),
                "{form}"
            );
        }
        // From its own origin, a form body is one of the service's own pages.
        assert_eq!(
            check(&[
                ("origin", "http://127.0.0.1:8080"),
                ("content-type", "text/plain")
            ]),
            Ok(())
        );
    }

    #[test]
    fn dashboard_forms_may_come_without_provenance_but_never_from_another_site() {
        let form = headers(&[("content-type", "application/x-www-form-urlencoded")]);
        let forms = Provenance::FormsWithToken;
        assert_eq!(verdict(&Method::POST, &form, &OWN, forms), Ok(()));
        let cross = headers(&[
            ("content-type", "application/x-www-form-urlencoded"),
            ("sec-fetch-site", "cross-site"),
        ]);
        assert_eq!(
            verdict(&Method::POST, &cross, &OWN, forms),
            Err(Refusal::CrossSite)
        );
        let foreign = headers(&[("origin", "https://evil.example")]);
        assert_eq!(
            verdict(&Method::POST, &foreign, &OWN, forms),
            Err(Refusal::CrossSite)
        );
    }

    #[test]
    fn the_origin_of_a_url_drops_its_path() {
        assert_eq!(
            origin_of("https://meldungen.example.org/meldewerk/"),
            "https://meldungen.example.org"
        );
        assert_eq!(origin_of("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
    }
}
