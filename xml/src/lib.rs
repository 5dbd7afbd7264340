//! Typed models and writers for the XML messages meldewerk delivers.
//!
//! Currently XPersonenstand 26.11 (civil registry), see [`xpersonenstand`], with its code lists in
//! [`codelisten`]; the value formats
//! shared with the web layer's validation are in [`formate`]; the service's local time zone in
//! [`local_time`]. Incoming XJustiz court messages are read, and archived as ZIP, in [`xjustiz`].

#![warn(missing_docs)]

pub mod codelisten;
pub mod formate;
pub mod local_time;
pub mod xjustiz;
pub mod xpersonenstand;
