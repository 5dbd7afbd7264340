//! FHIR R4 notifications shaped like those of DEMIS, the national infectious-disease reporting
//! system: typed resources ([`resources`]), builders from typed input for the three kinds of
//! bundle ([`lab`], [`hospital`], [`beds`]), the checks the reporting system makes on what it
//! receives ([`check`]), and its answer, built and read ([`answer`]).
//!
//! Every builder takes an [`IdSource`] for the resource ids and the time to stamp, so that a
//! caller gets fresh UUIDs ([`RandomIds`]) and tests get the same bundle every run
//! ([`SequentialIds`]). Nothing here is written by string concatenation: every bundle is a
//! value of the types in [`resources`], serialised by serde.
//!
//! The mapping from input fields to FHIR elements, and the code tables, are in
//! `docs/fhir-demis.md`.

#![warn(missing_docs)]

pub mod answer;
pub mod beds;
pub mod check;
pub mod codes;
mod common;
pub mod hospital;
pub mod lab;
mod person;
pub mod resources;

pub use common::{BuildError, Facility, PostalAddress, DEMIS_BASE};
pub use person::{
    BirthMonth, ContactPerson, NamedPerson, NotifiedPerson, PersonName, UnnamedPerson,
};

/// Where the logical ids of the resources of a bundle come from.
pub trait IdSource {
    /// The next id (a UUID in lower-case hyphenated form).
    fn next_id(&mut self) -> String;
}

/// Fresh random (version 4) UUIDs: what the service uses.
#[derive(Debug, Default, Clone, Copy)]
pub struct RandomIds;

impl IdSource for RandomIds {
    fn next_id(&mut self) -> String {
        uuid::Uuid::new_v4().to_string()
    }
}

/// UUID-shaped ids counted up from 1 (`00000000-0000-4000-8000-000000000001`, …), so that a
/// test builds the same bundle every run.
#[derive(Debug, Default, Clone)]
pub struct SequentialIds {
    next: u64,
}

impl SequentialIds {
    /// Ids counted from 1.
    pub fn new() -> Self {
        SequentialIds::default()
    }
}

impl IdSource for SequentialIds {
    fn next_id(&mut self) -> String {
        self.next += 1;
        format!("00000000-0000-4000-8000-{:012x}", self.next)
    }
}
