//! The submit of a form whose authority decides at once ([`crate::module_layer::AtOnce`]).
//! What is under the id is read first, before any posted value is checked: a report in
//! delivery is waited for (a retry after a 202 may carry values no longer valid, and the report
//! may still succeed; different values are not sent, and an acceptance of the report in
//! delivery is not theirs), a successful one answers 409. Otherwise the certificate the report
//! needs is checked, then the report is dispatched and the submit waits, bounded, for the
//! engine to end it. Accepted: 302 to the module's success page. Refused by the authority: the
//! refused report is forgotten (its id is free again) and the form shown again. Failed
//! otherwise (attempts run out, discarded): the report stays, its id used, and a page says it
//! could not be delivered. Undecided when the wait ends: the report stays with the engine, and
//! the form posted again waits for it instead of dispatching a second one.

use std::sync::Arc;
use std::time::Duration;

use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use meldewerk_actors::{Engine, Watch};
use meldewerk_storage::{Bsnr, Environment, Report, ReportKey, ReportStatus, Store, StoreError};
use serde_json::Value;

use super::render::message_page;
use crate::certificates::{client_tls, ClientTlsError};
use crate::crypto::MasterKey;
use crate::module_layer::dispatch::{dispatch_watched, Awaited};
use crate::telemetry::log_str;

/// How the submit ends.
pub(super) enum Decided {
    /// The authority accepted the report: 302 to the module's success page.
    Accepted,
    /// This answer, as it is: a page of its own.
    Answer(HttpResponse),
    /// The form again (400), every value kept, with this problem above it: the authority
    /// refused the report, or the report cannot be sent at all. No report exists.
    Refused(String),
    /// The form again (202), every value kept, with a note that the report is still being
    /// sent: posting it again waits for that report.
    StillSending,
}

/// The environment in the words of the form.
fn environment_words(environment: Environment) -> &'static str {
    match environment {
        Environment::Test => "das Testsystem",
        Environment::Production => "das Produktivsystem",
    }
}

/// Why the certificate of `bsnr` for `environment` cannot send a report, in the end user's
/// words; `Ok(None)` when it can. `Err` with the page to answer when the store cannot be read.
/// Nothing of the certificate is logged or shown beyond site and environment.
pub(super) async fn certificate_problem(
    store: &dyn Store,
    master: &MasterKey,
    bsnr: &Bsnr,
    environment: Environment,
) -> Result<Option<String>, HttpResponse> {
    // Only whether a configuration can be made is asked here; no server is trusted with it.
    let roots = Arc::new(rustls::RootCertStore::empty());
    let site = bsnr.as_str();
    let system = environment_words(environment);
    let problem = match client_tls(store, master, bsnr, environment, roots).await {
        Ok(_) => return Ok(None),
        Err(ClientTlsError::Missing(_)) => format!(
            "Für die meldende Einrichtung (BSNR {site}) ist für {system} des Meldesystems kein \
             Zertifikat hinterlegt. Ohne Zertifikat wird nichts gesendet; bitte wenden Sie sich \
             an den Betrieb des Portals."
        ),
        Err(ClientTlsError::Expired { .. }) => format!(
            "Das Zertifikat der meldenden Einrichtung (BSNR {site}) für {system} des \
             Meldesystems ist abgelaufen. Ohne gültiges Zertifikat wird nichts gesendet; bitte \
             wenden Sie sich an den Betrieb des Portals."
        ),
        Err(ClientTlsError::Unusable { reason, .. }) => {
            tracing::warn!(bsnr = %site, %environment, %reason, "a deposited certificate is unusable");
            format!(
                "Das Zertifikat der meldenden Einrichtung (BSNR {site}) für {system} des \
                 Meldesystems ist nicht verwendbar. Es wird nichts gesendet; bitte wenden Sie \
                 sich an den Betrieb des Portals."
            )
        }
        Err(ClientTlsError::Store(e)) => return Err(unavailable(&e)),
    };
    Ok(Some(problem))
}

/// The page of a store that cannot be used: nothing was sent.
fn unavailable(error: &StoreError) -> HttpResponse {
    tracing::error!(error = %error, "the store failed during a submit");
    super::not_stored()
}

/// The page of a report id that has a successful report already.
fn already_reported() -> HttpResponse {
    message_page(
        StatusCode::CONFLICT,
        "Bereits gemeldet",
        "Unter dieser Meldungs-ID wurde bereits erfolgreich gemeldet. Eine Meldung kann nur \
         einmal gesendet werden; für eine neue Meldung fordern Sie bitte einen neuen Link an.",
    )
}

