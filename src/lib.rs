//! meldewerk: JSON API, magic links, browser forms and operator API in front of the delivery
//! engine (`meldewerk-actors`), its transports and its store.

pub mod accounts;
pub mod api_docs;
pub mod auth;
pub mod certificates;
pub mod cli;
pub mod configuration;
pub mod crypto;
pub mod demis;
pub(crate) mod facilities;
pub mod forms;
pub mod fuzzing;
pub(crate) mod http_server;
pub mod mail;
pub(crate) mod mailbox_accounts;
pub mod metrics;
pub mod module_layer;
pub mod modules;
pub mod routes;
pub mod signing;
pub mod simulate;
pub mod startup;
pub mod telemetry;
mod tls;
pub mod tokens;
pub mod transports;
pub mod web;
pub mod xpersonenstand;
