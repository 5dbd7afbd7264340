//! [`HttpTransport`]: a [`Transport`] that speaks the wire protocol to an authority running as
//! its own process.

use std::time::Duration;

use async_trait::async_trait;
use chrono::Utc;
use reqwest::{Client, Response, StatusCode, Url};
use serde::de::DeserializeOwned;

use super::mailbox::{WireDeleted, WireMailboxMessage, WireMailboxPage, MAILBOXES_PATH};
use super::{
    check_url, WireAckBatch, WireAnswer, WireError, ACKNOWLEDGEMENTS_PATH, DELIVERIES_PATH,
    MAX_BODY_BYTES, MAX_WIRE_BATCH,
};
use crate::mailbox::{MailboxMessage, MailboxPage, MAX_LIST_PAGE};
use crate::{AckBatch, Answer, Delivery, Finished, Inbox, Mailbox, Transport, TransportError};

/// Longest error text of a peer kept in a transport error (operators read it in the transport's
/// health, integrators in a failure reason); a peer's HTML error page is cut to this.
const MAX_ERROR_CHARS: usize = 500;

/// A status the peer refuses with, and what its reason makes of the call.
type Refusal<T> = (StatusCode, fn(String) -> Result<T, TransportError>);

/// Where and how to reach the authority.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpTransportSettings {
    /// Base url; the protocol's paths are appended to it.
    pub url: String,
    /// Longest wait for a connection.
    pub connect_timeout: Duration,
    /// Longest a whole call (connect, send, answer) may take.
    pub request_timeout: Duration,
}

/// A [`Transport`] over HTTP: deliveries (and, for an authority with an inbox, inbox fetches) go
/// to the authority at a url ([`crate::wire`] describes the protocol). Cheap to clone.
#[derive(Debug, Clone)]
pub struct HttpTransport {
    name: String,
    deliveries: Url,
    /// The inbox's url, for an authority that acknowledges later.
    acknowledgements: Option<Url>,
    /// The mailbox face's url, for an authority that keeps mailboxes.
    mailboxes: Option<Url>,
    client: Client,
}

impl HttpTransport {
    /// A transport called `name` (the channel it stands in for, so that metrics, the circuit
    /// breaker and the inbox cursor keep their names) reaching the authority at `settings.url`;
    /// with `inbox`, the authority acknowledges later and its inbox is fetched there too.
    pub fn new(name: &str, settings: &HttpTransportSettings, inbox: bool) -> Result<Self, String> {
        let base = check_url(&settings.url)?;
        let client = client_builder(settings)
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {}", chain(&e)))?;
        Ok(HttpTransport {
            name: name.to_owned(),
            deliveries: join(&base, DELIVERIES_PATH),
            acknowledgements: inbox.then(|| join(&base, ACKNOWLEDGEMENTS_PATH)),
            mailboxes: None,
            client,
        })
    }

    /// The same transport reading the authority's mailboxes too (the wire protocol's mailbox
    /// face, [`super::mailbox`]).
    pub fn with_mailbox(self) -> Self {
        let mut base = self.deliveries.clone();
        let path = base.path().trim_end_matches(DELIVERIES_PATH).to_owned();
        base.set_path(&path);
        let mailboxes = Some(join(&base, MAILBOXES_PATH));
        HttpTransport { mailboxes, ..self }
    }

    /// `{url}/mailboxes/{safe_id}/messages[/{message_id}]`, each segment percent-encoded.
    fn mailbox_url(&self, safe_id: &str, message_id: Option<&str>) -> Result<Url, TransportError> {
        let mut url = self.mailboxes.clone().ok_or_else(|| {
            TransportError::Refused(format!(
                "{} keeps no mailboxes: nothing to read there",
                self.name
            ))
        })?;
        if let Ok(mut segments) = url.path_segments_mut() {
            segments.pop_if_empty().push(safe_id).push("messages");
            if let Some(message_id) = message_id {
                segments.push(message_id);
            }
        }
        Ok(url)
    }

    /// Reads a `200` answer as `T`; a status of `refusals` is what its function makes of the
    /// peer's reason (a refusal at once, an unknown cursor), any other status a transient error.
    async fn answer<T: DeserializeOwned>(
        &self,
        url: &Url,
        sent: Result<Response, reqwest::Error>,
        refusals: &[Refusal<T>],
    ) -> Result<T, TransportError> {
        let (status, body) = status_and_body(url, sent).await?;
        if status == StatusCode::OK {
            return serde_json::from_slice(&body)
                .map_err(|e| TransportError::Transient(format!("{url}: unreadable answer ({e})")));
        }
        let said = error_text(&body);
        if let Some((_, refused)) = refusals.iter().find(|(refusal, _)| *refusal == status) {
            return refused(said.unwrap_or_else(|| {
                format!("refused by the authority (HTTP {status}, no reason given)")
            }));
        }
        let said = said.map_or_else(String::new, |text| format!(": {text}"));
        Err(TransportError::Transient(format!(
            "{url}: HTTP {status}{said}"
        )))
    }
}

