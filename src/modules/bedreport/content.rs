//! A bed occupancy report's content: the typed model of the request (without `reportId`), the
//! rule of what a report must give (one rule for the form and the direct submission), and the
//! FHIR `ReportBundle` built from it.

use chrono::{NaiveDate, Utc};
use meldewerk_actors::{BuildError, BuiltMessage, MessageBuilder};
use meldewerk_fhir::beds::{self, BedCounts, BedOccupancyReport};
use meldewerk_fhir::{Facility, PostalAddress, RandomIds};
use meldewerk_storage::Report;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::fields::{DETAILS, OCCUPIED};
use crate::demis;
use crate::module_layer::fields::lookup;

/// The request of spec/02 §2.5 without `reportId`, member names as the contract spells them.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Bettenbelegung {
    #[serde(
        rename = "dateOfReport",
        skip_serializing_if = "Option::is_none",
        default
    )]
    date_of_report: Option<NaiveDate>,
    #[serde(
        rename = "StandortId",
        skip_serializing_if = "Option::is_none",
        default
    )]
    standort_id: Option<String>,
    #[serde(rename = "IK_Nummer", skip_serializing_if = "Option::is_none", default)]
    ik_nummer: Option<String>,
    #[serde(
        rename = "Standortname",
        skip_serializing_if = "Option::is_none",
        default
    )]
    standortname: Option<String>,
    #[serde(rename = "Strasse", skip_serializing_if = "Option::is_none", default)]
    strasse: Option<String>,
    #[serde(
        rename = "Hausnummer",
        skip_serializing_if = "Option::is_none",
        default
    )]
    hausnummer: Option<String>,
    #[serde(rename = "PLZ", skip_serializing_if = "Option::is_none", default)]
    plz: Option<String>,
    #[serde(rename = "Ort", skip_serializing_if = "Option::is_none", default)]
    ort: Option<String>,
    #[serde(rename = "Telefon", skip_serializing_if = "Option::is_none", default)]
    telefon: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    numbers: Option<Numbers>,
}

/// `numbers`: the bed counts.
#[derive(Debug, Default, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Numbers {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    kinder_betten_belegt: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    kinder_betten_betrieben: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    erwachsenen_betten_belegt: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    erwachsenen_betten_betrieben: Option<u32>,
}

/// A value a report must give and does not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Missing {
    /// Dotted path of the member (`numbers` when the whole object is missing).
    pub(crate) path: &'static str,
    /// Whether it was given as an empty or blank text (else absent or null).
    pub(crate) blank: bool,
}

/// What `content` (a request or a completed form, already checked member by member) lacks of
/// what every report must give: the hospital details ([`DETAILS`]) and the occupied-bed counts
/// ([`OCCUPIED`]); `numbers` once when the whole object is missing. The operated-bed counts and
/// the phone are optional; `dateOfReport` defaults to the day of building.
pub(crate) fn missing(content: &Value) -> Vec<Missing> {
    let absent = |path: &str| lookup(content, path).is_none_or(Value::is_null);
    let blank = |path: &str| {
        lookup(content, path)
            .and_then(Value::as_str)
            .is_some_and(|text| text.trim().is_empty())
    };
    let mut found = Vec::new();
    for path in DETAILS {
        if absent(path) || blank(path) {
            found.push(Missing {
                path,
                blank: blank(path),
            });
        }
    }
    match lookup(content, "numbers") {
        None | Some(Value::Null) => found.push(Missing {
            path: "numbers",
            blank: false,
        }),
        Some(Value::Object(_)) => found.extend(
            OCCUPIED
                .into_iter()
                .filter(|path| absent(path))
                .map(|path| Missing { path, blank: false }),
        ),
        // Not an object: the field table has said so; there are no counts to look for.
        Some(_) => {}
    }
    found
}

impl Bettenbelegung {
    /// The content out of checked JSON; `Err` names what does not fit the model.
    pub(crate) fn read(content: &Value) -> Result<Self, String> {
        serde_json::from_value(content.clone()).map_err(|e| e.to_string())
    }

    /// The builder's input for report `report_id`; `Err` names a value every report needs that
    /// this one lacks (a report stored by an older version, say: [`missing`] keeps them out).
    pub(crate) fn report(&self, report_id: &str) -> Result<BedOccupancyReport, String> {
        let numbers = self.numbers.unwrap_or_default();
        let occupied = |count: Option<u32>, path: &str| count.ok_or(format!("{path} is missing"));
        Ok(BedOccupancyReport {
            report_id: report_id.to_owned(),
            report_date: self.date_of_report,
            location_id: self.standort_id.clone().ok_or("StandortId is missing")?,
            location: Facility {
                name: self.standortname.clone(),
                bsnr: None,
                ik: self.ik_nummer.clone(),
                address: Some(PostalAddress {
                    street: self.strasse.clone(),
                    house_number: self.hausnummer.clone(),
                    postal_code: self.plz.clone(),
                    city: self.ort.clone(),
                    country: None,
                }),
                phone: self.telefon.clone(),
                email: None,
            },
            beds: BedCounts {
                adults_occupied: occupied(numbers.erwachsenen_betten_belegt, OCCUPIED[0])?,
                adults_operable: numbers.erwachsenen_betten_betrieben,
                children_occupied: occupied(numbers.kinder_betten_belegt, OCCUPIED[1])?,
                children_operable: numbers.kinder_betten_betrieben,
            },
        })
    }
}

/// The `ReportBundle` of `report` as the message the transport delivers ([`demis::message`]).
pub(crate) fn message(report: &BedOccupancyReport) -> Result<BuiltMessage, String> {
    let bundle = beds::build(report, &mut RandomIds, Utc::now().fixed_offset())
        .map_err(|e| e.to_string())?;
    Ok(demis::message(&bundle))
}

/// The engine's builder of bed occupancy reports stored without their message.
pub(crate) struct Builder;

impl MessageBuilder for Builder {
    fn build(&self, report: &Report) -> Result<BuiltMessage, BuildError> {
        let stored: Value = crate::module_layer::submission(report)?;
        let content = Bettenbelegung::read(&stored)
            .map_err(|e| BuildError(format!("unreadable submission: {e}")))?;
        let input = content
            .report(&report.key.id)
            .map_err(|e| BuildError(format!("the report cannot be built: {e}")))?;
        message(&input).map_err(|e| BuildError(format!("the report cannot be built: {e}")))
    }
}
