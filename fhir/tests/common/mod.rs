//! Inputs for the builders, and what the tests share: a fixed time and the DEMIS examples.
#![allow(dead_code)] // each test binary uses a different subset

use std::path::PathBuf;

use chrono::{DateTime, FixedOffset, NaiveDate};
use meldewerk_fhir::beds::{BedCounts, BedOccupancyReport};
use meldewerk_fhir::codes::{Disease, Gender, Interpretation};
use meldewerk_fhir::hospital::*;
use meldewerk_fhir::lab::{Finding, LaboratoryNotification, SpecimenDetails};
use meldewerk_fhir::resources::{Bundle, Resource};
use meldewerk_fhir::*;
use serde_json::Value;

pub fn now() -> DateTime<FixedOffset> {
    DateTime::parse_from_rfc3339("2026-11-24T14:30:05.250+01:00").unwrap()
}

pub fn day(text: &str) -> NaiveDate {
    NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap()
}

fn s(text: &str) -> Option<String> {
    Some(text.into())
}

/// The folder of the DEMIS examples, beside the repository.
pub fn reference_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/reference/demis");
    assert!(dir.is_dir(), "{} is missing", dir.display());
    dir
}

pub fn example(name: &str) -> Value {
    let text = std::fs::read(reference_dir().join(name)).unwrap();
    serde_json::from_slice(&text).unwrap()
}

pub fn notifier() -> Facility {
    Facility {
        name: s("Klinikum Mitte, Labor"),
        bsnr: s("123456789"),
        ik: s("261101015"),
        address: Some(PostalAddress {
            street: s("Chausseestraße 12"),
            postal_code: s("10115"),
            city: s("Berlin"),
            country: s("20422"),
            ..Default::default()
        }),
        phone: s("030 1234567"),
        email: s("labor@klinikum-mitte.example"),
    }
}

pub fn named_patient() -> NamedPerson {
    NamedPerson {
        name: PersonName {
            given: s("Maxime"),
            family: s("Mustermann"),
        },
        gender: Some(Gender::Female),
        birth_date: Some(day("1950-02-11")),
        address: Some(PostalAddress {
            street: s("Teststraße 123"),
            postal_code: s("13055"),
            city: s("Berlin"),
            country: s("20422"),
            ..Default::default()
        }),
        phone: s("030 7654321"),
        email: s("maxime@example.org"),
    }
}

pub fn unnamed_patient() -> UnnamedPerson {
    UnnamedPerson {
        gender: Some(Gender::Diverse),
        birth_month: BirthMonth::parse("1950-02"),
        postal_code: s("13055"),
        country: s("20422"),
    }
}

/// A laboratory notification of `disease` with the first codes of its table.
pub fn laboratory(disease: Disease, patient: NotifiedPerson) -> LaboratoryNotification {
    let codes = disease.codes();
    LaboratoryNotification {
        report_id: "LAB-2026-000123".into(),
        disease,
        report_date: Some(day("2026-11-24")),
        follows_up: None,
        patient,
        notifier: notifier(),
        notifier_person: Some(ContactPerson {
            title: s("Dr."),
            name: PersonName {
                given: s("Anna"),
                family: s("Ansprechpartner"),
            },
            phone: s("030 1234568"),
            email: None,
        }),
        submitter: Some(Facility {
            name: s("Einsendepraxis ABC"),
            address: Some(PostalAddress {
                street: s("Teststr. 123"),
                postal_code: s("13589"),
                city: s("Berlin"),
                ..Default::default()
            }),
            phone: s("030 1358967890"),
            ..Default::default()
        }),
        findings: vec![Finding {
            test: codes.tests[0].code.into(),
            method: codes.methods[0].code.into(),
            interpretation: Interpretation::Positive,
            note: s("Nette Zusatzinformation"),
        }],
        specimen: SpecimenDetails {
            material: codes.materials[0].code.into(),
            collected: Some(DateTime::parse_from_rfc3339("2026-11-24T09:50:00+01:00").unwrap()),
            received: Some(DateTime::parse_from_rfc3339("2026-11-24T11:40:00+01:00").unwrap()),
            note: None,
        },
        conclusion: s("SARS-CoV-2 nachgewiesen"),
    }
}

