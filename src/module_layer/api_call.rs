//! What every handler of a module's API takes from its request, in one extractor.

use std::sync::Arc;

use actix_web::dev::Payload;
use actix_web::{web, FromRequest, HttpRequest};
use futures::future::LocalBoxFuture;
use meldewerk_storage::Store;

use super::context::ModuleContext;
use super::errors::{ApiError, ModuleError};
use crate::auth::ApiUser;

/// A request to a module's API: the caller, the module it is for, and the store. The caller's
/// credentials are checked first, as by [`ApiUser`] alone: a request without valid ones is
/// answered 401 (or 429) before anything of it is read.
pub(crate) struct ApiCall {
    /// The request.
    pub(crate) req: HttpRequest,
    /// The caller.
    pub(crate) user: ApiUser,
    /// The module the route belongs to.
    pub(crate) context: web::Data<ModuleContext>,
    /// The store.
    pub(crate) store: web::Data<Arc<dyn Store>>,
}

impl ApiCall {
    /// `error` as the module writes it, for this request.
    pub(crate) fn error(&self, error: ApiError) -> ModuleError {
        self.context.error(&self.req, error)
    }

    /// The store.
    pub(crate) fn store(&self) -> &dyn Store {
        self.store.as_ref().as_ref()
    }
}

impl FromRequest for ApiCall {
    type Error = actix_web::Error;
    type Future = LocalBoxFuture<'static, Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let user = ApiUser::from_request(req, payload);
        let req = req.clone();
        Box::pin(async move {
            let user = user.await?;
            // Registered with every module's routes; without them actix's own 500.
            let context = web::Data::<ModuleContext>::extract(&req).await?;
            let store = web::Data::<Arc<dyn Store>>::extract(&req).await?;
            Ok(ApiCall {
                req,
                user,
                context,
                store,
            })
        })
    }
}
