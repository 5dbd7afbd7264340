//! Periodic work that one node at a time does when several nodes share the store: each round
//! first asks the store for the lead ([`Store::lead`]), and an actor without it stands by.

use std::time::Duration;

use meldewerk_storage::{Store, StoreResult};

use crate::health::HealthHandle;

/// Whether this node leads `task` for its round due in `interval`, noted in the actor's health
/// (standing by while another node leads).
pub(crate) async fn lead(
    store: &dyn Store,
    health: &HealthHandle,
    task: &str,
    interval: Duration,
) -> StoreResult<bool> {
    let leads = store.lead(task, interval).await?;
    health.update(|h| h.standby = !leads);
    Ok(leads)
}
