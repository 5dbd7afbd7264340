//! HTTP/1.1 spoken by hand, for what a client library will not send: another `Host`, a body that
//! trickles in, `Expect: 100-continue` with a body that never comes.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// One answer as it came over the wire.
#[derive(Debug)]
pub struct RawAnswer {
    /// The status code.
    pub status: u16,
    /// The header lines, names lowercase.
    pub headers: Vec<(String, String)>,
    /// The body, as text.
    pub body: String,
}

impl RawAnswer {
    /// The value of header `name` (lowercase), if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {self:?}"))
    }
}

/// Connects to `base` (`http://HOST:PORT`), with a 30 s read timeout so that a server that
/// never answers fails the test instead of hanging it.
pub fn connect(base: &str) -> TcpStream {
    let stream = TcpStream::connect(base.trim_start_matches("http://")).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream
}

/// Sends `request` as it stands on a new connection and reads the first answer.
pub fn exchange(base: &str, request: &str) -> RawAnswer {
    let mut stream = connect(base);
    stream.write_all(request.as_bytes()).unwrap();
    read_answer(&mut stream)
}

/// Reads one answer from `stream`: the head, then as many body bytes as `Content-Length` says
/// (a body without one is read to the end of the connection).
pub fn read_answer(stream: &mut TcpStream) -> RawAnswer {
    let mut bytes = Vec::new();
    let mut byte = [0u8; 1];
    while !bytes.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => bytes.push(byte[0]),
            Ok(_) => break,
            Err(e) => panic!(
                "no answer: {e}; so far {:?}",
                String::from_utf8_lossy(&bytes)
            ),
        }
    }
    let head = String::from_utf8_lossy(&bytes).into_owned();
    let mut lines = head.trim_end().split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .get(9..12)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {head:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .map(|(_, v)| v.parse::<usize>().unwrap());
    let mut body = Vec::new();
    match length {
        Some(length) => {
            body.resize(length, 0);
            stream.read_exact(&mut body).unwrap();
        }
        None if status == 100 => {}
        None => {
            let _ = stream.read_to_end(&mut body);
        }
    }
    RawAnswer {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

/// Sends `head` (a request's head, announcing a body of 1000 bytes) on a new connection, then
/// one byte of the body a second, and reads the answer that comes meanwhile. Also answers
/// whether the server closed the connection after it.
pub fn trickle(base: &str, head: &str) -> (RawAnswer, bool) {
    let mut stream = connect(base);
    stream.write_all(head.as_bytes()).unwrap();
    let mut writer = stream.try_clone().unwrap();
    std::thread::spawn(move || {
        for _ in 0..120 {
            if writer.write_all(b" ").is_err() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_secs(1));
        }
    });
    let answer = read_answer(&mut stream);
    let mut rest = [0u8; 1];
    let closed = match stream.read(&mut rest) {
        Ok(0) => true,
        Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
        Ok(_) => false,
    };
    (answer, closed)
}

/// The head of a POST of `path` announcing `length` bytes of `content_type`, with Basic
/// `credentials` and, if `expect`, `Expect: 100-continue`.
pub fn post_head(
    path: &str,
    content_type: &str,
    length: u64,
    credentials: (&str, &str),
    expect: bool,
) -> String {
    use base64::Engine as _;
    let basic = base64::engine::general_purpose::STANDARD
        .encode(format!("{}:{}", credentials.0, credentials.1));
    let expect = if expect {
        "Expect: 100-continue\r\n"
    } else {
        ""
    };
    format!(
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Basic {basic}\r\n\
         Content-Type: {content_type}\r\nContent-Length: {length}\r\n{expect}\r\n"
    )
}
