//! `/admin/api/v1/certificates`: facilities' client certificates, per site (BSNR) and
//! environment, while the server runs; the same functions as `meldewerk certificate …`
//! ([`crate::certificates`]).
//!
//! A deposit takes the PKCS#12 file base64-encoded beside its passphrase; the passphrase opens the
//! file and is dropped, and neither it nor the key is ever answered or logged. Listings show what
//! identifies a certificate (subject, validity, fingerprint), never the key or the chain. Every
//! deposit and removal is recorded in the audit log.

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::{delete, get, put, web, HttpRequest, HttpResponse};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use meldewerk_storage::{Bsnr, Environment, Store};

use super::failure::Failure;
use super::openapi::{BodyRefusals, CertificateBody, CrossSite, Errors, Refusals};
use super::users::{required_string, unknown_members};
use crate::auth::Operator;
use crate::certificates::{self, CertificateError};
use crate::crypto::MasterKey;
use crate::routes::json;
use crate::telemetry::log_str;
use crate::web::WebSettings;

/// A certificate operation's refusal as the operator API answers it: 404 when there is none to
/// remove, else 400 with its reason (none quotes the passphrase or the file).
impl From<CertificateError> for Failure {
    fn from(e: CertificateError) -> Self {
        match e {
            CertificateError::Store(e) => Failure::Store(e),
            CertificateError::Missing(missing) => Failure::NotFound(missing.to_string()),
            other => Failure::Invalid(vec![other.to_string()]),
        }
    }
}

/// The site and environment of the path; both problems at once.
fn site(path: &(String, String)) -> Result<(Bsnr, Environment), Failure> {
    certificates::parse_site(&path.0, &path.1)
        .map_err(|errors| Failure::Invalid(errors.iter().map(ToString::to_string).collect()))
}

/// Records `operator`'s `action` on the certificate of `bsnr` in `environment`.
async fn audit(
    store: &Arc<dyn Store>,
    operator: &Operator,
    action: &str,
    bsnr: &Bsnr,
    environment: Environment,
) -> Result<(), Failure> {
    super::audit(
        store,
        &operator.0,
        action,
        format!("certificate {bsnr}/{environment}"),
    )
    .await
    .map_err(Failure::Store)
}

/// Every deposited certificate: 200 with an array of `{bsnr, environment, subject, notAfter,
/// fingerprintSha256, depositedAt}`, by site, test before production.
#[utoipa::path(operation_id = "list_certificates", responses(
    (status = 200, description = "Every deposited certificate.",
        body = Vec<certificates::CertificateSummary>),
    Refusals,
))]
#[get("/certificates")]
#[tracing::instrument(name = "admin_list_certificates", skip_all)]
pub async fn list(
    _operator: Operator,
    store: web::Data<Arc<dyn Store>>,
) -> Result<HttpResponse, Failure> {
    let all = certificates::list(&***store)
        .await
        .map_err(Failure::Store)?;
    Ok(HttpResponse::Ok().json(all))
}

/// Deposits the certificate of `{"pkcs12": "<base64>", "passphrase": "…"}` for the site and
/// environment of the path, in place of the one there was: 201 with its summary (200 when it
/// replaced one). 400 for a path, body or file that cannot be used (all problems of the path or
/// body at once; then one for the file), 413 for a body over `max_body_bytes`.
#[utoipa::path(
    params(
        ("bsnr" = String, Path, pattern = "^[0-9]{9}$", description = "The site's BSNR."),
        ("environment" = Environment, Path, description = "`test` or `production`."),
    ),
    request_body = CertificateBody,
    responses(
        (status = 200, description = "It replaced the certificate there was.",
            body = certificates::CertificateSummary),
        (status = 201, description = "Deposited.", body = certificates::CertificateSummary),
        BodyRefusals,
        CrossSite,
        Refusals,
    ),
)]
#[put("/certificates/{bsnr}/{environment}")]
#[tracing::instrument(
    name = "admin_deposit_certificate",
    skip_all,
    fields(bsnr = %log_str(&path.0), environment = %log_str(&path.1))
)]
pub async fn deposit(
    operator: Operator,
    store: web::Data<Arc<dyn Store>>,
    master: web::Data<MasterKey>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    payload: web::Payload,
    settings: web::Data<WebSettings>,
) -> Result<HttpResponse, Failure> {
    let (bsnr, environment) = site(&path)?;
    let object = json::read_object(&req, payload, settings.max_body_bytes).await?;
    let mut errors = unknown_members(&object, &["pkcs12", "passphrase"]);
    let file = required_string(&object, "pkcs12", &mut errors).and_then(|text| {
        STANDARD
            .decode(text)
            .map_err(|_| errors.push("pkcs12 must be standard base64".into()))
            .ok()
    });
    let passphrase = required_string(&object, "passphrase", &mut errors).map(str::to_owned);
    let (Some(file), Some(passphrase), true) = (file, passphrase, errors.is_empty()) else {
        return Err(Failure::Invalid(errors));
    };
    let deposited =
        certificates::deposit(&***store, &master, &bsnr, environment, file, passphrase).await?;
    audit(&store, &operator, "deposit-certificate", &bsnr, environment).await?;
    let status = if deposited.replaced {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    Ok(HttpResponse::build(status).json(deposited.summary))
}

/// Removes the certificate of the site and environment of the path: 204; 404 when none is
/// deposited.
#[utoipa::path(
    operation_id = "remove_certificate",
    params(
        ("bsnr" = String, Path, pattern = "^[0-9]{9}$", description = "The site's BSNR."),
        ("environment" = Environment, Path, description = "`test` or `production`."),
    ),
    responses(
        (status = 204, description = "Removed."),
        (status = 400, description = "The path names no site or environment.", body = Errors),
        (status = 404, description = "No certificate is deposited there.", body = Errors),
        CrossSite,
        Refusals,
    ),
)]
#[delete("/certificates/{bsnr}/{environment}")]
#[tracing::instrument(
    name = "admin_remove_certificate",
    skip_all,
    fields(bsnr = %log_str(&path.0), environment = %log_str(&path.1))
)]
pub async fn remove(
    operator: Operator,
    store: web::Data<Arc<dyn Store>>,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, Failure> {
    let (bsnr, environment) = site(&path)?;
    certificates::remove(&***store, &bsnr, environment).await?;
    audit(&store, &operator, "remove-certificate", &bsnr, environment).await?;
    Ok(HttpResponse::NoContent().finish())
}
