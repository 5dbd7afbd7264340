//! Registration of a module's routes: the API under `/api/{module}/v1/`, its forms, and the
//! routes of the module's own ([`Module::api_routes`], [`Module::routes`]).

use std::sync::Arc;

use actix_web::{web, HttpRequest, HttpResponse, ResponseError};
use meldewerk_actors::MessageSigner;

use super::errors::{ApiError, ErrorStyle, ModuleError};
use super::fields::FieldIndex;
use super::{form, memento, reports, Form, Module, ModuleInfo};

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
}

impl ModuleContext {
    /// A context for `module`.
    pub fn new(module: Arc<dyn Module>) -> Self {
        ModuleContext {
            info: module.info(),
            style: module.error_style().clone(),
            fields: FieldIndex::new(module.info().fields),
            module,
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

async fn only_post(req: HttpRequest, context: web::Data<ModuleContext>) -> HttpResponse {
    context
        .error(&req, ApiError::MethodNotAllowed("POST"))
        .error_response()
}

async fn only_get(req: HttpRequest, context: web::Data<ModuleContext>) -> HttpResponse {
    context
        .error(&req, ApiError::MethodNotAllowed("GET"))
        .error_response()
}

async fn no_such_endpoint(req: HttpRequest, context: web::Data<ModuleContext>) -> HttpResponse {
    context
        .error(&req, ApiError::NoSuchEndpoint)
        .error_response()
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

/// Registers `/api/{seg}/v1/{memento,reports,reports/{id}}` and every form of the module, whose
/// messages `signer` signs.
pub fn configure(
    module: Arc<dyn Module>,
    signer: Arc<dyn MessageSigner>,
) -> impl FnOnce(&mut web::ServiceConfig) {
    move |cfg| {
        let info = module.info();
        let context = web::Data::new(ModuleContext::new(Arc::clone(&module)));
        module.routes(cfg, &context);
        let own = Arc::clone(&module);
        cfg.service(
            web::scope(&format!("/api/{}/v1", info.module))
                .app_data(context)
                .configure(|cfg| own.api_routes(cfg))
                .service(
                    web::resource("/memento")
                        .route(web::post().to(memento::create))
                        .default_service(web::to(only_post)),
                )
                .service(
                    web::resource("/reports")
                        .route(web::get().to(reports::list_pending))
                        .default_service(web::to(only_get)),
                )
                .service(
                    web::resource("/reports/{id}")
                        .route(web::get().to(reports::get_report))
                        .default_service(web::to(only_get)),
                )
                // Unknown paths answer in the module's own error style, like its other errors.
                .default_service(web::to(no_such_endpoint)),
        );
        for form in info.forms {
            let context = web::Data::new(FormContext {
                module: Arc::clone(&module),
                form,
                signer: Arc::clone(&signer),
                mandatory: module.mandatory_paths(form),
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
