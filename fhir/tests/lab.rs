//! The laboratory notification: shape, profiles and codes against the DEMIS example, the
//! named and the unnamed patient, every disease, and the inputs the builder refuses.

mod common;

use common::*;
use meldewerk_fhir::codes::{Disease, Interpretation};
use meldewerk_fhir::lab::{self, Finding};
use meldewerk_fhir::*;
use serde_json::json;

const EXAMPLE: &str = "LaboratoryNotificationExample.json";

fn named(disease: Disease) -> serde_json::Value {
    json(&build_laboratory(&laboratory(
        disease,
        NotifiedPerson::Named(named_patient()),
    )))
}

#[test]
fn sars_cov_2_has_the_examples_resources_profiles_and_codes() {
    let bundle = build_laboratory(&laboratory(
        Disease::Sarscov2,
        NotifiedPerson::Named(named_patient()),
    ));
    let example = example(EXAMPLE);
    let example_types: Vec<&str> = example["entry"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["resource"]["resourceType"].as_str().unwrap())
        .collect();
    assert_eq!(types(&bundle), example_types);
    let ours = json(&bundle);
    assert_eq!(ours["meta"]["profile"], example["meta"]["profile"]);
    assert_eq!(ours["type"], "document");
    for (mine, theirs) in ours["entry"]
        .as_array()
        .unwrap()
        .iter()
        .zip(example["entry"].as_array().unwrap())
    {
        assert_eq!(
            mine["resource"]["meta"]["profile"], theirs["resource"]["meta"]["profile"],
            "{}",
            mine["resource"]["resourceType"]
        );
        let id = mine["resource"]["id"].as_str().unwrap();
        let url = format!(
            "https://demis.rki.de/fhir/{}/{id}",
            mine["resource"]["resourceType"].as_str().unwrap()
        );
        assert_eq!(mine["fullUrl"], url.as_str());
    }
    for (path, resource_type) in [
        ("/code", "DiagnosticReport"),
        ("/conclusionCode", "DiagnosticReport"),
        ("/code", "Observation"),
        ("/method", "Observation"),
        ("/interpretation", "Observation"),
        ("/valueCodeableConcept", "Observation"),
        ("/category", "Observation"),
        ("/type", "Specimen"),
        ("/type", "Composition"),
        ("/category", "Composition"),
        ("/section/0/code", "Composition"),
    ] {
        assert_eq!(
            resource(&ours, resource_type).pointer(path),
            resource(&example, resource_type).pointer(path),
            "{resource_type}{path}"
        );
    }
}

#[test]
fn ids_times_and_identifiers_come_from_the_caller() {
    let bundle = named(Disease::Sarscov2);
    assert_eq!(bundle["timestamp"], "2026-11-24T14:30:05.250+01:00");
    assert_eq!(
        bundle["meta"]["lastUpdated"],
        "2026-11-24T14:30:05.250+01:00"
    );
    assert_eq!(
        bundle["identifier"],
        json!({"system": "https://demis.rki.de/fhir/NamingSystem/NotificationBundleId",
               "value": "00000000-0000-4000-8000-00000000000a"})
    );
    let composition = resource(&bundle, "Composition");
    assert_eq!(composition["id"], "00000000-0000-4000-8000-000000000001");
    assert_eq!(
        composition["identifier"],
        json!({"system": "https://demis.rki.de/fhir/NamingSystem/NotificationId",
               "value": "LAB-2026-000123"})
    );
    assert_eq!(composition["date"], "2026-11-24");
    assert_eq!(composition["title"], "Erregernachweismeldung");
    assert_eq!(
        resource(&bundle, "DiagnosticReport")["issued"],
        "2026-11-24T14:30:05.250+01:00"
    );
    // The same input builds the same bundle; fresh ids build another.
    assert_eq!(named(Disease::Sarscov2), bundle);
    let input = laboratory(Disease::Sarscov2, NotifiedPerson::Named(named_patient()));
    let a = lab::build(&input, &mut RandomIds, now()).unwrap();
    let b = lab::build(&input, &mut RandomIds, now()).unwrap();
    assert_ne!(a.identifier, b.identifier);
    uuid::Uuid::parse_str(a.identifier.unwrap().value.as_deref().unwrap()).unwrap();
}

