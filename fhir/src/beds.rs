//! The bed occupancy report (`ReportBundle` with `StatisticInformationBedOccupancy`), built
//! from the bedreport memento or direct submission, shaped like `BedOccupancyExample.json`.

use chrono::{DateTime, FixedOffset, NaiveDate};

use crate::common::*;
use crate::resources::*;
use crate::IdSource;

/// The questionnaire the bed counts answer.
const QUESTIONNAIRE: &str =
    "https://demis.rki.de/fhir/Questionnaire/StatisticQuestionsBedOccupancy";

/// Everything a bed occupancy report carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BedOccupancyReport {
    /// The report's id (`reportId`): the report's `NotificationId`.
    pub report_id: String,
    /// The report date (`dateOfReport`); the time of building when absent.
    pub report_date: Option<NaiveDate>,
    /// The hospital location's id (`StandortId`, 6 digits): `Composition.subject`.
    pub location_id: String,
    /// The hospital location: name (`Standortname`), IK (`IK_Nummer`), address, telephone.
    pub location: Facility,
    /// The bed counts (`numbers`).
    pub beds: BedCounts,
}

/// The bed counts (`numbers`); the occupied ones are required, the operable ones not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BedCounts {
    /// `erwachsenen_betten_belegt`.
    pub adults_occupied: u32,
    /// `erwachsenen_betten_betrieben`.
    pub adults_operable: Option<u32>,
    /// `kinder_betten_belegt`.
    pub children_occupied: u32,
    /// `kinder_betten_betrieben`.
    pub children_operable: Option<u32>,
}

/// The `linkId`s of the questionnaire, in the example's order, with the count each answers.
fn answers(beds: &BedCounts) -> [(&'static str, Option<u32>); 4] {
    [
        ("numberOperableBedsGeneralWardAdults", beds.adults_operable),
        (
            "numberOccupiedBedsGeneralWardAdults",
            Some(beds.adults_occupied),
        ),
        (
            "numberOperableBedsGeneralWardChildren",
            beds.children_operable,
        ),
        (
            "numberOccupiedBedsGeneralWardChildren",
            Some(beds.children_occupied),
        ),
    ]
}

/// The `linkId`s a report must answer.
pub(crate) const REQUIRED_LINK_IDS: [&str; 2] = [
    "numberOccupiedBedsGeneralWardAdults",
    "numberOccupiedBedsGeneralWardChildren",
];

/// Builds the report, ids from `ids`, stamped `now`.
pub fn build(
    input: &BedOccupancyReport,
    ids: &mut dyn IdSource,
    now: DateTime<FixedOffset>,
) -> Result<Bundle, BuildError> {
    if input.location_id.is_empty() {
        return Err(BuildError::Missing {
            field: "StandortId",
        });
    }
    let bundle_id = ids.next_id();
    let composition_id = ids.next_id();
    let (role, organization) = notifier(ids, &input.location, hospital_type());
    let response_id = ids.next_id();
    let response = QuestionnaireResponse {
        id: Some(response_id.clone()),
        meta: Some(Meta::profile(profile("StatisticInformationBedOccupancy"))),
        questionnaire: Some(QUESTIONNAIRE.into()),
        status: "completed".into(),
        subject: None,
        item: answers(&input.beds)
            .into_iter()
            .filter_map(|(link_id, count)| {
                count.map(|n| {
                    ResponseItem::answered(
                        link_id,
                        Answer {
                            value_integer: Some(i64::from(n)),
                            ..Default::default()
                        },
                    )
                })
            })
            .collect(),
    };
    let composition = Composition {
        id: Some(composition_id),
        meta: Some(Meta {
            last_updated: Some(instant(&now)),
            profile: vec![profile("ReportBedOccupancy")],
        }),
        extension: Vec::new(),
        identifier: notification_id(&input.report_id),
        status: "final".into(),
        kind: CodeableConcept::coded(Coding::new(LOINC, "80563-0", "Report")),
        category: vec![CodeableConcept::coded(Coding::new(
            "https://demis.rki.de/fhir/CodeSystem/reportCategory",
            "bedOccupancyReport",
            "Bettenbelegungsstatistik",
        ))],
        subject: Some(Reference::by_identifier(
            None,
            Identifier::new(INEK_STANDORT_ID, input.location_id.clone()),
        )),
        date: input
            .report_date
            .as_ref()
            .map_or_else(|| instant(&now), date),
        author: vec![Reference::to(
            "PractitionerRole",
            role.id.as_deref().unwrap_or_default(),
        )],
        title: "Bericht (Krankenhausbettenbelegungsstatistik)".into(),
        relates_to: Vec::new(),
        section: vec![Section {
            title: None,
            code: Some(CodeableConcept::coded(Coding::new(
                "https://demis.rki.de/fhir/CodeSystem/reportSection",
                "statisticInformationBedOccupancySection",
                "Abschnitt 'Statistische Informationen zur Krankenhausbettenbelegung'",
            ))),
            entry: vec![Reference::to("QuestionnaireResponse", &response_id)],
        }],
    };
    let mut bundle = document(
        ids,
        "ReportBundle",
        &now,
        vec![
            Resource::Composition(Box::new(composition)),
            Resource::Organization(Box::new(organization)),
            Resource::PractitionerRole(Box::new(role)),
            Resource::QuestionnaireResponse(Box::new(response)),
        ],
    );
    // The bed occupancy example, unlike the notifications, gives the bundle a logical id.
    bundle.id = Some(bundle_id);
    Ok(bundle)
}
