//! A node's actor health for the other nodes on a shared store: published every few seconds
//! ([`meldewerk_storage::Store::publish_health`]), so that every node's dashboard shows every
//! node. A store that serves one node keeps nothing, and the call costs nothing there.

use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::WeakEngine;

/// How often the health is published: the node list is this much behind at most.
pub(crate) const PUBLISH_EVERY: Duration = Duration::from_secs(5);

/// Publishes the engine's health every [`PUBLISH_EVERY`] until the engine shuts down or is gone.
pub(crate) async fn publish_health(engine: WeakEngine) {
    loop {
        actix::clock::sleep(PUBLISH_EVERY).await;
        let Some(engine) = engine.upgrade() else {
            return;
        };
        if engine.inner.shutting_down.load(Ordering::SeqCst) {
            return;
        }
        let health = match serde_json::to_value(engine.health()) {
            Ok(health) => serde_json::json!({ "actors": health }),
            Err(e) => {
                tracing::warn!(error = %e, "actor health not published");
                continue;
            }
        };
        let store = std::sync::Arc::clone(&engine.inner.store);
        // The engine is not kept alive across the write.
        drop(engine);
        if let Err(e) = store.publish_health(health).await {
            tracing::debug!(error = %e, "actor health not published");
        }
    }
}
