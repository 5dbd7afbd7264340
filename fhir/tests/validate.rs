//! Every kind of bundle we build, and the answer, parsed by a validator nobody here wrote:
//! Python's `fhir.resources` (pinned in scripts/test.sh; its R4B models), and compared with the
//! DEMIS example of its kind (tests/python/validate_fhir.py says what is compared).

mod common;
mod validator;

use std::path::{Path, PathBuf};

use common::*;
use meldewerk_fhir::answer::{self, AcceptedIds, Receipt, PDF};
use meldewerk_fhir::codes::Disease;
use meldewerk_fhir::*;
use serde_json::{json, Value};
use validator::{report, validate, Case, LABORATORY};

fn receipt() -> Receipt {
    Receipt {
        bundle_id: "a5e00874-bb26-45ac-8eea-0bde76456703".into(),
        notification_id: "LAB-2026-000123".into(),
        content_type: PDF.into(),
        document: b"%PDF-1.7".to_vec(),
    }
}

fn write(dir: &Path, name: &str, json: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, json).unwrap();
    path
}

#[test]
fn every_generated_bundle_and_answer_is_valid_fhir_shaped_like_its_demis_example() {
    let dir = tempfile::tempdir().unwrap();
    let mut cases = Vec::new();
    for disease in Disease::ALL {
        for (kind, patient) in [
            ("named", NotifiedPerson::Named(named_patient())),
            ("unnamed", NotifiedPerson::Unnamed(unnamed_patient())),
        ] {
            let bundle = lab::build(&laboratory(disease, patient), &mut RandomIds, now()).unwrap();
            let name = format!("lab-{}-{kind}.json", disease.code());
            cases.push(Case {
                suffix: Some(disease.codes().profile_suffix),
                ..Case::new(write(dir.path(), &name, &bundle.to_json()), LABORATORY)
            });
        }
    }
    let bundle = hospital::build(&hospitalisation(), &mut RandomIds, now()).unwrap();
    cases.push(Case::new(
        write(dir.path(), "hospital.json", &bundle.to_json()),
        "DiseaseHospitalizationNotificationExample.json",
    ));
    let bundle = beds::build(&bed_occupancy(), &mut RandomIds, now()).unwrap();
    cases.push(Case::new(
        write(dir.path(), "beds.json", &bundle.to_json()),
        "BedOccupancyExample.json",
    ));
    let accepted = answer::accepted(&receipt(), &AcceptedIds::draw(&mut RandomIds), now());
    cases.push(Case::new(
        write(dir.path(), "accepted.json", &accepted.to_json()),
        "BedOccupancyExampleResult.json",
    ));
    let rejected = answer::rejected(&["Bundle.type must be document".into()]);
    cases.push(Case {
        refusal: true,
        ..Case::new(
            write(dir.path(), "rejected.json", &rejected.to_json()),
            "BedOccupancyExampleResult.json",
        )
    });

    let output = validate(dir.path(), &cases);
    let text = report(&output);
    assert!(output.status.success(), "{text}");
    assert!(text.contains("12 documents checked, 0 failures"), "{text}");
}

#[test]
fn the_validator_refuses_what_is_not_fhir_or_not_shaped_like_the_example() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = lab::build(
        &laboratory(Disease::Sarscov2, NotifiedPerson::Named(named_patient())),
        &mut RandomIds,
        now(),
    )
    .unwrap();
    let mut broken: Value = serde_json::from_slice(&bundle.to_json()).unwrap();
    broken["entry"][1]["resource"]["birthDate"] = json!("11.02.1950");
    let mut misprofiled: Value = serde_json::from_slice(&bundle.to_json()).unwrap();
    misprofiled["entry"][6]["resource"]["meta"]["profile"] =
        json!(["https://demis.rki.de/fhir/StructureDefinition/LaboratoryReportINVP"]);
    let mut accepted: Value = serde_json::from_slice(
        &answer::accepted(&receipt(), &AcceptedIds::draw(&mut RandomIds), now()).to_json(),
    )
    .unwrap();
    // A Binary without its required contentType.
    accepted["parameter"][0]["resource"]["entry"][2]["resource"]
        .as_object_mut()
        .unwrap()
        .remove("contentType");
    let cases = [
        Case::new(
            write(
                dir.path(),
                "broken.json",
                &serde_json::to_vec(&broken).unwrap(),
            ),
            LABORATORY,
        ),
        Case::new(
            write(
                dir.path(),
                "misprofiled.json",
                &serde_json::to_vec(&misprofiled).unwrap(),
            ),
            LABORATORY,
        ),
        Case::new(
            write(
                dir.path(),
                "accepted.json",
                &serde_json::to_vec(&accepted).unwrap(),
            ),
            "BedOccupancyExampleResult.json",
        ),
        // An accepted answer is not a refusal.
        Case {
            refusal: true,
            ..Case::new(
                write(
                    dir.path(),
                    "refusal.json",
                    &answer::accepted(&receipt(), &AcceptedIds::draw(&mut RandomIds), now())
                        .to_json(),
                ),
                "BedOccupancyExampleResult.json",
            )
        },
    ];
    let output = validate(dir.path(), &cases);
    let text = report(&output);
    assert!(!output.status.success(), "{text}");
    assert!(text.contains("birthDate"), "{text}");
    assert!(text.contains("invalid date format"), "{text}");
    assert!(
        text.contains("accepted.json: not valid FHIR R4B Parameters"),
        "{text}"
    );
    assert!(
        text.contains("refusal.json: parameters ['bundle', 'operationOutcome'], expected ['operationOutcome']"),
        "{text}"
    );
    assert!(text.contains("4 documents checked, 4 failures"), "{text}");
    assert!(
        text.contains("misprofiled.json: DiagnosticReport #6 claims ['https://demis.rki.de/fhir/StructureDefinition/LaboratoryReportINVP']"),
        "{text}"
    );
}

/// Found by tests/bundle_properties.rs: free text beginning with a Unicode blank (a no-break
/// space, a line separator) was written as given, and `fhir.resources` refused the bundle. Free
/// text is written trimmed, and text of blanks alone is left out.
#[test]
fn free_text_is_written_without_the_unicode_blanks_around_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut input = laboratory(Disease::Rsv, NotifiedPerson::Named(named_patient()));
    input.report_id = "\u{a0}LAB-7".into();
    input.conclusion = Some("\u{2028}RSV nachgewiesen\u{3000}".into());
    input.notifier.name = Some("\u{2007}".into());
    let NotifiedPerson::Named(patient) = &mut input.patient else {
        unreachable!()
    };
    patient.name.given = Some("\u{a0}Maxime".into());
    let bundle = lab::build(&input, &mut RandomIds, now()).unwrap();
    let json = json(&bundle);
    assert_eq!(
        resource(&json, "Composition")["identifier"]["value"],
        "LAB-7"
    );
    assert_eq!(
        resource(&json, "DiagnosticReport")["conclusion"],
        "RSV nachgewiesen"
    );
    assert_eq!(resource(&json, "Patient")["name"][0]["given"][0], "Maxime");
    let notifier = resources_of(&json, "Organization")[0];
    assert!(notifier.get("name").is_none(), "{notifier}");

    let case = Case {
        suffix: Some(Disease::Rsv.codes().profile_suffix),
        ..Case::new(write(dir.path(), "lab.json", &bundle.to_json()), LABORATORY)
    };
    let output = validate(dir.path(), &[case]);
    let text = report(&output);
    assert!(text.contains("1 documents checked, 0 failures"), "{text}");
}
