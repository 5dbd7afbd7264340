//! The form mechanics of every module: a form pre-filled from the memento, completed by the end
//! user, validated on the server in one pass (re-rendered with every value kept and every
//! problem at its input or its group), its message built and signed, and dispatched as a report
//! with that message and its outbox job in one transaction. Works without JavaScript: arrays get
//! one empty row and a "Weitere Zeile" button, optional sections fold in `<details>`.

mod at_once;
pub mod index;
mod render;
mod sent;
pub(crate) mod values;

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use chrono::Utc;
use meldewerk_actors::Engine;
use meldewerk_storage::{EndUserSignature, Report, ReportKey, Store, StoreError};
use serde_json::Value;

use super::context::FormContext;
use super::dispatch::signed_message;
use super::fields::Field;
use super::{mock, Completed, IdMember, LookUp, ModuleInfo, SignatureRule, Subject};
use crate::auth::SessionUser;
use crate::crypto::{MasterKey, UserKey};
use crate::telemetry::log_str;
use crate::tokens::open_memento;
use crate::web::WebSettings;
pub(crate) use render::{html_response, message_page};
use render::{render, FormView, Problems};
pub(crate) use sent::sent;
use values::{inputs, posted};

/// The note on the form of a report still being sent when the submit stopped waiting.
const STILL_SENDING: &str = "Die Meldung wird noch gesendet: das Meldesystem hat noch nicht \
    geantwortet. Sie wird nicht doppelt gesendet. Senden Sie das Formular in einigen Augenblicken \
    erneut ab, um das Ergebnis zu sehen; geänderte Angaben werden dabei nicht übernommen.";

/// Query of the form page: the memento.
#[derive(serde::Deserialize)]
pub struct FormQuery {
    /// The memento.
    pub m: Option<String>,
}

/// The page of a link whose memento does not open (400): for the forms and for a module's own
/// page before them.
pub(crate) fn invalid_link() -> HttpResponse {
    message_page(
        StatusCode::BAD_REQUEST,
        "Link ungültig",
        "Die Formulardaten dieses Links sind ungültig oder gehören zu einem anderen Zugang. \
         Bitte öffnen Sie den Link erneut oder fordern Sie einen neuen an.",
    )
}

/// The memento's content, opened with the session user's key; `None` unless it is a memento of
/// `module` (also for a page of the module's own before its forms, which checks the link with
/// it).
pub(crate) fn open_memento_of(
    master: &MasterKey,
    session: &SessionUser,
    module: &ModuleInfo,
    memento: &str,
) -> Option<Value> {
    let key = UserKey::unwrap(master, &session.user.memento_key).ok()?;
    open_memento(&key, module.module, memento).filter(|data| {
        // Reserved mock ids are refused at memento creation; checked again so that no report
        // under one can ever exist (its reads would always answer the mock).
        match module.report_id(data) {
            Some(id) => mock::outcome(module, id).is_none(),
            None => matches!(module.id, IdMember::Generated(_)),
        }
    })
}

/// The memento's content, opened with the session user's key; `None` unless it is a memento
/// this form takes (a memento of another module or report type opens only its own form).
fn open(
    master: &MasterKey,
    session: &SessionUser,
    context: &FormContext,
    memento: &str,
) -> Option<Value> {
    let data = open_memento_of(master, session, context.module.info(), memento)?;
    context.module.opens(context.form, &data).then_some(data)
}

/// `GET {form}?m=…`: the form, pre-filled; for a report already sent, a page saying so.
#[tracing::instrument(name = "form", skip_all, fields(form = context.form.path))]
pub(crate) async fn show(
    session: SessionUser,
    query: web::Query<FormQuery>,
    master: web::Data<MasterKey>,
    store: web::Data<Arc<dyn Store>>,
    context: web::Data<FormContext>,
    settings: web::Data<WebSettings>,
) -> HttpResponse {
    let memento = query.m.clone().unwrap_or_default();
    let Some(data) = open(&master, &session, &context, &memento) else {
        return invalid_link();
    };
    // A memento without the id of a module that generates it gets one now; the form carries it.
    let (id, generated) = match context.module.info().report_id(&data) {
        Some(id) => (id.to_owned(), false),
        None => (uuid::Uuid::new_v4().to_string(), true),
    };
    let mut problems = Problems::default();
    if context.module.info().at_once.is_some() {
        let key = ReportKey {
            owner: session.user.name.clone(),
            module: context.module.info().module.into(),
            id: id.clone(),
        };
        match at_once::refused_meanwhile(store.as_ref().as_ref(), &key).await {
            Ok(reason) => problems.general.extend(reason),
            Err(page) => return page,
        }
    }
    if let Some(page) = sent::already_sent(
        store.as_ref().as_ref(),
        &session,
        &context,
        settings.time_zone,
        &id,
    )
    .await
    {
        return page;
    }
    let fields: Vec<&'static Field> = context.form.fields(context.module.info().fields).collect();
    let inputs = inputs(&fields, &values::rows_in_data(&fields, &data));
    let view = FormView {
        form: context.form,
        values: values::prefilled(&inputs, &data, &settings.time_zone),
        inputs,
        memento: &memento,
        csrf: &session.session.csrf,
        id: &id,
        generated,
        sealed: session.user.seal.is_some(),
        problems,
        mandatory: &context.mandatory,
        signatory: String::new(),
        signed: false,
        notice: None,
    };
    html_response(StatusCode::OK, context.form.title, render(&view))
}

