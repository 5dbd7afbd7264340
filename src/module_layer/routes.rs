//! Registration of a module's routes: the API under `/api/{seg}/v1/` and its forms.

use std::sync::Arc;

use actix_web::{web, HttpRequest};

use super::errors::{ApiError, ErrorStyle, ModuleError};
use super::{form, memento, reports, Form, Module, ModuleInfo};

/// What the generic handlers know of the module they serve (app data of the module's routes).
pub struct ModuleContext {
    /// The module.
    pub module: Arc<dyn Module>,
    /// Its identity.
    pub info: &'static ModuleInfo,
    /// Its error style.
    pub style: ErrorStyle,
}

impl ModuleContext {
    /// A context for `module`.
    pub fn new(module: Arc<dyn Module>) -> Self {
        ModuleContext {
            info: module.info(),
            style: module.error_style().clone(),
            module,
        }
    }

    /// `error` as this module writes it, for the request `req`.
    pub fn error(&self, req: &HttpRequest, error: ApiError) -> ModuleError {
        ModuleError {
            error,
            style: self.style.clone(),
            module: self.info.segment,
            instance: req.path().to_owned(),
        }
    }
}

/// A form route's app data: the module and which of its forms this is.
pub struct FormContext {
    /// The module.
    pub module: Arc<dyn Module>,
    /// The form.
    pub form: &'static Form,
}

/// Registers `/api/{seg}/v1/{memento,reports,reports/{id}}` and every form of the module.
pub fn configure(module: Arc<dyn Module>) -> impl FnOnce(&mut web::ServiceConfig) {
    move |cfg| {
        let info = module.info();
        let context = web::Data::new(ModuleContext::new(Arc::clone(&module)));
        cfg.service(
            web::scope(&format!("/api/{}/v1", info.segment))
                .app_data(context)
                .route("/memento", web::post().to(memento::create))
                .route("/reports", web::get().to(reports::list_pending))
                .route("/reports/{id}", web::get().to(reports::get_report)),
        );
        for form in info.forms {
            let context = web::Data::new(FormContext {
                module: Arc::clone(&module),
                form,
            });
            cfg.service(
                web::resource(form.path)
                    .app_data(context.clone())
                    .route(web::get().to(form::show))
                    .route(web::post().to(form::submit)),
            )
            .service(
                web::resource(format!("{}/sent", form.path))
                    .app_data(context)
                    .route(web::get().to(form::sent)),
            );
        }
    }
}
