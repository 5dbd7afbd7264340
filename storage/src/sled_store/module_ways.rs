//! What the store was told about each module's reports ([`crate::Store::pack_payloads`],
//! [`crate::Store::decided_at_once`]), shared by the store's engine and every engine reopened
//! after it.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

use crate::{Packing, ReportKey};

/// The ways of each module named; a module not named packs [`Packing::Small`] and has its
/// reports acknowledged later.
#[derive(Debug, Clone, Default)]
pub(crate) struct ModuleWays(Arc<RwLock<HashMap<String, Ways>>>);

/// How the store keeps one module's reports.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ways {
    /// How the payloads are packed.
    pub(super) packing: Packing,
    /// Whether an acknowledgement may look a report up by its message's UUID later (the
    /// `awaiting` tree): false for a module whose authority decides every report at once.
    pub(super) acknowledged_later: bool,
}

impl Default for Ways {
    fn default() -> Self {
        Ways {
            packing: Packing::default(),
            acknowledged_later: true,
        }
    }
}

impl ModuleWays {
    /// The ways of the report `key`'s module.
    pub(super) fn of(&self, key: &ReportKey) -> Ways {
        let modules = self.0.read().unwrap_or_else(PoisonError::into_inner);
        modules.get(&key.module).copied().unwrap_or_default()
    }

    /// Packs `module`'s payloads `packing`'s way from now on.
    pub(super) fn set_packing(&self, module: &str, packing: Packing) {
        self.change(module, |ways| ways.packing = packing);
    }

    /// Keeps no `awaiting` entries for `module`'s reports from now on.
    pub(super) fn set_decided_at_once(&self, module: &str) {
        self.change(module, |ways| ways.acknowledged_later = false);
    }

    fn change(&self, module: &str, change: impl FnOnce(&mut Ways)) {
        let mut modules = self.0.write().unwrap_or_else(PoisonError::into_inner);
        change(modules.entry(module.to_owned()).or_default());
    }
}