#[test]
fn every_reference_names_the_entry_the_example_names() {
    let bundle = named(Disease::Sarscov2);
    let id = |t: &str, n: usize| {
        resources_of(&bundle, t)[n]["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let reference = |t: &str, n: usize| json!({ "reference": format!("{t}/{}", id(t, n)) });
    let composition = resource(&bundle, "Composition");
    assert_eq!(composition["subject"], reference("Patient", 0));
    assert_eq!(composition["author"][0], reference("PractitionerRole", 0));
    assert_eq!(
        composition["section"][0]["entry"][0],
        reference("DiagnosticReport", 0)
    );
    assert_eq!(
        resource(&bundle, "PractitionerRole")["organization"],
        reference("Organization", 0)
    );
    let report = resource(&bundle, "DiagnosticReport");
    assert_eq!(report["result"][0], reference("Observation", 0));
    assert_eq!(report["subject"], reference("Patient", 0));
    assert_eq!(
        resource(&bundle, "Observation")["specimen"],
        reference("Specimen", 0)
    );
    let specimen = resource(&bundle, "Specimen");
    assert_eq!(
        specimen["collection"]["collector"],
        reference("PractitionerRole", 1)
    );
    assert_eq!(
        specimen["collection"]["collectedDateTime"],
        "2026-11-24T09:50:00+01:00"
    );
    assert_eq!(specimen["receivedTime"], "2026-11-24T11:40:00+01:00");
}

#[test]
fn the_named_patient_carries_name_gender_birth_date_address_and_contact() {
    let patient = resource(&named(Disease::Influenza), "Patient");
    assert_eq!(
        patient,
        json!({
            "resourceType": "Patient",
            "id": "00000000-0000-4000-8000-000000000002",
            "meta": {"profile": ["https://demis.rki.de/fhir/StructureDefinition/NotifiedPerson"]},
            "name": [{"use": "official", "family": "Mustermann", "given": ["Maxime"]}],
            "telecom": [{"system": "phone", "value": "030 7654321"},
                        {"system": "email", "value": "maxime@example.org"}],
            "gender": "female",
            "birthDate": "1950-02-11",
            "address": [{
                "extension": [{
                    "url": "https://demis.rki.de/fhir/StructureDefinition/AddressUse",
                    "valueCoding": {"system": "https://demis.rki.de/fhir/CodeSystem/addressUse",
                                    "code": "primary", "display": "Hauptwohnsitz"}
                }],
                "line": ["Teststraße 123"], "city": "Berlin", "postalCode": "13055", "country": "20422"
            }]
        })
    );
}

#[test]
fn the_unnamed_patient_has_no_name_no_contact_a_birth_month_and_a_redacted_postal_code() {
    for disease in Disease::ALL {
        let bundle = build_laboratory(&laboratory(
            disease,
            NotifiedPerson::Unnamed(unnamed_patient()),
        ));
        let patient = resource(&json(&bundle), "Patient");
        assert_eq!(
            patient,
            json!({
                "resourceType": "Patient",
                "id": "00000000-0000-4000-8000-000000000002",
                "meta": {"profile": ["https://demis.rki.de/fhir/StructureDefinition/NotifiedPersonNotByName"]},
                "gender": "other",
                "_gender": {"extension": [{
                    "url": "http://fhir.de/StructureDefinition/gender-amtlich-de",
                    "valueCoding": {"system": "http://fhir.de/CodeSystem/gender-amtlich-de",
                                    "code": "D", "display": "divers"}
                }]},
                "birthDate": "1950-02",
                "address": [{"postalCode": "130", "country": "20422"}]
            }),
            "{disease:?}"
        );
    }
}

#[test]
fn not_asked_writes_no_gender_and_unknown_writes_unknown() {
    use meldewerk_fhir::codes::Gender;
    for (gender, written) in [
        (Gender::NotAsked, None),
        (Gender::AskedUnknown, Some("unknown")),
        (Gender::Male, Some("male")),
        (Gender::Indeterminate, Some("other")),
    ] {
        let mut person = named_patient();
        person.gender = Some(gender);
        let bundle = build_laboratory(&laboratory(Disease::Rsv, NotifiedPerson::Named(person)));
        let patient = resource(&json(&bundle), "Patient");
        assert_eq!(patient["gender"].as_str(), written, "{gender:?}");
    }
}

#[test]
fn every_disease_writes_its_pathogen_profiles_and_form_codes() {
    for disease in Disease::ALL {
        let codes = disease.codes();
        let bundle = named(disease);
        let suffix = codes.profile_suffix;
        let report = resource(&bundle, "DiagnosticReport");
        assert_eq!(report["code"]["coding"][0]["code"], codes.pathogen.code);
        assert_eq!(
            report["code"]["coding"][0]["display"],
            codes.pathogen.display
        );
        for (type_name, profile) in [
            ("DiagnosticReport", format!("LaboratoryReport{suffix}")),
            ("Observation", format!("PathogenDetection{suffix}")),
            ("Specimen", format!("Specimen{suffix}")),
        ] {
            assert_eq!(
                resource(&bundle, type_name)["meta"]["profile"][0],
                format!("https://demis.rki.de/fhir/StructureDefinition/{profile}")
            );
        }
        let observation = resource(&bundle, "Observation");
        assert_eq!(
            observation["code"]["coding"][0]["code"],
            codes.tests[0].code
        );
        assert_eq!(
            observation["code"]["coding"][0]["system"],
            "http://loinc.org"
        );
        assert_eq!(
            observation["method"]["coding"][0]["code"],
            codes.methods[0].code
        );
        assert_eq!(
            resource(&bundle, "Specimen")["type"]["coding"][0]["code"],
            codes.materials[0].code
        );
    }
}

#[test]
fn several_findings_make_several_observations_and_a_negative_report_says_so() {
    let codes = Disease::Influenza.codes();
    let mut input = laboratory(Disease::Influenza, NotifiedPerson::Named(named_patient()));
    input.findings = vec![
        Finding {
            test: codes.tests[0].code.into(),
            method: codes.methods[0].code.into(),
            interpretation: Interpretation::Negative,
            note: None,
        },
        Finding {
            test: codes.tests[3].code.into(),
            method: codes.methods[1].code.into(),
            interpretation: Interpretation::Negative,
            note: None,
        },
    ];
    let bundle = json(&build_laboratory(&input));
    let report = resource(&bundle, "DiagnosticReport");
    assert_eq!(report["result"].as_array().unwrap().len(), 2);
    assert_eq!(
        report["conclusionCode"][0]["coding"][0]["code"],
        "pathogenNotDetected"
    );
    let observations = resources_of(&bundle, "Observation");
    assert_eq!(observations.len(), 2);
    assert_eq!(observations[1]["code"]["coding"][0]["code"], "80381-7");
    assert_eq!(
        observations[1]["valueCodeableConcept"]["coding"][0]["code"],
        "LA11883-8"
    );
    assert_eq!(
        observations[0]["interpretation"][0]["coding"][0]["code"],
        "NEG"
    );
}

#[test]
fn the_notifier_is_the_reporting_facility_with_its_bsnr_and_contact_person() {
    let organization = resource(&named(Disease::Sarscov2), "Organization");
    assert_eq!(
        organization["identifier"],
        json!([
            {"system": "https://fhir.kbv.de/NamingSystem/KBV_NS_Base_BSNR", "value": "123456789"},
            {"system": "http://fhir.de/sid/arge-ik/iknr", "value": "261101015"}
        ])
    );
    assert_eq!(organization["type"][0]["coding"][0]["code"], "laboratory");
    assert_eq!(organization["name"], "Klinikum Mitte, Labor");
    assert_eq!(
        organization["telecom"],
        json!([{"system": "phone", "value": "030 1234567", "use": "work"},
               {"system": "email", "value": "labor@klinikum-mitte.example", "use": "work"}])
    );
    assert_eq!(
        organization["contact"][0]["name"]["text"],
        "Dr. Anna Ansprechpartner"
    );
    assert_eq!(
        organization["contact"][0]["telecom"][0]["value"],
        "030 1234568"
    );
}

#[test]
fn without_a_submitter_there_is_no_submitting_role_and_no_collector() {
    let mut input = laboratory(Disease::Norovirus, NotifiedPerson::Named(named_patient()));
    input.submitter = None;
    let bundle = build_laboratory(&input);
    assert_eq!(
        types(&bundle),
        [
            "Composition",
            "Patient",
            "PractitionerRole",
            "Organization",
            "DiagnosticReport",
            "Observation",
            "Specimen"
        ]
    );
    let specimen = resource(&json(&bundle), "Specimen");
    assert!(specimen["collection"].get("collector").is_none());
}

#[test]
fn a_follow_up_names_the_earlier_notification() {
    let mut input = laboratory(Disease::Sarscov2, NotifiedPerson::Named(named_patient()));
    input.follows_up = Some("LAB-2026-000100".into());
    input.report_date = None;
    let composition = resource(&json(&build_laboratory(&input)), "Composition");
    assert_eq!(
        composition["relatesTo"],
        json!([{"code": "appends", "targetReference": {
            "type": "Composition",
            "identifier": {"system": "https://demis.rki.de/fhir/NamingSystem/NotificationId",
                           "value": "LAB-2026-000100"}}}])
    );
    assert_eq!(composition["date"], "2026-11-24T14:30:05+01:00");
}

#[test]
fn codes_the_disease_does_not_offer_and_missing_findings_are_refused() {
    let build = |input| lab::build(&input, &mut SequentialIds::new(), now());
    let base = || laboratory(Disease::Rsv, NotifiedPerson::Named(named_patient()));

    let mut input = base();
    input.findings[0].test = "94660-8".into(); // a SARS-CoV-2 test
    assert_eq!(
        build(input),
        Err(BuildError::UnknownCode {
            field: "findings.test",
            code: "94660-8".into()
        })
    );
    let mut input = base();
    input.findings[0].method = "0".into();
    assert_eq!(
        build(input).unwrap_err().to_string(),
        "findings.method: code \"0\" is not offered here"
    );
    let mut input = base();
    input.specimen.material = "119342007".into(); // saliva: offered for SARS-CoV-2 only
    assert!(matches!(
        build(input),
        Err(BuildError::UnknownCode {
            field: "specimen.material",
            ..
        })
    ));
    let mut input = base();
    input.findings.clear();
    assert_eq!(
        build(input).unwrap_err().to_string(),
        "findings is required"
    );
}

#[test]
fn birth_months_are_read_strictly() {
    assert_eq!(
        BirthMonth::parse("1950-02"),
        Some(BirthMonth {
            year: 1950,
            month: 2
        })
    );
    for wrong in [
        "1950-13",
        "1950-00",
        "1950-2",
        "02.1950",
        "1950-02-11",
        "195a-02",
        "",
        // FHIR's date has no year zero (found by tests/bundle_properties.rs).
        "0000-05",
    ] {
        assert_eq!(BirthMonth::parse(wrong), None, "{wrong}");
    }
}

#[test]
fn docs_fhir_demis_lists_every_code_of_every_disease_table() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/fhir-demis.md"),
    )
    .unwrap();
    for disease in Disease::ALL {
        let codes = disease.codes();
        let pathogen = format!(
            "| `{}` | `{}` {} | `{}` |",
            disease.code(),
            codes.pathogen.code,
            codes.pathogen.display,
            codes.profile_suffix
        );
        assert!(doc.contains(&pathogen), "missing {pathogen}");
        for code in codes.tests {
            let row = format!(
                "| `{}` | `{}` | {} |",
                disease.code(),
                code.code,
                code.display
            );
            assert!(doc.contains(&row), "missing {row}");
        }
        for code in codes.methods.iter().chain(codes.materials) {
            let row = format!("| `{}` | {} |", code.code, code.display);
            let listed = doc.lines().any(|line| {
                line.ends_with(&row)
                    && (line.starts_with("| every disease")
                        || line.contains(&format!("`{}`", disease.code())))
            });
            assert!(listed, "{disease:?}: missing {row}");
        }
    }
}