/// What the link of a report that failed while nobody waited for it opens. Refused by the
/// authority (the submit had stopped waiting, or the service stopped between the answer and
/// the removal): the report is forgotten now, so that its link opens the form again, with the
/// reason above it (`Ok(Some(reason))`). Failed otherwise (its delivery ran out of attempts, an
/// operator discarded it): `Err` with the page saying it could not be delivered, since it
/// stays. `Ok(None)` when the id has no failed report. `Err` also with the page of a store that
/// cannot be read.
pub(super) async fn refused_meanwhile(
    store: &dyn Store,
    key: &ReportKey,
) -> Result<Option<String>, HttpResponse> {
    let report = store.report(key).await.map_err(|e| unavailable(&e))?;
    let Some(report) = report.filter(|r| r.status == ReportStatus::Failure) else {
        return Ok(None);
    };
    // The store decides, in its transaction, whether this failure was the authority's refusal.
    if !store
        .forget_refused(key)
        .await
        .map_err(|e| unavailable(&e))?
    {
        return Err(undeliverable(StatusCode::OK));
    }
    Ok(Some(refusal(
        report
            .failure_reason
            .as_deref()
            .unwrap_or("ohne Angabe von Gründen"),
    )))
}

/// The page of a report that ended without the authority's decision (its delivery ran out of
/// attempts, an operator discarded it, its message could not be built). The authority may have
/// registered it, so the report and its id stay and nothing is sent again; the reason is the
/// engine's (naming endpoints and faults) and is for the operators, not shown here.
fn undeliverable(status: StatusCode) -> HttpResponse {
    message_page(
        status,
        "Nicht zugestellt",
        "Die Meldung konnte dem Meldesystem nicht zugestellt werden. Ob sie dort angekommen \
         ist, steht nicht fest; sie wird deshalb nicht erneut gesendet, und unter dieser \
         Meldungs-ID kann nicht noch einmal gemeldet werden. Bitte wenden Sie sich an den \
         Betrieb des Portals.",
    )
}

/// The page of a submit whose values differ from those of the report in delivery under its id,
/// which the authority accepted: the values posted now were not sent.
fn sent_differently() -> HttpResponse {
    message_page(
        StatusCode::CONFLICT,
        "Andere Meldung gesendet",
        "Unter dieser Meldungs-ID wurde bereits eine Meldung mit anderen Angaben gesendet, und \
         das Meldesystem hat sie angenommen. Die jetzt abgesendeten Angaben wurden nicht \
         gesendet; für eine neue Meldung fordern Sie bitte einen neuen Link an.",
    )
}

/// The problem above the form when the report in delivery was removed meanwhile (refused and
/// forgotten by another request): nothing of this submit was sent.
const GONE_MEANWHILE: &str = "Der Stand der Meldung hat sich inzwischen geändert; es wurde \
    nichts gesendet. Bitte prüfen Sie die Angaben und senden Sie das Formular erneut ab.";

/// What is under the id of a submit, read before any of the posted values is checked: a
/// retry may carry values no longer valid for a report whose delivery goes on all the same.
/// `Ok(false)`: nothing (or a refused report, forgotten now): check and dispatch. `Ok(true)`: a
/// report in delivery: wait for it ([`wait_for_delivery`]). `Err` with the page to answer: a
/// successful report (409), one that could not be delivered, a store that cannot be read.
pub(super) async fn in_delivery(store: &dyn Store, key: &ReportKey) -> Result<bool, HttpResponse> {
    let status = store
        .report_status(key)
        .await
        .map_err(|e| unavailable(&e))?;
    match status {
        None => Ok(false),
        Some(ReportStatus::Pending) => Ok(true),
        Some(ReportStatus::Success) => Err(already_reported()),
        Some(ReportStatus::Failure) => match store.forget_refused(key).await {
            Ok(true) => Ok(false),
            Ok(false) => Err(undeliverable(StatusCode::BAD_REQUEST)),
            Err(e) => Err(unavailable(&e)),
        },
    }
}

/// Waits up to `wait` for the report in delivery under `key` (a submit found it before its
/// checks: [`in_delivery`]), whose values the ones `posted` may differ from. Its outcome is
/// answered; an acceptance only when the values are the same, else the page saying that a
/// report with other values was sent.
pub(super) async fn wait_for_delivery(
    store: &dyn Store,
    engine: &Engine,
    wait: Duration,
    key: &ReportKey,
    posted: &Value,
) -> Decided {
    // Watched before the read: an end told meanwhile is not missed.
    let watch = engine.watch(key.clone());
    let existing = match store.report(key).await {
        Ok(Some(existing)) => existing,
        Ok(None) => return Decided::Refused(GONE_MEANWHILE.into()),
        Err(e) => return Decided::Answer(unavailable(&e)),
    };
    let same = existing.submission.as_ref() == Some(posted);
    let decided = match existing.status {
        ReportStatus::Pending => {
            tracing::info!(id = %log_str(&key.id), "submit again: waiting for the report in delivery");
            waited(store, key, watch, wait).await
        }
        // It ended between the two reads.
        ReportStatus::Success => Decided::Accepted,
        ReportStatus::Failure => {
            let reason = existing.failure_reason.unwrap_or_default();
            decided(store, key, Some(reason)).await
        }
    };
    adopted(decided, same)
}

