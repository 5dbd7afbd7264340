//! What the layer's handlers know of the module and form they serve: the app data of a module's
//! routes.

use std::sync::Arc;

use actix_web::HttpRequest;
use meldewerk_actors::MessageSigner;

use super::errors::{ApiError, ErrorStyle, ModuleError};
use super::fields::FieldIndex;
use super::{Form, Module, ModuleInfo};

/// What the generic handlers know of the module they serve (app data of the module's routes).
pub struct ModuleContext {
    /// The module.
    pub module: Arc<dyn Module>,
    /// Its identity.
    pub info: &'static ModuleInfo,
    /// Its error style.
    pub style: ErrorStyle,
    /// Its field table, indexed for validating memento requests.
    pub fields: FieldIndex,
    /// Signs the messages its own routes dispatch (the engine's signer of the module).
    pub signer: Arc<dyn MessageSigner>,
}

impl ModuleContext {
    /// A context for `module`, whose messages `signer` signs.
    pub fn new(module: Arc<dyn Module>, signer: Arc<dyn MessageSigner>) -> Self {
        ModuleContext {
            info: module.info(),
            style: module.error_style().clone(),
            fields: FieldIndex::new(module.info().fields),
            module,
            signer,
        }
    }

    /// `error` as this module writes it, for the request `req`.
    pub fn error(&self, req: &HttpRequest, error: ApiError) -> ModuleError {
        ModuleError {
            error,
            style: self.style.clone(),
            module: self.info.module,
            instance: req.path().to_owned(),
        }
    }
}

/// A form route's app data: the module, which of its forms this is, and who signs its messages.
pub struct FormContext {
    /// The module.
    pub module: Arc<dyn Module>,
    /// The form.
    pub form: &'static Form,
    /// Signs the messages the form dispatches (the engine's signer of the module).
    pub signer: Arc<dyn MessageSigner>,
    /// Paths of the fields and groups mandatory however the form is filled in: a property of
    /// the form, found once here rather than on every page.
    pub mandatory: Vec<String>,
}
