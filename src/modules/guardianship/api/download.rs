//! `GET /api/guardianship/v1/download/{id}`: a court message's ZIP archive, streamed from disk
//! in chunks (memory does not grow with the archive).

use std::sync::Arc;

use actix_files::NamedFile;
use actix_web::http::header::{ContentDisposition, DispositionParam, DispositionType};
use actix_web::{web, HttpRequest, HttpResponse};
use meldewerk_storage::Store;

use super::{message_of, Access};
use crate::auth::ApiUser;
use crate::module_layer::context::ModuleContext;
use crate::module_layer::errors::{ApiError, ModuleError};
use crate::modules::guardianship::archives::Archives;

/// `GET /download/{id}`: 404 for an id that is no message (or one deleted), 403 for a message
/// of an account the caller is not granted, 404 for one whose archive is not written yet.
pub(super) async fn download(
    req: HttpRequest,
    user: ApiUser,
    id: web::Path<String>,
    context: web::Data<ModuleContext>,
    store: web::Data<Arc<dyn Store>>,
    archives: web::Data<Archives>,
) -> Result<HttpResponse, ModuleError> {
    let fail = |e: ApiError| context.error(&req, e);
    let message = match message_of(store.as_ref().as_ref(), &user.0.name, &id).await {
        Access::Granted(message) if message.deleted.is_none() => *message,
        Access::Granted(_) | Access::Unknown => {
            return Err(fail(ApiError::Missing(format!(
                "court message {} not found (or deleted)",
                crate::telemetry::log_str(&id)
            ))))
        }
        Access::Forbidden => {
            return Err(fail(ApiError::Forbidden(format!(
                "court message {} is in a mailbox account you are not granted",
                crate::telemetry::log_str(&id)
            ))))
        }
        Access::Failed(e) => return Err(fail(e)),
    };
    let not_yet = || {
        fail(ApiError::Missing(format!(
            "court message {} is not downloadable yet: it is still being fetched from the \
             mailbox (hydratedAt is null), or fetching it failed for good",
            message.id
        )))
    };
    if !message.archived() {
        return Err(not_yet());
    }
    let file = match NamedFile::open_async(archives.path(message.id)).await {
        Ok(file) => file,
        // Acknowledged in the meantime.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(not_yet()),
        Err(e) => {
            return Err(fail(ApiError::Internal(format!(
                "archive of court message {}: {e}",
                message.id
            ))))
        }
    };
    let name = format!("court-message-{}.zip", message.id);
    let file = file
        .set_content_type("application/zip".parse().expect("a valid media type"))
        .set_content_disposition(ContentDisposition {
            disposition: DispositionType::Attachment,
            parameters: vec![DispositionParam::Filename(name)],
        })
        .use_etag(false)
        .use_last_modified(false);
    let mut response = file.into_response(&req);
    response.headers_mut().insert(
        actix_web::http::header::CACHE_CONTROL,
        actix_web::http::header::HeaderValue::from_static("no-store"),
    );
    Ok(response)
}