/// The id a submit is for, and whether the form made it: the memento's, or for a memento
/// without one (of a module whose id is generated) the UUID the form carried in `_id`. Anything
/// but a UUID there is refused, so that a post cannot name a report of its choosing.
fn submitted_id(
    info: &ModuleInfo,
    data: &Value,
    posted_form: &[(String, String)],
) -> Option<(String, bool)> {
    if let Some(id) = info.report_id(data) {
        return Some((id.to_owned(), false));
    }
    let carried = uuid::Uuid::parse_str(posted(posted_form, "_id")?).ok()?;
    Some((carried.hyphenated().to_string(), true))
}

/// `POST {form}`: validate everything, then store the report (`PENDING`) and its delivery job in
/// one transaction and hand over to the engine. Invalid input re-renders the form with every
/// problem listed and every value kept.
#[tracing::instrument(name = "form_submit", skip_all, fields(form = context.form.path))]
pub(crate) async fn submit(
    session: SessionUser,
    form: web::Form<Vec<(String, String)>>,
    master: web::Data<MasterKey>,
    store: web::Data<Arc<dyn Store>>,
    engine: web::Data<Engine>,
    context: web::Data<FormContext>,
    settings: web::Data<WebSettings>,
) -> HttpResponse {
    let posted_form = form.into_inner();
    if posted(&posted_form, "csrf") != Some(session.session.csrf.as_str()) {
        return message_page(
            StatusCode::FORBIDDEN,
            "Sitzung abgelaufen",
            "Das Formular gehört nicht zu Ihrer aktuellen Sitzung. Bitte öffnen Sie den Link erneut.",
        );
    }
    let memento = posted(&posted_form, "m").unwrap_or_default().to_string();
    let Some(data) = open(&master, &session, &context, &memento) else {
        return invalid_link();
    };
    let form = context.form;
    let info = context.module.info();
    let Some((id, generated)) = submitted_id(info, &data, &posted_form) else {
        return invalid_link();
    };
    let client_reference = info
        .echoes_client_reference
        .then(|| data["clientReference"].as_str().map(str::to_string))
        .flatten();
    let fields: Vec<&'static Field> = form.fields(info.fields).collect();
    let inputs = inputs(&fields, &values::rows_in_post(&fields, &posted_form));
    // "Weitere Zeile" asks for one more row of an array: the form again, nothing checked yet.
    let more_rows = posted(&posted_form, "_zeile").is_some();
    let key = ReportKey {
        owner: session.user.name.clone(),
        module: info.module.into(),
        id: id.clone(),
    };
    // A module answering at once looks at what is under the id before checking anything.
    let in_delivery = match info.at_once.is_some() && !more_rows {
        true => match at_once::in_delivery(store.as_ref().as_ref(), &key).await {
            Ok(in_delivery) => in_delivery,
            Err(page) => return page,
        },
        false => false,
    };
    // The checks below only decide whether a new report is dispatched.
    let checking = !more_rows && !in_delivery;

    let (mut object, format_problems) = values::read(&inputs, &posted_form, &settings.time_zone);
    if let IdMember::Generated(member) = info.id {
        // The module's content carries its id under the contract's name (the notification
        // names itself by it), also when the form made it.
        object.insert(member.to_owned(), Value::String(id.clone()));
    }
    let mut problems = Problems {
        at_input: format_problems.into_iter().collect(),
        ..Problems::default()
    };
    if values::too_many_rows(&fields, &posted_form) {
        problems.general.push(format!(
            "Eine Liste hat mehr als {} Einträge; bitte kürzen.",
            super::fields::MAX_ROWS
        ));
    }
    // Values refused while reading the post are left out: the checks below see the rest, so
    // that one submit reports every problem. The look-up runs for a report in delivery too:
    // what it adds is part of the content compared with that report's.
    if !more_rows {
        let look_up = LookUp {
            store: store.as_ref().as_ref(),
            user: &session.user,
            id: &id,
        };
        let subject = Subject::Submitted {
            form,
            content: &mut object,
        };
        match context.module.look_up(look_up, subject).await {
            Ok(found) => {
                for problem in found {
                    problems.place(&inputs, problem.path.as_deref(), problem.message);
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "the checks in the store failed");
                return not_stored();
            }
        }
    }
    let content = Value::Object(object);
    let mut built = None;
    if checking {
        let report = Completed {
            form,
            id: &id,
            content: &content,
        };
        match context.module.checked_message(report) {
            Ok(message) => built = Some(message),
            Err(found) => {
                for problem in found {
                    problems.place(&inputs, problem.path.as_deref(), problem.message);
                }
            }
        }
    }
    let sealed = session.user.seal.is_some();
    let signatory = posted(&posted_form, "signatur.name")
        .unwrap_or_default()
        .trim()
        .to_string();
    let signed = posted(&posted_form, "signatur.bestaetigt") == Some("true");
    let needs_signature = form.signature == SignatureRule::SealOrEndUser && !sealed;
    if needs_signature && checking && (signatory.is_empty() || !signed) {
        problems.signature = Some(
            "Signatur: Bitte geben Sie Ihren Namen an und bestätigen Sie die Unterschrift. \
             Ohne Siegel oder Signatur kann die Meldung nicht versendet werden."
                .into(),
        );
    }
    // A module answering at once tells the outcome by the status alone: 400 for a form shown
    // again because of a problem, whatever it is.
    let refused_status = if info.at_once.is_some() {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::UNPROCESSABLE_ENTITY
    };
    let again = |status: StatusCode, problems: Problems, notice: Option<&'static str>| {
        let view = FormView {
            form,
            values: values::as_posted(&inputs, &posted_form),
            inputs: inputs.clone(),
            memento: &memento,
            csrf: &session.session.csrf,
            id: &id,
            generated,
            sealed,
            problems,
            mandatory: &context.mandatory,
            signatory: signatory.clone(),
            signed,
            notice,
        };
        html_response(status, form.title, render(&view))
    };
    let at_once_answer = |decided: at_once::Decided, success: &str| match decided {
        at_once::Decided::Accepted => HttpResponse::Found()
            .insert_header(("Location", success))
            .finish(),
        at_once::Decided::Answer(answer) => answer,
        at_once::Decided::Refused(reason) => {
            let problems = Problems {
                general: vec![reason],
                ..Problems::default()
            };
            again(StatusCode::BAD_REQUEST, problems, None)
        }
        at_once::Decided::StillSending => again(
            StatusCode::ACCEPTED,
            Problems::default(),
            Some(STILL_SENDING),
        ),
    };
    if let (Some(at_once), true) = (info.at_once, in_delivery) {
        let wait = context.module.answer_wait();
        let store = store.as_ref().as_ref();
        let decided = at_once::wait_for_delivery(store, &engine, wait, &key, &content).await;
        return at_once_answer(decided, at_once.success);
    }
    if info.at_once.is_some() && checking && problems.is_empty() {
        if let Some((bsnr, environment)) = context.module.required_certificate(&content) {
            match at_once::certificate_problem(store.as_ref().as_ref(), &master, &bsnr, environment)
                .await
            {
                Ok(None) => {}
                Ok(Some(problem)) => problems.general.push(problem),
                Err(unavailable) => return unavailable,
            }
        }
    }
    if more_rows || !problems.is_empty() {
        let status = if problems.is_empty() {
            StatusCode::OK
        } else {
            refused_status
        };
        return again(status, problems, None);
    }

    let now = Utc::now();
    let result_members = context.module.result_members(form, &content);
    let mut report = Report::new_pending(
        key,
        content,
        client_reference,
        uuid::Uuid::new_v4().to_string(),
        now,
    );
    report.result_members = result_members;
    report.end_user_signature = needs_signature.then(|| EndUserSignature {
        name: signatory.clone(),
        signed_at: now,
    });
    if let Some(built) = built {
        report.message = signed_message(context.signer.as_ref(), &report, built).await;
    }
    if let Err(e) = context
        .module
        .before_dispatch(store.as_ref().as_ref(), &report)
        .await
    {
        tracing::error!(error = %e, "recording what the module keeps beside the report failed");
        return not_stored();
    }
    if let Some(at_once) = info.at_once {
        let wait = context.module.answer_wait();
        let store = store.as_ref().as_ref();
        let decided = at_once::dispatch_and_wait(store, &engine, wait, report).await;
        return at_once_answer(decided, at_once.success);
    }
    match store.dispatch_report(report).await {
        Ok(job) => {
            engine.queued(job);
            tracing::info!(
                user = %log_str(&session.user.name),
                id = %log_str(&id),
                "report dispatched"
            );
            let location = crate::routes::magic_link::append_query(&form.sent_path(), "id", &id);
            HttpResponse::SeeOther()
                .insert_header(("Location", location))
                .finish()
        }
        Err(StoreError::Conflict(_)) => context
            .module
            .duplicate_answer(&id, form.path)
            .unwrap_or_else(|| {
                message_page(
                    StatusCode::CONFLICT,
                    "Bereits abgesendet",
                    "Diese Meldung wurde bereits abgesendet. Eine Meldung kann nur einmal \
                     versendet werden.",
                )
            }),
        Err(e) => {
            tracing::error!(error = %e, "storing the report failed");
            not_stored()
        }
    }
}

/// The page of a submit that stored nothing because of a fault (503): the end user may try again.
fn not_stored() -> HttpResponse {
    message_page(
        StatusCode::SERVICE_UNAVAILABLE,
        "Nicht abgesendet",
        "Die Meldung konnte wegen einer Störung nicht gespeichert werden und wurde nicht \
         abgesendet. Bitte versuchen Sie es in einigen Minuten erneut.",
    )
}