#[async_trait]
impl Transport for HttpTransport {
    fn name(&self) -> &str {
        &self.name
    }

    async fn submit(&self, delivery: Delivery) -> Result<Answer, TransportError> {
        let url = &self.deliveries;
        let sent = self
            .client
            .post(url.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(serde_json::to_vec(&delivery).map_err(|e| {
                TransportError::Transient(format!("cannot encode the delivery: {e}"))
            })?)
            .send()
            .await;
        let refused = |reason| {
            Ok(WireAnswer::from(Answer::Finished(Finished::refused(
                reason,
            ))))
        };
        let answer: WireAnswer = self
            .answer(url, sent, &[(StatusCode::UNPROCESSABLE_ENTITY, refused)])
            .await?;
        answer
            .into_answer(Utc::now())
            .map_err(|e| TransportError::Transient(format!("{url}: unusable answer ({e})")))
    }

    fn inbox(&self) -> Option<&dyn Inbox> {
        self.acknowledgements
            .is_some()
            .then_some(self as &dyn Inbox)
    }

    fn mailbox(&self) -> Option<&dyn Mailbox> {
        self.mailboxes.is_some().then_some(self as &dyn Mailbox)
    }
}

/// The mailbox face's refusal of an account the server does not keep.
const UNKNOWN_ACCOUNT: fn(String) -> Result<WireDeleted, TransportError> =
    |e| Err(TransportError::Refused(e));

#[async_trait]
impl Mailbox for HttpTransport {
    async fn list(
        &self,
        safe_id: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<MailboxPage, TransportError> {
        let url = paged(
            self.mailbox_url(safe_id, None)?,
            cursor,
            limit,
            MAX_LIST_PAGE,
        );
        let sent = self.client.get(url.clone()).send().await;
        let page: WireMailboxPage = self.answer(&url, sent, &paged_refusals()).await?;
        Ok(page.into())
    }

    async fn fetch(
        &self,
        safe_id: &str,
        message_id: &str,
    ) -> Result<Option<MailboxMessage>, TransportError> {
        let url = self.mailbox_url(safe_id, Some(message_id))?;
        let sent = self.client.get(url.clone()).send().await;
        // Gone is an answer, not a fault: read as `None` before the body is judged.
        let message: Option<WireMailboxMessage> = self
            .answer(
                &url,
                sent,
                &[
                    (StatusCode::NOT_FOUND, |_| Ok(None)),
                    (StatusCode::FORBIDDEN, |e| Err(TransportError::Refused(e))),
                ],
            )
            .await?;
        Ok(message.map(MailboxMessage::from))
    }

    async fn delete(&self, safe_id: &str, message_id: &str) -> Result<bool, TransportError> {
        let url = self.mailbox_url(safe_id, Some(message_id))?;
        let sent = self.client.delete(url.clone()).send().await;
        let deleted: WireDeleted = self
            .answer(&url, sent, &[(StatusCode::FORBIDDEN, UNKNOWN_ACCOUNT)])
            .await?;
        Ok(deleted.deleted)
    }
}

#[async_trait]
impl Inbox for HttpTransport {
    async fn acknowledgements(
        &self,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<AckBatch, TransportError> {
        let Some(url) = self.acknowledgements.clone() else {
            return Err(TransportError::Refused(format!(
                "{} has no inbox: its authority decides every delivery at once",
                self.name
            )));
        };
        let url = paged(url, cursor, limit, MAX_WIRE_BATCH);
        let sent = self.client.get(url.clone()).send().await;
        let batch: WireAckBatch = self.answer(&url, sent, &paged_refusals()).await?;
        batch
            .into_batch()
            .map_err(|e| TransportError::Transient(format!("{url}: unusable answer ({e})")))
    }
}

/// `url` asking for the page after `cursor` (none: from the start) of at most `limit` (1 to
/// `most`): the inbox's and the mailbox listing's query.
fn paged(mut url: Url, cursor: Option<&str>, limit: usize, most: usize) -> Url {
    {
        let mut query = url.query_pairs_mut();
        if let Some(cursor) = cursor {
            query.append_pair("cursor", cursor);
        }
        query.append_pair("limit", &limit.clamp(1, most).to_string());
    }
    url
}

/// What the peer refuses a paged read with: `410` an unknown cursor, `403` the read itself.
fn paged_refusals<T>() -> [Refusal<T>; 2] {
    [
        (StatusCode::GONE, |e| Err(TransportError::UnknownCursor(e))),
        (StatusCode::FORBIDDEN, |e| Err(TransportError::Refused(e))),
    ]
}

/// What every HTTP client of a transport starts from: the timeouts of `settings`, no redirects,
/// no proxy, the service's user agent.
pub(crate) fn client_builder(settings: &HttpTransportSettings) -> reqwest::ClientBuilder {
    Client::builder()
        .connect_timeout(settings.connect_timeout)
        .timeout(settings.request_timeout)
        // The authority answers the call itself; a redirect means a wrong url, which the
        // operator sees as the status in the transport's last error.
        .redirect(reqwest::redirect::Policy::none())
        // Simulators and mocks run beside the service; a proxy from the environment would
        // only stand in between.
        .no_proxy()
        .user_agent(concat!("meldewerk/", env!("CARGO_PKG_VERSION")))
}

/// [`crate::TransportKind::connect`] of an authority reached over the wire protocol: an
/// [`HttpTransport`] named like the channel, fetching the inbox when the authority has one.
pub fn connect(
    kind: &'static crate::TransportKind,
    settings: &HttpTransportSettings,
    _config: serde_json::Value,
    _credentials: &dyn crate::tls::Credentials,
) -> Result<std::sync::Arc<dyn Transport>, String> {
    let transport = HttpTransport::new(kind.name, settings, kind.inbox)?;
    Ok(std::sync::Arc::new(if kind.mailbox {
        transport.with_mailbox()
    } else {
        transport
    }))
}

/// `base` with `path` appended to its own path (`http://h/mock` + `/deliveries` →
/// `http://h/mock/deliveries`).
pub(crate) fn join(base: &Url, path: &str) -> Url {
    let mut url = base.clone();
    let joined = format!("{}{path}", base.path().trim_end_matches('/'));
    url.set_path(&joined);
    url
}

/// The status and the body (at most [`MAX_BODY_BYTES`]) of the answer to a request sent to
/// `url`; a request that could not be sent, or an answer that could not be read, is a transient
/// fault naming the url.
pub(crate) async fn status_and_body(
    url: &Url,
    sent: Result<Response, reqwest::Error>,
) -> Result<(StatusCode, Vec<u8>), TransportError> {
    // reqwest's text names the url; it is said once, in front.
    let response =
        sent.map_err(|e| TransportError::Transient(format!("{url}: {}", chain(&e.without_url()))))?;
    let status = response.status();
    let body = read_bounded(response)
        .await
        .map_err(|e| TransportError::Transient(format!("{url}: HTTP {status}, {e}")))?;
    Ok((status, body))
}

/// The body, at most [`MAX_BODY_BYTES`].
async fn read_bounded(mut response: Response) -> Result<Vec<u8>, String> {
    let too_large = || format!("answer larger than {MAX_BODY_BYTES} bytes");
    if response
        .content_length()
        .is_some_and(|n| n > MAX_BODY_BYTES as u64)
    {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("answer broken off: {}", chain(&e.without_url())))?
    {
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The `error` of a [`WireError`] body, else the body's text when it is short readable text.
pub(crate) fn error_text(body: &[u8]) -> Option<String> {
    let text = match serde_json::from_slice::<WireError>(body) {
        Ok(WireError { error }) => error,
        Err(_) => String::from_utf8_lossy(body).trim().to_owned(),
    };
    if text.is_empty() {
        return None;
    }
    let mut cut: String = text.chars().take(MAX_ERROR_CHARS).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    Some(cut)
}

/// An error with its causes: reqwest's own text says only "error sending request"; the cause
/// ("Connection refused") is what an operator needs.
pub(crate) fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let said = cause.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mailbox_face_lies_below_the_url_with_encoded_segments() {
        let settings = HttpTransportSettings {
            url: "http://127.0.0.1:9/mock/".into(),
            connect_timeout: Duration::from_secs(1),
            request_timeout: Duration::from_secs(1),
        };
        let plain = HttpTransport::new("egvp", &settings, false).unwrap();
        assert!(plain.mailbox().is_none());
        assert!(matches!(
            plain.mailbox_url("a", None),
            Err(TransportError::Refused(_))
        ));
        let reading = plain.with_mailbox();
        assert!(reading.mailbox().is_some());
        let url = reading.mailbox_url("DE.Justiz.ag", Some("a/b?c")).unwrap();
        assert_eq!(
            url.as_str(),
            "http://127.0.0.1:9/mock/mailboxes/DE.Justiz.ag/messages/a%2Fb%3Fc"
        );
        let listing = paged(
            reading.mailbox_url("x", None).unwrap(),
            Some("7"),
            5000,
            1000,
        );
        assert_eq!(
            listing.as_str(),
            "http://127.0.0.1:9/mock/mailboxes/x/messages?cursor=7&limit=1000"
        );
    }
}
