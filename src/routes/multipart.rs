//! Reading a `multipart/form-data` body (RFC 7578) that was read whole and bounded before, with
//! `actix-multipart`: its parts with their field name, file name and bytes, and every deviation
//! a clear error.
//!
//! A file name is taken as the sender wrote it (`filename="…"`, or RFC 5987's
//! `filename*=UTF-8''…`, percent-decoded, which wins): whoever reads the parts judges the names.

use actix_web::http::header::{self, HeaderMap};
use actix_web::web::Bytes;
use actix_web::HttpRequest;
use futures::StreamExt as _;

/// Most parts one body may have.
const MAX_PARTS: usize = 200;

/// One part of the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Part {
    /// The field name (`name="…"`).
    pub(crate) name: String,
    /// The file name, for a file part.
    pub(crate) filename: Option<String>,
    /// The part's bytes.
    pub(crate) content: Vec<u8>,
}

/// Whether the request declares its body `multipart/form-data` (whatever its parameters).
pub(crate) fn is_multipart(req: &HttpRequest) -> bool {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("multipart/form-data"))
}

/// The parts of `body`, sent with `headers` (its `Content-Type` names the boundary), in order;
/// `Err` says what is wrong with it.
pub(crate) async fn parts(headers: &HeaderMap, body: Bytes) -> Result<Vec<Part>, String> {
    let whole = futures::stream::once(async move { Ok(body) });
    let mut multipart = actix_multipart::Multipart::new(headers, whole);
    let mut parts = Vec::new();
    while let Some(field) = multipart.next().await {
        let mut field = field.map_err(unreadable)?;
        if parts.len() == MAX_PARTS {
            return Err(format!(
                "a multipart body may have at most {MAX_PARTS} parts"
            ));
        }
        let name = field
            .name()
            .ok_or("a multipart part has no name")?
            .to_owned();
        let filename = match field.content_disposition() {
            Some(disposition) => match disposition.get_filename_ext() {
                Some(extended) => Some(
                    String::from_utf8(extended.value.clone())
                        .map_err(|_| "filename* must be UTF-8''<percent-encoded name>")?,
                ),
                None => disposition.get_filename().map(str::to_owned),
            },
            None => None,
        };
        let mut content = Vec::new();
        while let Some(chunk) = field.next().await {
            content.extend_from_slice(&chunk.map_err(unreadable)?);
        }
        parts.push(Part {
            name,
            filename,
            content,
        });
    }
    Ok(parts)
}

/// What is wrong with a body the parser refused, in the sender's terms.
fn unreadable(error: actix_multipart::MultipartError) -> String {
    match error {
        actix_multipart::MultipartError::Incomplete => "the multipart body is cut short".to_owned(),
        actix_multipart::MultipartError::BoundaryMissing => {
            "a multipart/form-data body needs a boundary".to_owned()
        }
        other => format!("the multipart body cannot be read: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::header::HeaderValue;

    async fn read(body: &'static [u8]) -> Result<Vec<Part>, String> {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("multipart/form-data; boundary=xyz"),
        );
        parts(&headers, Bytes::from_static(body)).await
    }

    #[actix_web::test]
    async fn fields_and_files_are_read() {
        let body = b"--xyz\r\nContent-Disposition: form-data; name=\"sender\"\r\n\r\nDE.Justiz.ag\r\n\
--xyz\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a b.xml\"\r\n\
Content-Type: application/xml\r\n\r\n<x/>\r\n\
--xyz\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x\"; filename*=UTF-8''..%2F%07b\r\n\r\n\r\n\
--xyz--\r\n";
        let parts = read(body).await.unwrap();
        assert_eq!(parts.len(), 3);
        assert_eq!(
            (parts[0].name.as_str(), parts[0].content.as_slice()),
            ("sender", &b"DE.Justiz.ag"[..])
        );
        assert_eq!(parts[0].filename, None);
        assert_eq!(parts[1].filename.as_deref(), Some("a b.xml"));
        assert_eq!(parts[1].content, b"<x/>");
        assert_eq!(parts[2].filename.as_deref(), Some("../\u{7}b"));
        assert!(parts[2].content.is_empty());
    }

    #[actix_web::test]
    async fn broken_bodies_are_refused() {
        let cut = b"--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nabc";
        assert!(read(cut).await.unwrap_err().contains("cut short"));
        let unnamed = b"--xyz\r\nContent-Disposition: form-data\r\n\r\na\r\n--xyz--\r\n";
        assert!(read(unnamed).await.is_err());
        let mut headers = HeaderMap::new();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("multipart/form-data"),
        );
        let no_boundary = parts(&headers, Bytes::from_static(b"--xyz--\r\n")).await;
        assert!(no_boundary.unwrap_err().contains("boundary"));
    }
}
