//! The reporting modules. Each lives in its own folder with its request schema, validation, form
//! and message builder; what the civil-registry modules share is in [`civil_registry`].

pub mod birthnotice;
pub mod civil_registry;
pub mod errors;
pub mod fields;