pub fn hospitalisation() -> HospitalisationNotification {
    HospitalisationNotification {
        report_id: "2d66a331-102a-4047-b666-1b2f18ee955e".into(),
        report_date: Some(day("2026-11-24")),
        disease: HospitalDisease::Covid19,
        patient: NamedPerson {
            address: Some(PostalAddress {
                street: s("Berthastraße"),
                house_number: s("123"),
                postal_code: s("12345"),
                city: s("Betroffenenstadt"),
                country: s("20422"),
            }),
            ..named_patient()
        },
        medical: MedicalInformation {
            onset: Some(day("2026-11-18")),
            diagnosed: Some(day("2026-11-20")),
            symptoms: vec![Symptom::Fieber, Symptom::Husten, Symptom::Pneumonie],
            note: s("Textueller Hinweis"),
        },
        clinical: ClinicalInformation {
            hospitalised: Some(YesNo::Ja),
            hospitalisation: Some(Hospitalisation {
                admitted: day("2026-11-21"),
                discharged: None,
                department: Some(Department::InnereMedizin),
                intensive_care_from: Some(day("2026-11-23")),
                note: s("wichtige Zusatzinformation"),
            }),
            deceased: Some(YesNo::Nein),
            date_of_death: None,
        },
        notifier: Facility {
            name: s("Klinikum Mitte"),
            address: Some(PostalAddress {
                street: s("Krankenhausstraße"),
                house_number: s("1"),
                postal_code: s("21481"),
                city: s("Buchhorst"),
                country: s("20422"),
            }),
            email: None,
            ..notifier()
        },
        physician: Some(ContactPerson {
            title: s("Dr."),
            name: PersonName {
                given: s("Anna Beate"),
                family: s("Ansprechpartner"),
            },
            phone: s("01234567"),
            email: None,
        }),
        follows_up: None,
    }
}

pub fn bed_occupancy() -> BedOccupancyReport {
    BedOccupancyReport {
        report_id: "BED-2026-11-24".into(),
        report_date: Some(day("2026-11-24")),
        location_id: "987654".into(),
        location: Facility {
            name: s("Sankt Gertrauden-Krankenhaus GmbH"),
            ik: s("261101015"),
            address: Some(PostalAddress {
                street: s("Paretzer Straße"),
                house_number: s("12"),
                postal_code: s("10713"),
                city: s("Berlin"),
                country: s("20422"),
            }),
            phone: s("309876543210"),
            ..Default::default()
        },
        beds: BedCounts {
            adults_occupied: 221,
            adults_operable: Some(250),
            children_occupied: 37,
            children_operable: Some(50),
        },
    }
}

pub fn build_laboratory(input: &LaboratoryNotification) -> Bundle {
    lab::build(input, &mut SequentialIds::new(), now()).unwrap()
}

/// The bundle as generic JSON, for asserting on paths.
pub fn json(bundle: &Bundle) -> Value {
    serde_json::from_slice(&bundle.to_json()).unwrap()
}

/// The resource types of the entries, in order.
pub fn types(bundle: &Bundle) -> Vec<&'static str> {
    bundle.resources().map(|r| r.type_name().unwrap()).collect()
}

/// The entry resources of `type_name`, in order, as JSON.
pub fn resources_of<'a>(bundle: &'a Value, type_name: &str) -> Vec<&'a Value> {
    bundle["entry"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["resource"])
        .filter(|r| r["resourceType"] == type_name)
        .collect()
}

/// The first entry resource of `type_name`, as JSON.
pub fn resource(bundle: &Value, type_name: &str) -> Value {
    resources_of(bundle, type_name)
        .first()
        .map(|r| (*r).clone())
        .unwrap_or_else(|| panic!("no {type_name}"))
}

/// The codes of the codings of a list of codeable concepts at `list` (`evidence[].code[0]`
/// style paths are given as the list and the pointer into each item).
pub fn codes<'a>(list: &'a Value, pointer: &str) -> Vec<&'a str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|item| item.pointer(pointer).unwrap().as_str().unwrap())
        .collect()
}

pub fn profiles(resource: &Resource) -> Vec<String> {
    resource.profiles().to_vec()
}

/// Every element of `value`, by JSON pointer (the root last, as "").
fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => map
            .iter()
            .for_each(|(k, v)| pointers(v, format!("{at}/{k}"), out)),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .for_each(|(n, v)| pointers(v, format!("{at}/{n}"), out)),
        _ => {}
    }
    out.push(at);
}

/// Copies of `original` with one element (not the root) replaced by null, a string, a negative
/// number, an empty object or an empty array, each with the pointer changed.
pub fn every_element_changed(original: &Value) -> impl Iterator<Item = (String, Value)> + '_ {
    let mut all = Vec::new();
    pointers(original, String::new(), &mut all);
    all.pop();
    all.into_iter().flat_map(move |pointer| {
        [
            Value::Null,
            Value::from("x"),
            Value::from(-1),
            serde_json::json!({}),
            serde_json::json!([]),
        ]
        .into_iter()
        .map(move |replacement| {
            let mut changed = original.clone();
            *changed.pointer_mut(&pointer).unwrap() = replacement;
            (pointer.clone(), changed)
        })
    })
}
