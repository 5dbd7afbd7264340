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
//!
//! One report's way, from the module to the reporting system and back:
//!
//! ```
//! use meldewerk_fhir::beds::{self, BedCounts, BedOccupancyReport};
//! use meldewerk_fhir::answer::{self, Answer, Receipt, PDF};
//! use meldewerk_fhir::{check, Facility, RandomIds};
//!
//! let now = chrono::DateTime::parse_from_rfc3339("2026-11-24T14:30:00+01:00").unwrap();
//! let report = BedOccupancyReport {
//!     report_id: "BED-1".into(),
//!     report_date: None,
//!     location_id: "987654".into(),
//!     location: Facility { ik: Some("261101015".into()), ..Default::default() },
//!     beds: BedCounts { adults_occupied: 221, adults_operable: Some(250),
//!                       children_occupied: 37, children_operable: None },
//! };
//! // The module builds the bundle; the transport sends its JSON.
//! let body = beds::build(&report, &mut RandomIds, now).unwrap().to_json();
//!
//! // The reporting system checks it and answers with a receipt.
//! let received = check::check(&body).unwrap();
//! assert_eq!(received.notifier.location_id.as_deref(), Some("987654"));
//! let receipt = Receipt {
//!     bundle_id: received.bundle_id,
//!     notification_id: received.notification_id,
//!     content_type: PDF.into(),
//!     document: b"%PDF-1.7".to_vec(),
//! };
//! let ids = answer::AcceptedIds::draw(&mut RandomIds);
//! let reply = answer::accepted(&receipt, &ids, now).to_json();
//!
//! // The transport reads the answer.
//! let Answer::Accepted(read) = answer::read(&reply).unwrap() else { panic!("refused") };
//! assert_eq!(read.notification_id, "BED-1");
//! assert_eq!(read.content_type, "application/pdf");
//! ```

#![warn(missing_docs)]

pub mod answer;
pub mod beds;
pub mod check;
pub mod codes;
mod common;
pub mod hospital;
pub mod lab;
mod outline;
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
