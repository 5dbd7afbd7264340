//! The bed occupancy report: shape, profiles and answers against the DEMIS example.

mod common;

use common::*;
use meldewerk_fhir::beds;
use meldewerk_fhir::*;
use serde_json::json;

const EXAMPLE: &str = "BedOccupancyExample.json";

fn build(input: &beds::BedOccupancyReport) -> serde_json::Value {
    json(&beds::build(input, &mut SequentialIds::new(), now()).unwrap())
}

#[test]
fn the_report_matches_the_example_resource_for_resource() {
    let ours = build(&bed_occupancy());
    let example = example(EXAMPLE);
    assert_eq!(ours["meta"]["profile"], example["meta"]["profile"]);
    assert_eq!(ours["type"], "document");
    assert_eq!(ours["id"], "00000000-0000-4000-8000-000000000001");
    assert_eq!(
        ours["identifier"]["system"],
        example["identifier"]["system"]
    );
    let entries = |b: &serde_json::Value| -> Vec<(String, serde_json::Value)> {
        b["entry"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["resource"]["resourceType"].as_str().unwrap().to_owned(),
                    e["resource"]["meta"]["profile"].clone(),
                )
            })
            .collect()
    };
    assert_eq!(entries(&ours), entries(&example));
    let composition = resource(&ours, "Composition");
    for path in [
        "/type",
        "/category",
        "/title",
        "/section",
        "/subject/identifier/system",
    ] {
        let theirs = resource(&example, "Composition");
        if path == "/section" {
            assert_eq!(
                composition["section"][0]["code"],
                theirs["section"][0]["code"]
            );
        } else {
            assert_eq!(composition.pointer(path), theirs.pointer(path), "{path}");
        }
    }
    assert_eq!(composition["subject"]["identifier"]["value"], "987654");
    assert_eq!(composition["identifier"]["value"], "BED-2026-11-24");
    assert_eq!(composition["date"], "2026-11-24");
    assert_eq!(
        composition["meta"]["lastUpdated"],
        "2026-11-24T14:30:05.250+01:00"
    );
    // With the example's counts, the answers are the example's.
    let response = resource(&ours, "QuestionnaireResponse");
    let theirs = resource(&example, "QuestionnaireResponse");
    assert_eq!(response["item"], theirs["item"]);
    assert_eq!(response["questionnaire"], theirs["questionnaire"]);
    assert_eq!(
        composition["section"][0]["entry"][0]["reference"],
        format!("QuestionnaireResponse/{}", response["id"].as_str().unwrap())
    );
}

#[test]
fn the_location_is_the_notifier_with_its_ik() {
    let bundle = build(&bed_occupancy());
    let organization = resource(&bundle, "Organization");
    assert_eq!(
        organization["identifier"],
        json!([{"system": "http://fhir.de/sid/arge-ik/iknr", "value": "261101015"}])
    );
    assert_eq!(organization["name"], "Sankt Gertrauden-Krankenhaus GmbH");
    assert_eq!(
        organization["address"][0]["line"],
        json!(["Paretzer Straße 12"])
    );
    assert_eq!(organization["type"][0]["coding"][0]["code"], "hospital");
    let role = resource(&bundle, "PractitionerRole");
    assert_eq!(
        role["organization"]["reference"],
        format!("Organization/{}", organization["id"].as_str().unwrap())
    );
    assert_eq!(
        resource(&bundle, "Composition")["author"][0]["reference"],
        format!("PractitionerRole/{}", role["id"].as_str().unwrap())
    );
}

#[test]
fn operable_counts_not_given_are_not_answered() {
    let mut input = bed_occupancy();
    input.beds.adults_operable = None;
    input.beds.children_operable = None;
    input.beds.children_occupied = 0;
    input.report_date = None;
    let bundle = build(&input);
    assert_eq!(
        resource(&bundle, "QuestionnaireResponse")["item"],
        json!([
            {"linkId": "numberOccupiedBedsGeneralWardAdults", "answer": [{"valueInteger": 221}]},
            {"linkId": "numberOccupiedBedsGeneralWardChildren", "answer": [{"valueInteger": 0}]}
        ])
    );
    assert_eq!(
        resource(&bundle, "Composition")["date"],
        "2026-11-24T14:30:05.250+01:00"
    );
}

#[test]
fn a_report_without_location_is_refused() {
    let mut input = bed_occupancy();
    input.location_id.clear();
    assert_eq!(
        beds::build(&input, &mut SequentialIds::new(), now()),
        Err(BuildError::Missing {
            field: "StandortId"
        })
    );
}
