//! `GET /mtl/{token}`: the one-click login of a magic link.

use std::sync::Arc;

use actix_web::{get, web, HttpRequest, HttpResponse, ResponseError};
use chrono::Utc;
use meldewerk_storage::{Store, StoreError};

use crate::auth::session::{redirect_to_login_error, refused};
use crate::auth::Sessions;
use crate::crypto::{envelope_key_id, MasterKey, UserKey};
use crate::telemetry::log_str;
use crate::tokens::{is_safe_target, MagicToken};

/// Query of a magic link: the memento to hand on to the form.
#[derive(serde::Deserialize)]
pub struct MagicLinkQuery {
    m: Option<String>,
}

/// Decrypts the token, checks expiry, checks the target, loads the user, starts a session and
/// redirects to the target with `m` appended. Any failure: 302 `/login?error`, no cookie, no reason.
#[utoipa::path(
    tag = "service",
    params(
        ("token" = String, Path, description = "The magic token (encrypted, URL-safe)."),
        ("m" = Option<String>, Query, description = "A memento handed on to the target."),
    ),
    responses((status = 302,
        description = "To the token's target with `m` appended and a session cookie; on any failure to `/login?error` without one.",
        headers(("Location" = String), ("Set-Cookie" = String)))),
)]
#[get("/mtl/{token}")]
#[tracing::instrument(name = "magic_link", skip_all)]
pub async fn redeem(
    req: HttpRequest,
    token: web::Path<String>,
    store: web::Data<Arc<dyn Store>>,
    master: web::Data<MasterKey>,
    sessions: web::Data<Sessions>,
) -> HttpResponse {
    // Query parsing failures (e.g. a repeated `m`) count as a failed token, like everything here.
    let Ok(query) = web::Query::<MagicLinkQuery>::from_query(req.query_string()) else {
        return redirect_to_login_error();
    };
    match redeem_token(&token, store.get_ref().as_ref(), &master).await {
        Err(e) => refused(e, "a magic link's user").error_response(),
        Ok(Some((username, key_id, target))) => {
            let cookie = match sessions.create(&username, &key_id).await {
                Ok(cookie) => cookie,
                Err(e) => return refused(e, "a new session").error_response(),
            };
            let location = match &query.m {
                Some(m) => append_query(&target, "m", m),
                None => target,
            };
            tracing::info!(user = %log_str(&username), "magic link redeemed");
            let mut response = super::found(&location);
            response.add_cookie(&cookie).expect("a valid cookie");
            response
        }
        Ok(None) => {
            tracing::info!("magic link refused");
            redirect_to_login_error()
        }
    }
}

/// The user name, key id and target of a valid token, following the contract's processing
/// order; `Err` when the store cannot be read (the token may be good: it is tried again later).
async fn redeem_token(
    token: &str,
    store: &dyn Store,
    master: &MasterKey,
) -> Result<Option<(String, String, String)>, StoreError> {
    // 1. decrypt and decode (the key id in the clear says whose key opens it)
    let Some(key_id) = envelope_key_id(token) else {
        return Ok(None);
    };
    let Some(owner) = store.user_by_key_id(&key_id).await? else {
        return Ok(None);
    };
    let Ok(key) = UserKey::unwrap(master, &owner.memento_key) else {
        return Ok(None);
    };
    let Some(claims) = MagicToken::open(&key, token) else {
        return Ok(None);
    };
    // 2. expiry
    if claims.expires_at <= Utc::now() {
        return Ok(None);
    }
    // 3. target
    if !is_safe_target(&claims.target_url) {
        return Ok(None);
    }
    // 4. the account must still exist and still be the one whose key sealed the token
    let Some(user) = store.user(&claims.username).await? else {
        return Ok(None);
    };
    if user.name != owner.name || user.memento_key.key_id != key_id {
        return Ok(None);
    }
    Ok(Some((user.name, key_id, claims.target_url)))
}

/// `target` with `name=value` appended to its query (value percent-encoded).
pub(crate) fn append_query(target: &str, name: &str, value: &str) -> String {
    // Unreserved characters (RFC 3986) stay as they are, so base64url values pass unchanged.
    const QUERY_VALUE: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'_')
        .remove(b'.')
        .remove(b'~');
    let encoded = percent_encoding::utf8_percent_encode(value, QUERY_VALUE).to_string();
    let separator = if target.contains('?') { '&' } else { '?' };
    format!("{target}{separator}{name}={encoded}")
}
