//! Reading a `multipart/form-data` body (RFC 7578) that was read whole and bounded before: its
//! parts with their field name, file name and bytes. Small on purpose: only what a form of text
//! fields and files sends, and every deviation a clear error instead of a guess.
//!
//! A file name is taken as the sender wrote it (`filename="…"`, with `\"` and `\\` unescaped,
//! or RFC 5987's `filename*=UTF-8''…`, percent-decoded, which wins): whoever reads the parts
//! judges the names.

use actix_web::http::header;
use actix_web::HttpRequest;

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

/// The boundary of a request declared as `multipart/form-data`; `None` for another type.
/// `Err` for a multipart request without a usable boundary.
pub(crate) fn boundary(req: &HttpRequest) -> Result<Option<String>, String> {
    let Some(content_type) = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return Ok(None);
    };
    let mut params = content_type.split(';').map(str::trim);
    if !params
        .next()
        .is_some_and(|t| t.eq_ignore_ascii_case("multipart/form-data"))
    {
        return Ok(None);
    }
    let boundary = params
        .filter_map(|p| p.split_once('='))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("boundary"))
        .map(|(_, v)| v.trim().trim_matches('"').to_owned())
        .filter(|b| !b.is_empty() && b.len() <= 70)
        .ok_or("a multipart/form-data body needs a boundary of 1 to 70 characters")?;
    Ok(Some(boundary))
}

/// The parts of `body`, in order; `Err` says what is wrong with it.
pub(crate) fn parts(body: &[u8], boundary: &str) -> Result<Vec<Part>, String> {
    let delimiter = format!("--{boundary}").into_bytes();
    let mut rest = body
        .strip_prefix(delimiter.as_slice())
        .or_else(|| find(body, &delimiter).map(|at| &body[at + delimiter.len()..]))
        .ok_or("the multipart body holds no part")?;
    let next_delimiter = [b"\r\n".as_slice(), &delimiter].concat();
    let mut parts = Vec::new();
    loop {
        if rest.starts_with(b"--") {
            return Ok(parts);
        }
        rest = rest
            .strip_prefix(b"\r\n")
            .ok_or("a multipart delimiter must end its line")?;
        let end = find(rest, &next_delimiter).ok_or("the multipart body is cut short")?;
        parts.push(part(&rest[..end])?);
        if parts.len() > MAX_PARTS {
            return Err(format!(
                "a multipart body may have at most {MAX_PARTS} parts"
            ));
        }
        rest = &rest[end + next_delimiter.len()..];
    }
}

/// One part: its headers, a blank line, its bytes.
fn part(raw: &[u8]) -> Result<Part, String> {
    let split = find(raw, b"\r\n\r\n").ok_or("a multipart part has no header block")?;
    let headers = std::str::from_utf8(&raw[..split])
        .map_err(|_| "a multipart part's headers are not UTF-8".to_owned())?;
    let disposition = headers
        .split("\r\n")
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-disposition"))
        .map(|(_, value)| value.trim())
        .ok_or("a multipart part has no Content-Disposition")?;
    let (kind, params) = disposition.split_once(';').unwrap_or((disposition, ""));
    if !kind.trim().eq_ignore_ascii_case("form-data") {
        return Err("a multipart part's Content-Disposition must be form-data".to_owned());
    }
    let params = parameters(params)?;
    let get = |key: &str| {
        params
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v.clone())
    };
    let extended = match get("filename*") {
        Some(value) => Some(extended_value(&value)?),
        None => None,
    };
    Ok(Part {
        name: get("name").ok_or("a multipart part has no name")?,
        filename: extended.or_else(|| get("filename")),
        content: raw[split + 4..].to_vec(),
    })
}

/// `; key=value; key="quoted \" value"` as pairs.
fn parameters(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut pairs = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace() || *c == ';') {
            chars.next();
        }
        let key: String = chars.by_ref().take_while(|c| *c != '=').collect();
        if key.trim().is_empty() {
            return Ok(pairs);
        }
        let mut value = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    Some('\\') => value.extend(chars.next()),
                    Some('"') => break,
                    Some(c) => value.push(c),
                    None => return Err("a quoted multipart parameter is not closed".to_owned()),
                }
            }
        } else {
            value = chars
                .by_ref()
                .take_while(|c| *c != ';')
                .collect::<String>()
                .trim()
                .to_owned();
        }
        pairs.push((key.trim().to_owned(), value));
    }
}

/// RFC 5987's `UTF-8''percent-encoded`.
fn extended_value(value: &str) -> Result<String, String> {
    let bad = || "filename* must be UTF-8''<percent-encoded name>".to_owned();
    let (charset, rest) = value.split_once('\'').ok_or_else(bad)?;
    let (_language, encoded) = rest.split_once('\'').ok_or_else(bad)?;
    if !charset.eq_ignore_ascii_case("utf-8") {
        return Err(bad());
    }
    let bytes = encoded.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3).ok_or_else(bad)?;
            let hex = std::str::from_utf8(hex).map_err(|_| bad())?;
            decoded.push(u8::from_str_radix(hex, 16).map_err(|_| bad())?);
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(decoded).map_err(|_| bad())
}

/// Where `needle` first occurs in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_and_files_are_read() {
        let body = b"--xyz\r\nContent-Disposition: form-data; name=\"sender\"\r\n\r\nDE.Justiz.ag\r\n\
--xyz\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a \\\"b\\\".xml\"\r\n\
Content-Type: application/xml\r\n\r\n<x/>\r\n\
--xyz\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x\"; filename*=UTF-8''..%2F%07b\r\n\r\n\r\n\
--xyz--\r\n";
        let parts = parts(body, "xyz").unwrap();
        assert_eq!(parts.len(), 3);
        assert_eq!(
            (parts[0].name.as_str(), parts[0].content.as_slice()),
            ("sender", &b"DE.Justiz.ag"[..])
        );
        assert_eq!(parts[1].filename.as_deref(), Some("a \"b\".xml"));
        assert_eq!(parts[1].content, b"<x/>");
        assert_eq!(parts[2].filename.as_deref(), Some("../\u{7}b"));
        assert!(parts[2].content.is_empty());
    }

    #[test]
    fn broken_bodies_are_refused() {
        assert!(parts(b"nothing", "xyz").is_err());
        let cut = b"--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nabc";
        assert!(parts(cut, "xyz").unwrap_err().contains("cut short"));
        let unnamed = b"--xyz\r\nContent-Disposition: form-data\r\n\r\na\r\n--xyz--";
        assert!(parts(unnamed, "xyz").unwrap_err().contains("no name"));
    }
}
