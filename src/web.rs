//! What every HTTP handler may read of the running service: its settings for the web and
//! whether it takes traffic. Start-up fills them in; handlers read them as `web::Data`.

use std::sync::atomic::{AtomicBool, Ordering};

use meldewerk_xml::local_time::LocalZone;

/// Settings the HTTP handlers need.
pub struct WebSettings {
    /// Public base address, without a trailing slash.
    pub base_url: String,
    /// How long a magic link stays valid.
    pub token_lifetime: chrono::Duration,
    /// Largest accepted request body.
    pub max_body_bytes: usize,
    /// The people's time zone (`time_zone`).
    pub time_zone: LocalZone,
    /// This node's name (`node.name`).
    pub node: String,
}

/// Whether the service takes traffic (`/readyz`).
#[derive(Default)]
pub struct Readiness(AtomicBool);

impl Readiness {
    /// Whether the service is ready.
    pub fn is_ready(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    pub(crate) fn set(&self, ready: bool) {
        self.0.store(ready, Ordering::SeqCst)
    }
}
