//! Dispatching a report and waiting, bounded, for the authority's decision: for a request that
//! must answer with it (a bed occupancy report sent without a form, a form of a reporting
//! system that decides at once). The delivery stays the engine's either way: retried,
//! deduplicated, ended by the one path that ends reports; the wait only listens for that end.

use std::time::Duration;

use meldewerk_actors::{BuiltMessage, Engine, MessageSigner, Watch};
use meldewerk_storage::{FinishedReport, PreparedMessage, Report, Store, StoreResult};

use crate::telemetry::log_str;

/// How far a report had come when [`dispatch_and_await_end`] stopped waiting.
#[derive(Debug)]
pub(crate) enum Awaited {
    /// The report ended (SUCCESS, or FAILURE with its reason) within the wait.
    Ended(FinishedReport),
    /// It had not ended when the wait was over: it goes on in the engine (the outbox keeps its
    /// job), and its result is read later.
    StillRunning,
}

/// Stores `report` with its delivery job (one transaction), hands the job to the engine and
/// waits at most `limit` for the report's end. The watch is registered before the dispatch, so
/// that no end can come first. `Err` when the report was not stored: `StoreError::Conflict` for
/// an id the owner has used in this module already, an unavailable store; nothing is delivered
/// then.
pub(crate) async fn dispatch_and_await_end(
    store: &dyn Store,
    engine: &Engine,
    report: Report,
    limit: Duration,
) -> StoreResult<Awaited> {
    let watch = engine.watch(report.key.clone());
    dispatch_watched(store, engine, watch, report, limit).await
}

/// [`dispatch_and_await_end`] with `watch` on the report's key registered already (by a caller
/// that read the store under it first, so that an end told since that read is not missed).
pub(crate) async fn dispatch_watched(
    store: &dyn Store,
    engine: &Engine,
    watch: Watch,
    report: Report,
    limit: Duration,
) -> StoreResult<Awaited> {
    let job = store.dispatch_report(report).await?;
    engine.queued(job);
    Ok(match watch.ended(limit).await {
        Some(finished) => Awaited::Ended(finished),
        None => Awaited::StillRunning,
    })
}

/// The message built at the check, signed by `signer` for `report`: dispatched with the report,
/// it is the one delivered, and the engine's first attempt only counts itself. Should signing
/// fail (a seal that cannot be opened), the report goes without it: the engine then builds and
/// signs again, and a failure there ends the report in FAILURE with its reason, which the
/// integrator reads in the result.
pub(crate) async fn signed_message(
    signer: &dyn MessageSigner,
    report: &Report,
    built: BuiltMessage,
) -> Option<PreparedMessage> {
    match signer.sign(report, &built.body).await {
        Ok(signature) => Some(built.signed(signature)),
        Err(e) => {
            tracing::warn!(
                report = %log_str(&report.key.to_string()),
                error = %e,
                "signing at dispatch failed; the engine signs again"
            );
            None
        }
    }
}
