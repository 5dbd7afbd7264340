//! `GET /bal/{target}`: the alternative session login of existing integrations. Credentials come
//! as HTTP Basic (browsers turn `user:password@host` URLs into that header after a challenge).

use actix_web::http::header::{self, HeaderValue};
use actix_web::{get, web, HttpRequest, HttpResponse, ResponseError};

use crate::auth::basic::basic_credentials;
use crate::auth::session::{redirect_to_login_error, refused, NoSession};
use crate::auth::{client_address, AuthFailure, CredentialVerifier, Sessions};
use crate::tokens::is_safe_target;

/// Without credentials: 401 with a Basic challenge (so that browsers send the credentials from
/// the URL). With wrong credentials, a refused target, or a blocked login: 302 `/login?error`.
/// Otherwise a session and 302 to `/{target}?{query}` (`/bal` alone leads to `/`).
#[utoipa::path(
    tag = "service",
    path = "/bal/{target}",
    params(("target" = String, Path, description = "Where to land (any path, with its query).")),
    security(("apiUser" = [])),
    responses(
        (status = 302, description = "A session and to `/{target}`; wrong credentials or an unsafe target to `/login?error`.",
            headers(("Location" = String))),
        (status = 401, description = "No credentials: a Basic challenge (browsers then send those of the URL).",
            headers(("WWW-Authenticate" = String))),
    ),
)]
#[get("/bal{tail:(/.*)?}")]
#[tracing::instrument(name = "bal_login", skip_all)]
pub async fn bal_login(
    req: HttpRequest,
    verifier: web::Data<CredentialVerifier>,
    sessions: web::Data<Sessions>,
) -> HttpResponse {
    // The raw (still percent-encoded) path, so that the redirect keeps exactly what was asked for.
    let raw_tail = req.uri().path().strip_prefix("/bal").unwrap_or("");
    let mut target = if raw_tail.is_empty() {
        "/".to_string()
    } else {
        raw_tail.to_string()
    };
    if let Some(query) = req.uri().query().filter(|q| !q.is_empty()) {
        target = format!("{target}?{query}");
    }
    let Some((user, password)) = basic_credentials(&req) else {
        return HttpResponse::Unauthorized()
            .insert_header((
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"meldewerk\", charset=\"UTF-8\""),
            ))
            .finish();
    };
    if !is_safe_target(&target) {
        return redirect_to_login_error();
    }
    let address = client_address(&req);
    match verifier.verify(&user, &password, address).await {
        Ok(record) => {
            let cookie = match sessions
                .create(&record.name, &record.memento_key.key_id)
                .await
            {
                Ok(cookie) => cookie,
                Err(e) => return refused(e, "a new session").error_response(),
            };
            let mut response = super::found(&target);
            response.add_cookie(&cookie).expect("a valid cookie");
            response
        }
        Err(AuthFailure::Unavailable(reason)) => {
            tracing::warn!(%reason, "bal login: the store is unavailable");
            NoSession::Unavailable.error_response()
        }
        Err(AuthFailure::Internal(reason)) => {
            tracing::error!(%reason, "bal login failed internally");
            redirect_to_login_error()
        }
        Err(_) => redirect_to_login_error(),
    }
}
