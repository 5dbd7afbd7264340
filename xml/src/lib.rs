//! Typed models and writers for the XML messages meldewerk delivers.
//!
//! Currently XPersonenstand 26.11 (civil registry), see [`xpersonenstand`].

#![warn(missing_docs)]

pub mod xpersonenstand;
