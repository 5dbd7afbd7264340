//! A deadline for the whole request body. actix-http times out a request's head, not its body:
//! a client that sends the head and then a byte every second would hold its connection (and a
//! worker's attention) for as long as it likes. One middleware, ahead of every handler, bounds
//! the time from the head to the last body byte (`body_timeout_secs`); a body still arriving then
//! ends in [`BodyTimedOut`], which each reader answers with 408 in its route family's error shape,
//! and the connection is closed after the answer.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::body::MessageBody;
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::error::PayloadError;
use actix_web::http::header;
use actix_web::http::ConnectionType;
use actix_web::middleware::Next;
use actix_web::web::Bytes;
use actix_web::{web, Error, HttpMessage};
use futures::Stream;

/// How long a request's body may take to arrive, from its head on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BodyDeadline(pub(crate) Duration);

/// The body did not arrive in time; carried inside the payload's I/O error, so that every
/// reader can tell it from a broken connection ([`timed_out`]).
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within {0} seconds")]
pub(crate) struct BodyTimedOut(pub(crate) u64);

/// The deadline that ran out, if `error` is one.
pub(crate) fn timed_out(error: &PayloadError) -> Option<&BodyTimedOut> {
    match error {
        PayloadError::Io(e) => e.get_ref()?.downcast_ref::<BodyTimedOut>(),
        _ => None,
    }
}

/// Puts the deadline on the body of every request that has one, and closes the connection after
/// an answer to a body that ran out of time (the rest of it may still be on its way).
pub(crate) async fn limit_body_time<B: MessageBody>(
    deadline: web::Data<BodyDeadline>,
    mut req: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<B>, Error> {
    if !has_body(&req) {
        return next.call(req).await;
    }
    let fired = Rc::new(Cell::new(false));
    let payload = Deadline {
        inner: req.take_payload(),
        sleep: Box::pin(tokio::time::sleep(deadline.0)),
        secs: deadline.0.as_secs(),
        fired: fired.clone(),
    };
    req.set_payload(Payload::from(
        Box::pin(payload) as Pin<Box<dyn Stream<Item = Result<Bytes, PayloadError>>>>
    ));
    let mut response = next.call(req).await?;
    if fired.get() {
        response
            .response_mut()
            .head_mut()
            .set_connection_type(ConnectionType::Close);
    }
    Ok(response)
}

/// Whether the request announces a body (a length above zero, or chunks).
fn has_body(req: &ServiceRequest) -> bool {
    let headers = req.headers();
    let length = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    headers.contains_key(header::TRANSFER_ENCODING) || length.is_some_and(|n| n > 0)
}

/// A body stream that ends in [`BodyTimedOut`] once its deadline has passed.
struct Deadline {
    inner: Payload,
    sleep: Pin<Box<tokio::time::Sleep>>,
    secs: u64,
    fired: Rc<Cell<bool>>,
}

impl Stream for Deadline {
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.fired.get() {
            return Poll::Ready(None);
        }
        if this.sleep.as_mut().poll(cx).is_ready() {
            this.fired.set(true);
            let error = std::io::Error::new(std::io::ErrorKind::TimedOut, BodyTimedOut(this.secs));
            return Poll::Ready(Some(Err(PayloadError::Io(error))));
        }
        Pin::new(&mut this.inner).poll_next(cx)
    }
}
