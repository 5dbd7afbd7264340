//! The guardianship module's own API routes inside `/api/guardianship/v1/`: the court messages
//! (`GET /messages`, `GET /download/{id}`, `POST /messages/ack`) and the contact address
//! (`/contact`). Decisions on what the contract leaves open are in docs/decisions.md
//! ("guardianship").

mod ack;
mod contact;
mod download;
mod messages;

use actix_web::web;
use meldewerk_storage::{CourtMessage, Store};

use super::archives::Archives;
use crate::module_layer::errors::ApiError;
use crate::module_layer::routes;

/// Registers the routes; `archives` is where the downloads are read from.
pub(super) fn configure(cfg: &mut web::ServiceConfig, archives: Archives) {
    cfg.app_data(web::Data::new(archives))
        .service(
            web::resource("/messages")
                .route(web::get().to(messages::list))
                .default_service(web::to(routes::only_get)),
        )
        .service(
            web::resource("/messages/ack")
                .route(web::post().to(ack::acknowledge))
                .default_service(web::to(routes::only_post)),
        )
        .service(
            web::resource("/download/{id}")
                .route(web::get().to(download::download))
                .default_service(web::to(routes::only_get)),
        )
        .service(
            web::resource("/contact")
                .route(web::get().to(contact::show))
                .route(web::put().to(contact::set))
                .route(web::delete().to(contact::remove))
                .default_service(web::to(contact::not_allowed)),
        );
}

/// What the caller may know of the message a path or request names.
pub(crate) enum Access {
    /// No message has this id (or the id is no number).
    Unknown,
    /// The message is in an account the caller is not granted.
    Forbidden,
    /// The caller may see it (deleted or not).
    Granted(Box<CourtMessage>),
    /// The store failed.
    Failed(ApiError),
}

/// The message `id` names, as far as `user` may see it.
pub(crate) async fn message_of(store: &dyn Store, user: &str, id: &str) -> Access {
    // Digits only: `+5` or ` 5` name no message either.
    let Some(id) = id
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| id.parse::<u64>().ok())
        .flatten()
    else {
        return Access::Unknown;
    };
    let message = match store.court_message(id).await {
        Ok(Some(message)) => message,
        Ok(None) => return Access::Unknown,
        Err(e) => return Access::Failed(e.into()),
    };
    match store.may_access_mailbox_account(user, message.account).await {
        Ok(true) => Access::Granted(Box::new(message)),
        Ok(false) => Access::Forbidden,
        Err(e) => Access::Failed(e.into()),
    }
}
