//! `GET /api/guardianship/v1/download/{id}`: a court message's ZIP archive, streamed from disk
//! in chunks (memory does not grow with the archive).
//!
//! A whole archive is read 256 KiB at a time on the blocking pool: `actix-files` reads 64 KiB
//! per hand-off to that pool, and with four times the hand-offs a 200 MB archive went at half
//! the speed. A request for a part (`Range`) is served by `actix-files`, which knows ranges.

use std::io::Read;

use actix_files::NamedFile;
use actix_web::body::SizedStream;
use actix_web::http::header::{self, ContentDisposition, DispositionParam, DispositionType};
use actix_web::web::Bytes;
use actix_web::{web, HttpResponse};
use futures::Stream;

use super::{message_of, Access};
use crate::module_layer::api_call::ApiCall;
use crate::module_layer::errors::{ApiError, ModuleError};
use crate::modules::guardianship::archives::Archives;

/// `GET /download/{id}`: 404 for an id that is no message (or one deleted), 403 for a message
/// of an account the caller is not granted, 404 for one whose archive is not written yet.
pub(super) async fn download(
    call: ApiCall,
    id: web::Path<String>,
    archives: web::Data<Archives>,
) -> Result<HttpResponse, ModuleError> {
    let req = &call.req;
    let fail = |e: ApiError| call.error(e);
    let message = match message_of(call.store(), &call.user.0.name, &id).await {
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
    let disposition = ContentDisposition {
        disposition: DispositionType::Attachment,
        parameters: vec![DispositionParam::Filename(name)],
    };
    let mut response = match req.headers().contains_key(header::RANGE) {
        true => file
            .set_content_type(ZIP.parse().expect("a valid media type"))
            .set_content_disposition(disposition)
            .use_etag(false)
            .use_last_modified(false)
            .into_response(req),
        false => {
            let len = file.metadata().len();
            let whole = file.file().try_clone().map_err(|e| {
                fail(ApiError::Internal(format!(
                    "archive of court message {}: {e}",
                    message.id
                )))
            })?;
            HttpResponse::Ok()
                .content_type(ZIP)
                .insert_header((header::CONTENT_DISPOSITION, disposition))
                .insert_header((header::ACCEPT_RANGES, "bytes"))
                .body(SizedStream::new(len, chunks(whole, len)))
        }
    };
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    Ok(response)
}

/// The archive's media type.
const ZIP: &str = "application/zip";

/// Bytes read per hand-off to the blocking pool: four times `actix-files`' 64 KiB, few enough
/// that a read does not hold one of the pool's threads (which also check passwords and flush
/// the store) much longer.
const CHUNK_BYTES: u64 = 256 * 1024;

/// The first `len` bytes of `file` from where it stands, [`CHUNK_BYTES`] at a time, each read on
/// the blocking pool. A failed read ends the stream with its error, as does a file that ends
/// before `len` bytes (the answer is then cut short, and the client sees it fall short of its
/// `Content-Length`).
fn chunks(file: std::fs::File, len: u64) -> impl Stream<Item = Result<Bytes, std::io::Error>> {
    futures::stream::try_unfold((file, len), |(mut file, left)| async move {
        if left == 0 {
            return Ok(None);
        }
        let read = web::block(move || {
            let mut chunk = Vec::with_capacity(left.min(CHUNK_BYTES) as usize);
            (&mut file)
                .take(left.min(CHUNK_BYTES))
                .read_to_end(&mut chunk)?;
            Ok::<_, std::io::Error>((file, chunk))
        })
        .await
        .map_err(std::io::Error::other)?;
        let (file, chunk) = read?;
        if chunk.is_empty() {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let left = left - chunk.len() as u64;
        Ok(Some((Bytes::from(chunk), (file, left))))
    })
}

#[cfg(test)]
mod tests {
    use futures::TryStreamExt;

    use super::*;

    async fn read(content: &[u8], len: u64) -> Result<Vec<Bytes>, std::io::Error> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("archive.zip");
        std::fs::write(&path, content).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        chunks(file, len).try_collect().await
    }

    #[actix_web::test]
    async fn an_archive_comes_whole_in_chunks_of_at_most_the_chunk_size() {
        let chunk = CHUNK_BYTES as usize;
        for size in [0, 1, chunk - 1, chunk, chunk + 1, 2 * chunk + 1] {
            let content: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
            let read = read(&content, size as u64).await.unwrap();
            assert!(read.iter().all(|c| !c.is_empty() && c.len() <= chunk));
            assert_eq!(read.len(), size.div_ceil(chunk), "{size} bytes");
            assert_eq!(read.concat(), content, "{size} bytes");
        }
    }

    #[actix_web::test]
    async fn a_file_longer_than_its_length_is_cut_and_a_shorter_one_fails() {
        let longer = read(b"0123456789", 4).await.unwrap();
        assert_eq!(longer.concat(), b"0123");
        let shorter = read(b"0123", 10).await.unwrap_err();
        assert_eq!(shorter.kind(), std::io::ErrorKind::UnexpectedEof);
    }
}