/// `decided` for a submit that waited for a report it did not dispatch: an acceptance is its
/// own only when it posted the `same` values.
fn adopted(decided: Decided, same: bool) -> Decided {
    match decided {
        Decided::Accepted if !same => Decided::Answer(sent_differently()),
        other => other,
    }
}

/// The problem shown above the form of a refused report.
fn refusal(reason: &str) -> String {
    format!(
        "Das Meldesystem hat die Meldung abgelehnt: {reason}. Bitte korrigieren Sie die \
         Angaben und senden Sie die Meldung erneut ab."
    )
}

/// Dispatches `report` (or, for a report of its key already in delivery, waits for that one)
/// and waits up to `wait` for the authority's decision.
///
/// What is under the report's key decides: nothing, or a report refused earlier (which is
/// forgotten first), is dispatched; a report in delivery (a retry of a submit that stopped
/// waiting, or a concurrent one) is waited for, and the values posted now are not sent; a
/// successful report refuses the submit (double-report protection).
pub(super) async fn dispatch_and_wait(
    store: &dyn Store,
    engine: &Engine,
    wait: Duration,
    report: Report,
) -> Decided {
    let key = report.key.clone();
    // Twice at most: a refused report forgotten, or a concurrent dispatch found, sends the
    // loop round once more; a third turn would mean the store contradicts itself.
    for _ in 0..3 {
        // Watched before anything is read or dispatched: an end told meanwhile is not missed.
        let watch = engine.watch(key.clone());
        let existing = match store.report(&key).await {
            Ok(existing) => existing,
            Err(e) => return Decided::Answer(unavailable(&e)),
        };
        match existing.map(|r| r.status) {
            Some(ReportStatus::Success) => return Decided::Answer(already_reported()),
            // A concurrent submit of the same id got there first: wait for its report.
            Some(ReportStatus::Pending) => {
                drop(watch);
                return wait_for_delivery(
                    store,
                    engine,
                    wait,
                    &key,
                    report.submission.as_ref().unwrap_or(&Value::Null),
                )
                .await;
            }
            Some(ReportStatus::Failure) => match store.forget_refused(&key).await {
                Ok(true) => continue,
                Ok(false) => return Decided::Answer(undeliverable(StatusCode::BAD_REQUEST)),
                Err(e) => return Decided::Answer(unavailable(&e)),
            },
            None => {}
        }
        tracing::info!(
            user = %log_str(&key.owner),
            id = %log_str(&key.id),
            "dispatching the report; waiting for the authority's answer"
        );
        match dispatch_watched(store, engine, watch, report.clone(), wait).await {
            Ok(Awaited::Ended(finished)) => return decided(store, &key, finished.failure).await,
            Ok(Awaited::StillRunning) => return still_sending(&key),
            // Another submit of the same report got there first: wait for that one.
            Err(StoreError::Conflict(_)) => continue,
            Err(e) => return Decided::Answer(unavailable(&e)),
        }
    }
    Decided::Answer(unavailable(&StoreError::Corrupt(format!(
        "the report {} neither dispatches nor can be found",
        log_str(&key.to_string())
    ))))
}

/// Waits for the end `watch` tells, up to `wait`, and answers it ([`decided`]).
async fn waited(store: &dyn Store, key: &ReportKey, watch: Watch, wait: Duration) -> Decided {
    match watch.ended(wait).await {
        Some(finished) => decided(store, key, finished.failure).await,
        None => still_sending(key),
    }
}

/// The answer of a report still in delivery when the wait ended: it stays with the engine.
fn still_sending(key: &ReportKey) -> Decided {
    tracing::info!(id = %log_str(&key.id), "no answer within the wait; the report stays in delivery");
    Decided::StillSending
}

/// The answer of a report that ended (`failure`: its reason, if it failed). A report the authority refused is forgotten before the
/// form is shown again, so that no poll finds it and its id can be sent again; should that
/// fail, the next submit forgets it (reads answer 404 meanwhile, since only successful reports
/// of the module are results). A report that failed otherwise stays, and the submit answers
/// that it could not be delivered.
async fn decided(store: &dyn Store, key: &ReportKey, failure: Option<String>) -> Decided {
    let Some(reason) = failure else {
        return Decided::Accepted;
    };
    let refused = match store.forget_refused(key).await {
        Ok(forgotten) => forgotten,
        Err(e) => {
            tracing::error!(error = %e, "forgetting a refused report failed; the next submit does");
            // Whether the authority refused it is the report's to say.
            matches!(store.report(key).await, Ok(Some(r)) if r.refused_on_delivery())
        }
    };
    if refused {
        tracing::info!(id = %log_str(&key.id), "the authority refused the report");
        Decided::Refused(refusal(&reason))
    } else {
        tracing::warn!(id = %log_str(&key.id), "the report ended undelivered; it stays");
        Decided::Answer(undeliverable(StatusCode::BAD_REQUEST))
    }
}
