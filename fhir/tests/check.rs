//! The reporting system's checks: every bundle we build and every DEMIS example passes with
//! the right summary; each rule refuses with its reason.

mod common;

use common::*;
use meldewerk_fhir::check::{check, BundleKind, Notified, NotifierIds, Received, MAX_ENTRIES};
use meldewerk_fhir::codes::Disease;
use meldewerk_fhir::*;
use serde_json::{json, Value};

fn bytes(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).unwrap()
}

fn laboratory_json() -> Value {
    json(&build_laboratory(&laboratory(
        Disease::Sarscov2,
        NotifiedPerson::Named(named_patient()),
    )))
}

fn bed_json() -> Value {
    json(&beds::build(&bed_occupancy(), &mut SequentialIds::new(), now()).unwrap())
}

/// The reasons `value` is refused for.
fn refused(value: &Value) -> Vec<String> {
    check(&bytes(value)).expect_err("refused").reasons
}

/// The entry resource of `type_name` in `bundle`, to change.
fn entry<'a>(bundle: &'a mut Value, type_name: &str) -> &'a mut Value {
    bundle["entry"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .map(|e| &mut e["resource"])
        .find(|r| r["resourceType"] == type_name)
        .unwrap()
}

#[test]
fn our_laboratory_notifications_pass_with_their_summary() {
    for disease in Disease::ALL {
        for patient in [
            NotifiedPerson::Named(named_patient()),
            NotifiedPerson::Unnamed(unnamed_patient()),
        ] {
            let bundle = build_laboratory(&laboratory(disease, patient));
            let received = check(&bundle.to_json()).unwrap();
            assert_eq!(
                received,
                Received {
                    kind: BundleKind::Laboratory,
                    bundle_id: "00000000-0000-4000-8000-00000000000a".into(),
                    notification_id: "LAB-2026-000123".into(),
                    notifier: NotifierIds {
                        bsnr: Some("123456789".into()),
                        ik: Some("261101015".into()),
                        location_id: None,
                    },
                    notified: Some(Notified {
                        code: disease.codes().pathogen.code.into(),
                        display: Some(disease.codes().pathogen.display.into()),
                    }),
                }
            );
        }
    }
}

#[test]
fn our_hospitalisation_and_bed_reports_pass_with_their_summary() {
    let bundle = hospital::build(&hospitalisation(), &mut SequentialIds::new(), now()).unwrap();
    let received = check(&bundle.to_json()).unwrap();
    assert_eq!(received.kind, BundleKind::Disease);
    assert_eq!(
        received.notification_id,
        "2d66a331-102a-4047-b666-1b2f18ee955e"
    );
    assert_eq!(received.notifier.bsnr.as_deref(), Some("123456789"));
    assert_eq!(received.notified.unwrap().code, "cvdd");

    let received = check(&bytes(&bed_json())).unwrap();
    assert_eq!(received.kind, BundleKind::BedOccupancy);
    assert_eq!(received.notification_id, "BED-2026-11-24");
    assert_eq!(
        received.notifier,
        NotifierIds {
            bsnr: None,
            ik: Some("261101015".into()),
            location_id: Some("987654".into()),
        }
    );
    assert_eq!(received.notified, None);
}

#[test]
fn the_demis_examples_pass() {
    let received = check(&bytes(&example("LaboratoryNotificationExample.json"))).unwrap();
    assert_eq!(received.kind, BundleKind::Laboratory);
    assert_eq!(received.bundle_id, "a5e00874-bb26-45ac-8eea-0bde76456703");
    assert_eq!(received.notifier.bsnr.as_deref(), Some("98765430"));
    let received = check(&bytes(&example(
        "DiseaseHospitalizationNotificationExample.json",
    )))
    .unwrap();
    assert_eq!(received.kind, BundleKind::Disease);
    let received = check(&bytes(&example("BedOccupancyExample.json"))).unwrap();
    assert_eq!(received.notifier.location_id.as_deref(), Some("987654"));
    assert_eq!(received.notifier.ik, None);
}

