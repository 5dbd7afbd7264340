//! Registration of a module's routes: the API under `/api/{module}/v1/`, its forms, and the
//! routes of the module's own ([`Module::api_routes`], [`Module::routes`]).

use std::sync::Arc;

use actix_web::{web, HttpRequest, HttpResponse, ResponseError};
use meldewerk_actors::MessageSigner;

use super::context::{FormContext, ModuleContext};
use super::errors::ApiError;
use super::{form, memento, reports, Module};

/// 405 in the module's error style, `Allow: POST`.
pub(crate) async fn only_post(req: HttpRequest, context: web::Data<ModuleContext>) -> HttpResponse {
    context
        .error(&req, ApiError::MethodNotAllowed("POST"))
        .error_response()
}

/// 405 in the module's error style, `Allow: GET`.
pub(crate) async fn only_get(req: HttpRequest, context: web::Data<ModuleContext>) -> HttpResponse {
    context
        .error(&req, ApiError::MethodNotAllowed("GET"))
        .error_response()
}

async fn no_such_endpoint(req: HttpRequest, context: web::Data<ModuleContext>) -> HttpResponse {
    context
        .error(&req, ApiError::NoSuchEndpoint)
        .error_response()
}

/// Registers `/api/{module}/v1/{memento,reports,reports/{id}}` and every form of the module, whose
/// messages `signer` signs.
pub fn configure(
    module: Arc<dyn Module>,
    signer: Arc<dyn MessageSigner>,
) -> impl FnOnce(&mut web::ServiceConfig) {
    move |cfg| {
        let info = module.info();
        let context = web::Data::new(ModuleContext::new(Arc::clone(&module), Arc::clone(&signer)));
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
                web::resource(form.sent_path())
                    .app_data(context)
                    .route(web::get().to(form::sent)),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use actix_web::{test, App, HttpResponse};
    use meldewerk_actors::{BuildError, BuiltMessage, MessageBuilder};
    use meldewerk_storage::{MessageSignature, Report};

    use super::*;
    use crate::module_layer::{Checked, Completed, Form, ModuleInfo, SignatureRule};

    static FORMS: [Form; 1] = [Form::new("/forms/own", "Eigenes", SignatureRule::Portal)];
    static INFO: ModuleInfo = ModuleInfo::new("own", &[], &FORMS, "xpersonenstand");

    /// A module with routes of its own.
    struct Own;

    struct NoMessages;

    impl MessageBuilder for NoMessages {
        fn build(&self, _: &Report) -> Result<BuiltMessage, BuildError> {
            Err(BuildError("none".into()))
        }
    }

    struct NoSigner;

    #[async_trait::async_trait]
    impl MessageSigner for NoSigner {
        async fn sign(&self, _: &Report, _: &[u8]) -> Result<Option<MessageSignature>, BuildError> {
            Ok(None)
        }
    }

    impl Module for Own {
        fn info(&self) -> &'static ModuleInfo {
            &INFO
        }

        fn checked_message(&self, _: Completed<'_>) -> Checked {
            Err(Vec::new())
        }

        fn messages(&self) -> Arc<dyn MessageBuilder> {
            Arc::new(NoMessages)
        }

        fn api_routes(&self, cfg: &mut web::ServiceConfig) {
            cfg.route(
                "/status/{id}",
                web::get().to(|context: web::Data<ModuleContext>| async move {
                    HttpResponse::Ok().body(format!("status of {}", context.info.module))
                }),
            );
        }

        fn routes(&self, cfg: &mut web::ServiceConfig, context: &web::Data<ModuleContext>) {
            cfg.service(
                web::resource("/own/")
                    .app_data(context.clone())
                    .route(
                        web::get().to(|context: web::Data<ModuleContext>| async move {
                            HttpResponse::Ok().body(format!("index of {}", context.info.module))
                        }),
                    ),
            );
        }
    }

    #[actix_web::test]
    async fn a_module_adds_routes_inside_and_outside_its_api_without_the_layer_knowing_it() {
        let app =
            test::init_service(App::new().configure(configure(Arc::new(Own), Arc::new(NoSigner))))
                .await;
        for (path, body) in [
            ("/api/own/v1/status/x-1", "status of own"),
            ("/own/", "index of own"),
        ] {
            let answer =
                test::call_service(&app, test::TestRequest::get().uri(path).to_request()).await;
            assert_eq!(answer.status(), 200, "{path}");
            assert_eq!(test::read_body(answer).await, body.as_bytes(), "{path}");
        }
        // The layer's own answers stay: an unknown path of the API in the module's style.
        let unknown = test::call_service(
            &app,
            test::TestRequest::get()
                .uri("/api/own/v1/nothing")
                .to_request(),
        )
        .await;
        assert_eq!(unknown.status(), 404);
    }
}
