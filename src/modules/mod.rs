//! The reporting modules, one folder each, holding only what is their own; the layer around them
//! is [`crate::module_layer`].

mod birthnotice;
mod deathnotice;

use crate::module_layer::BuildModule;

/// Every module the service runs. Adding a module is its folder plus one line here.
pub const MODULES: &[BuildModule] = &[birthnotice::build, deathnotice::build];