#[test]
fn what_is_not_json_is_refused_also_in_a_member_the_checks_do_not_read() {
    // A valid notification with one member no check reads, holding what JSON does not allow.
    let valid = serde_json::to_string(&laboratory_json()).unwrap();
    assert!(check(valid.as_bytes()).is_ok());
    for odd in [r#""\udc00""#, "1e400"] {
        let body = format!(r#"{{"link":{odd},{}"#, &valid[1..]);
        let reasons = check(body.as_bytes()).unwrap_err().reasons;
        assert!(
            reasons.len() == 1 && reasons[0].starts_with("the body is not JSON (line 1, column "),
            "{odd}: {reasons:?}"
        );
    }
    let mut raw = format!(r#"{{"link":"x{}"#, &valid[1..]).into_bytes();
    raw[9] = 0xff;
    let reasons = check(&raw).unwrap_err().reasons;
    assert_eq!(reasons, ["the body is not JSON (line 1, column 10)"]);
}

#[test]
fn a_member_named_twice_in_one_object_is_refused_with_its_name() {
    let valid = serde_json::to_string(&laboratory_json()).unwrap();
    // The bundle's type twice: a tree kept the last, a typed reading refused it.
    let body = format!(r#"{{"type":"document",{}"#, &valid[1..]);
    let reasons = check(body.as_bytes()).unwrap_err().reasons;
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert!(
        reasons[0]
            .starts_with(r#"the member "type" is named twice in one object (line 1, column "#),
        "{reasons:?}"
    );
    // A second resourceType in a resource: one reading saw a Patient, another an Organization.
    let body = valid.replacen(
        r#""resourceType":"Patient","#,
        r#""resourceType":"Patient","resourceType":"Organization","#,
        1,
    );
    assert_ne!(body, valid);
    let reasons = check(body.as_bytes()).unwrap_err().reasons;
    assert!(
        reasons[0].contains(r#"the member "resourceType" is named twice"#),
        "{reasons:?}"
    );
    // serde_json's reserved names would be unwrapped by a tree: refused.
    let body = format!(
        r#"{{"link":{{"$serde_json::private::RawValue":"1"}},{}"#,
        &valid[1..]
    );
    let reasons = check(body.as_bytes()).unwrap_err().reasons;
    assert!(reasons[0].contains("is reserved"), "{reasons:?}");
}

#[test]
fn what_is_not_a_bundle_is_refused() {
    assert_eq!(
        check(b"{\"resourceType\": \"Bundle\",")
            .unwrap_err()
            .reasons,
        ["the body is not JSON (line 1, column 26)"]
    );
    assert_eq!(
        refused(&json!({"resourceType": "Patient"})),
        ["resourceType must be Bundle"]
    );
    assert_eq!(
        refused(&json!({"resourceType": "Bundle"})),
        ["not a valid FHIR R4 Bundle: missing field `type`"]
    );
    // A wrongly typed element is named without quoting the value sent.
    let mut bundle = laboratory_json();
    entry(&mut bundle, "Patient")["name"] = json!("Maxime Mustermann");
    let reasons = refused(&bundle);
    assert_eq!(
        reasons,
        ["not a valid FHIR R4 Bundle: an element has the wrong type"]
    );
}

#[test]
fn bundle_type_profile_identifier_and_timestamp_are_checked() {
    let mut bundle = laboratory_json();
    bundle["type"] = json!("collection");
    bundle["identifier"]["system"] = json!("urn:other");
    bundle.as_object_mut().unwrap().remove("timestamp");
    assert_eq!(
        refused(&bundle),
        [
            "Bundle.type must be document",
            "Bundle.identifier: a NotificationBundleId is required",
            "Bundle.timestamp is required"
        ]
    );
    let mut bundle = laboratory_json();
    bundle["meta"]["profile"] =
        json!(["https://demis.rki.de/fhir/StructureDefinition/NotificationBundle"]);
    assert_eq!(
        refused(&bundle),
        ["Bundle.meta.profile names none of NotificationBundleLaboratory, NotificationBundleDisease, ReportBundle"]
    );
}

#[test]
fn entries_need_ids_matching_full_urls_and_references_that_resolve() {
    let mut bundle = laboratory_json();
    bundle["entry"][1]["fullUrl"] = json!("https://demis.rki.de/fhir/Patient/other");
    entry(&mut bundle, "Observation")["specimen"]["reference"] = json!("Specimen/missing");
    let reasons = refused(&bundle);
    assert_eq!(
        reasons,
        [
            "Bundle.entry[1].fullUrl must end with Patient/00000000-0000-4000-8000-000000000002",
            "Bundle.entry[7]: the reference Specimen/missing names no entry of the bundle",
            "PathogenDetection.specimen must refer to a Specimen entry"
        ]
    );
    let mut bundle = laboratory_json();
    let long = format!("Specimen/{}", "ä".repeat(200));
    entry(&mut bundle, "Observation")["specimen"]["reference"] = json!(long);
    assert!(refused(&bundle).contains(&format!(
        "Bundle.entry[7]: the reference Specimen/{}… names no entry of the bundle",
        "ä".repeat(71)
    )));
    let mut bundle = laboratory_json();
    let duplicate = bundle["entry"][1].clone();
    bundle["entry"].as_array_mut().unwrap().push(duplicate);
    assert_eq!(
        refused(&bundle),
        ["Bundle.entry[9]: Patient/00000000-0000-4000-8000-000000000002 appears twice"]
    );
    let mut bundle = laboratory_json();
    entry(&mut bundle, "Specimen")
        .as_object_mut()
        .unwrap()
        .remove("id");
    assert!(refused(&bundle).contains(&"Bundle.entry[8].resource.id is required".to_owned()));
}

#[test]
fn a_laboratory_notification_needs_its_resources_with_their_profiles() {
    let mut bundle = laboratory_json();
    bundle["entry"].as_array_mut().unwrap().swap(0, 1);
    assert_eq!(
        refused(&bundle),
        ["Bundle.entry[0] must be the Composition"]
    );

    let mut bundle = laboratory_json();
    entry(&mut bundle, "Composition")["meta"]["profile"] =
        json!(["https://demis.rki.de/fhir/StructureDefinition/NotificationDiseaseCVDD"]);
    entry(&mut bundle, "Composition")["identifier"]["value"] = json!("");
    assert_eq!(
        refused(&bundle),
        [
            "Composition.meta.profile must name NotificationLaboratory",
            "Composition.identifier: a NotificationId is required"
        ]
    );

    let mut bundle = laboratory_json();
    entry(&mut bundle, "Patient")["meta"]["profile"] =
        json!(["http://hl7.org/fhir/StructureDefinition/Patient"]);
    entry(&mut bundle, "DiagnosticReport")["result"] = json!([]);
    assert_eq!(
        refused(&bundle),
        [
            "Composition.subject must refer to a NotifiedPerson entry",
            "DiagnosticReport must refer to a NotifiedPerson entry",
            "DiagnosticReport.result must name a PathogenDetection"
        ]
    );

    let mut bundle = laboratory_json();
    entry(&mut bundle, "Composition")["section"][0]["entry"] =
        json!([{"reference": "Patient/00000000-0000-4000-8000-000000000002"}]);
    assert_eq!(
        refused(&bundle),
        ["Composition.section must name the DiagnosticReport"]
    );
}

#[test]
fn the_notifier_needs_its_role_its_facility_and_a_bsnr() {
    let mut bundle = laboratory_json();
    entry(&mut bundle, "Organization")["identifier"] =
        json!([{"system": "http://fhir.de/sid/arge-ik/iknr", "value": "261101015"}]);
    assert_eq!(
        refused(&bundle),
        ["the NotifierFacility needs a BSNR identifier"]
    );

    let mut bundle = laboratory_json();
    // The author names the submitter's role instead of the notifier's.
    let submitter = bundle["entry"][4]["resource"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    entry(&mut bundle, "Composition")["author"][0]["reference"] =
        json!(format!("PractitionerRole/{submitter}"));
    assert_eq!(
        refused(&bundle),
        [
            "Composition.author must refer to a NotifierRole entry",
            "the NotifierFacility needs a BSNR identifier"
        ]
    );
}

#[test]
fn a_hospitalisation_needs_its_condition() {
    let bundle = hospital::build(&hospitalisation(), &mut SequentialIds::new(), now()).unwrap();
    let mut bundle = json(&bundle);
    entry(&mut bundle, "Composition")["section"]
        .as_array_mut()
        .unwrap()
        .remove(0);
    assert_eq!(
        refused(&bundle),
        ["Composition.section must name the Condition"]
    );
}

#[test]
fn a_bed_report_needs_a_six_digit_location_and_whole_non_negative_counts() {
    let mut bundle = bed_json();
    entry(&mut bundle, "Composition")["subject"]["identifier"]["value"] = json!("98765");
    assert_eq!(
        refused(&bundle),
        ["Composition.subject.identifier must be an InekStandortId of 6 digits"]
    );
    let mut bundle = bed_json();
    let items = &mut entry(&mut bundle, "QuestionnaireResponse")["item"];
    items[0]["answer"][0]["valueInteger"] = json!(-1);
    items.as_array_mut().unwrap().remove(3);
    assert_eq!(
        refused(&bundle),
        [
            "QuestionnaireResponse item numberOperableBedsGeneralWardAdults: the answer must be an integer of 0 or more",
            "QuestionnaireResponse: numberOccupiedBedsGeneralWardChildren is required"
        ]
    );
    let mut bundle = bed_json();
    entry(&mut bundle, "QuestionnaireResponse")["item"][1]["answer"][0] =
        json!({"valueString": "221"});
    assert_eq!(
        refused(&bundle),
        ["QuestionnaireResponse item numberOccupiedBedsGeneralWardAdults: the answer must be an integer of 0 or more"]
    );
}

#[test]
fn too_many_entries_are_refused_unread() {
    let mut bundle = bed_json();
    let filler = json!({"fullUrl": "urn:x", "resource": {"resourceType": "Basic"}});
    bundle["entry"] = Value::Array(vec![filler; MAX_ENTRIES + 1]);
    assert_eq!(
        refused(&bundle),
        [format!("Bundle.entry: more than {MAX_ENTRIES} entries")]
    );
}

#[test]
fn any_element_removed_or_retyped_is_answered_without_a_panic() {
    let hospital =
        json(&hospital::build(&hospitalisation(), &mut SequentialIds::new(), now()).unwrap());
    for original in [laboratory_json(), hospital, bed_json()] {
        for (pointer, changed) in every_element_changed(&original) {
            // Refused or accepted, but answered; a refusal says why.
            if let Err(refused) = check(&bytes(&changed)) {
                assert!(!refused.reasons.is_empty(), "{pointer}");
            }
        }
    }
}
