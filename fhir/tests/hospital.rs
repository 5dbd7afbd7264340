//! The hospitalisation notification: shape and profiles against the DEMIS example, the stays,
//! the common clinical answers, and the contradictions the builder refuses.

mod common;

use common::*;
use meldewerk_fhir::hospital::{self, Department, YesNo};
use meldewerk_fhir::*;
use serde_json::json;

fn build(input: &hospital::HospitalisationNotification) -> serde_json::Value {
    json(&hospital::build(input, &mut SequentialIds::new(), now()).unwrap())
}

/// The profiles of the entries of type `type_name`.
fn profiles_of(bundle: &serde_json::Value, type_name: &str) -> Vec<serde_json::Value> {
    resources_of(bundle, type_name)
        .into_iter()
        .map(|r| r["meta"]["profile"].clone())
        .collect()
}

#[test]
fn the_bundle_has_the_examples_profiles_for_each_resource_it_writes() {
    let bundle = hospital::build(&hospitalisation(), &mut SequentialIds::new(), now()).unwrap();
    assert_eq!(
        types(&bundle),
        [
            "Composition",
            "Patient",
            "Condition",
            "Organization",
            "PractitionerRole",
            "Encounter",
            "Encounter",
            "QuestionnaireResponse"
        ]
    );
    let ours = json(&bundle);
    let example = example("DiseaseHospitalizationNotificationExample.json");
    assert_eq!(ours["meta"]["profile"], example["meta"]["profile"]);
    for type_name in [
        "Composition",
        "Patient",
        "Condition",
        "PractitionerRole",
        "Encounter",
    ] {
        assert_eq!(
            profiles_of(&ours, type_name)[0],
            profiles_of(&example, type_name)[0],
            "{type_name}"
        );
    }
    // The notifier is the example's NotifierFacility (it has a NotifiedPersonFacility too).
    assert_eq!(
        resource(&ours, "Organization")["meta"]["profile"],
        json!(["https://demis.rki.de/fhir/StructureDefinition/NotifierFacility"])
    );
    assert!(profiles_of(&example, "QuestionnaireResponse")
        .contains(&profiles_of(&ours, "QuestionnaireResponse")[0]));
    for path in [
        "/type",
        "/category",
        "/title",
        "/section/0/code",
        "/section/1/code",
    ] {
        assert_eq!(
            resource(&ours, "Composition").pointer(path),
            resource(&example, "Composition").pointer(path),
            "Composition{path}"
        );
    }
    for path in ["/code", "/verificationStatus", "/onsetDateTime"] {
        assert!(
            resource(&ours, "Condition").pointer(path).is_some(),
            "{path}"
        );
    }
    assert_eq!(
        resource(&ours, "Condition")["code"],
        resource(&example, "Condition")["code"]
    );
}

#[test]
fn the_composition_names_the_report_and_its_sections() {
    let bundle = build(&hospitalisation());
    let composition = resource(&bundle, "Composition");
    assert_eq!(
        composition["identifier"]["value"],
        "2d66a331-102a-4047-b666-1b2f18ee955e"
    );
    assert_eq!(composition["date"], "2026-11-24");
    let condition = resource(&bundle, "Condition");
    let common = resource(&bundle, "QuestionnaireResponse");
    assert_eq!(
        composition["section"][0]["entry"][0]["reference"],
        format!("Condition/{}", condition["id"].as_str().unwrap())
    );
    assert_eq!(
        composition["section"][1]["entry"][0]["reference"],
        format!("QuestionnaireResponse/{}", common["id"].as_str().unwrap())
    );
}

#[test]
fn the_condition_carries_onset_diagnosis_symptoms_and_note() {
    let condition = resource(&build(&hospitalisation()), "Condition");
    assert_eq!(condition["onsetDateTime"], "2026-11-18");
    assert_eq!(condition["recordedDate"], "2026-11-20");
    assert_eq!(
        codes(&condition["evidence"], "/code/0/coding/0/code"),
        ["386661006", "49727002", "233604007"]
    );
    assert_eq!(condition["note"][0]["text"], "Textueller Hinweis");
    assert_eq!(
        condition["verificationStatus"]["coding"][0],
        json!({"system": "http://terminology.hl7.org/CodeSystem/condition-ver-status", "code": "confirmed"})
    );
}

#[test]
fn a_stay_with_intensive_care_is_two_encounters_the_answers_refer_to() {
    let bundle = build(&hospitalisation());
    let encounters = resources_of(&bundle, "Encounter");
    assert_eq!(encounters.len(), 2);
    let hospital = resource(&bundle, "Organization");
    for encounter in &encounters {
        assert_eq!(encounter["status"], "in-progress");
        assert_eq!(encounter["class"]["code"], "IMP");
        assert_eq!(
            encounter["serviceProvider"]["reference"],
            format!("Organization/{}", hospital["id"].as_str().unwrap())
        );
    }
    assert_eq!(encounters[0]["period"], json!({"start": "2026-11-21"}));
    assert_eq!(encounters[0]["serviceType"]["coding"][0]["code"], "0100");
    assert_eq!(
        encounters[0]["extension"],
        json!([{"url": "https://demis.rki.de/fhir/StructureDefinition/HospitalizationNote",
                "valueString": "wichtige Zusatzinformation"}])
    );
    assert_eq!(encounters[1]["period"], json!({"start": "2026-11-23"}));
    assert_eq!(
        encounters[1]["serviceType"]["coding"][0],
        json!({"system": "https://demis.rki.de/fhir/CodeSystem/hospitalizationServiceType",
               "code": "3600", "display": "Intensivmedizin"})
    );

    let common = resource(&bundle, "QuestionnaireResponse");
    assert_eq!(
        common["questionnaire"],
        "https://demis.rki.de/fhir/Questionnaire/DiseaseQuestionsCommon"
    );
    let items = common["item"].as_array().unwrap();
    assert_eq!(items[0]["linkId"], "isDead");
    assert_eq!(items[0]["answer"][0]["valueCoding"]["code"], "no");
    assert!(items[0]["answer"][0].get("item").is_none());
    assert_eq!(items[1]["linkId"], "hospitalized");
    let answer = &items[1]["answer"][0];
    assert_eq!(
        answer["valueCoding"],
        json!({"system": "https://demis.rki.de/fhir/CodeSystem/yesOrNoAnswer", "code": "yes", "display": "Ja"})
    );
    let referred: Vec<&str> = answer["item"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            assert_eq!(g["linkId"], "hospitalizedGroup");
            assert_eq!(g["item"][0]["linkId"], "hospitalizedEncounter");
            g["item"][0]["answer"][0]["valueReference"]["reference"]
                .as_str()
                .unwrap()
        })
        .collect();
    let expected: Vec<String> = encounters
        .iter()
        .map(|e| format!("Encounter/{}", e["id"].as_str().unwrap()))
        .collect();
    assert_eq!(referred, expected);
}

#[test]
fn a_discharge_finishes_the_stay_and_a_death_is_dated() {
    let mut input = hospitalisation();
    let stay = input.clinical.hospitalisation.as_mut().unwrap();
    stay.discharged = Some(day("2026-11-30"));
    stay.intensive_care_from = None;
    stay.department = None;
    input.clinical.deceased = Some(YesNo::Ja);
    input.clinical.date_of_death = Some(day("2026-11-30"));
    let bundle = build(&input);
    let encounter = resource(&bundle, "Encounter");
    assert_eq!(encounter["status"], "finished");
    assert_eq!(
        encounter["period"],
        json!({"start": "2026-11-21", "end": "2026-11-30"})
    );
    assert!(encounter.get("serviceType").is_none());
    let common = resource(&bundle, "QuestionnaireResponse");
    assert_eq!(
        common["item"][0]["answer"][0]["item"],
        json!([{"linkId": "deathDate", "answer": [{"valueDate": "2026-11-30"}]}])
    );
}

#[test]
fn not_hospitalised_writes_no_encounter_and_unknown_answers_their_codes() {
    let mut input = hospitalisation();
    input.clinical.hospitalisation = None;
    input.clinical.hospitalised = Some(YesNo::NichtErmittelbar);
    input.clinical.deceased = Some(YesNo::NichtErhoben);
    let bundle = build(&input);
    assert!(!bundle.to_string().contains("\"Encounter\""));
    let items = resource(&bundle, "QuestionnaireResponse")["item"].clone();
    assert_eq!(items[0]["answer"][0]["valueCoding"]["code"], "NASK");
    assert_eq!(items[1]["answer"][0]["valueCoding"]["code"], "ASKU");
    assert!(items[1]["answer"][0].get("item").is_none());
}

#[test]
fn the_patient_address_keeps_street_and_house_number_apart_as_the_example_does() {
    let patient = resource(&build(&hospitalisation()), "Patient");
    assert_eq!(patient["address"][0]["line"], json!(["Berthastraße 123"]));
    assert_eq!(
        patient["address"][0]["_line"],
        json!([{"extension": [
            {"url": "http://hl7.org/fhir/StructureDefinition/iso21090-ADXP-streetName", "valueString": "Berthastraße"},
            {"url": "http://hl7.org/fhir/StructureDefinition/iso21090-ADXP-houseNumber", "valueString": "123"}
        ]}])
    );
}

#[test]
fn the_notifier_is_the_hospital_with_bsnr_ik_and_the_physician_as_contact() {
    let organization = resource(&build(&hospitalisation()), "Organization");
    assert_eq!(organization["type"][0]["coding"][0]["code"], "hospital");
    assert_eq!(organization["identifier"][0]["value"], "123456789");
    assert_eq!(organization["identifier"][1]["value"], "261101015");
    assert_eq!(
        organization["contact"],
        json!([{"name": {"text": "Dr. Anna Beate Ansprechpartner", "family": "Ansprechpartner",
                         "given": ["Anna Beate"], "prefix": ["Dr."]},
                "telecom": [{"system": "phone", "value": "01234567"}]}])
    );
}

#[test]
fn contradictions_are_refused() {
    let mut input = hospitalisation();
    input.clinical.hospitalised = Some(YesNo::Nein);
    assert_eq!(
        hospital::build(&input, &mut SequentialIds::new(), now())
            .unwrap_err()
            .to_string(),
        "KlinischeAngaben.Hospitalisierung requires KlinischeAngaben.Hospitalisiert JA"
    );
    let mut input = hospitalisation();
    input.clinical.date_of_death = Some(day("2026-11-30"));
    assert_eq!(
        hospital::build(&input, &mut SequentialIds::new(), now()),
        Err(BuildError::Contradiction {
            field: "KlinischeAngaben.Todesdatum",
            requires: "KlinischeAngaben.Verstorben JA"
        })
    );
}

#[test]
fn the_forms_values_are_named_in_the_contracts_style() {
    let names = |v: serde_json::Value| {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(serde_json::to_value(YesNo::ALL).unwrap()),
        ["JA", "NEIN", "NICHT_ERMITTELBAR", "NICHT_ERHOBEN"]
    );
    assert_eq!(
        names(serde_json::to_value(Department::ALL).unwrap()),
        [
            "INNERE_MEDIZIN",
            "PNEUMOLOGIE",
            "PAEDIATRIE",
            "ALLGEMEINE_CHIRURGIE",
            "INTENSIVMEDIZIN"
        ]
    );
    let symptoms: Vec<&str> = hospital::Symptom::ALL
        .iter()
        .map(|s| s.code().code)
        .collect();
    let example = example("DiseaseHospitalizationNotificationExample.json");
    let condition = resource(&example, "Condition");
    assert_eq!(
        symptoms,
        codes(&condition["evidence"], "/code/0/coding/0/code")
    );
}

#[test]
fn docs_fhir_demis_lists_every_value_of_the_form() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/fhir-demis.md"),
    )
    .unwrap();
    let row = |value: serde_json::Value, code: meldewerk_fhir::codes::Code| {
        format!(
            "| `{}` | `{}` | {} |",
            value.as_str().unwrap(),
            code.code,
            code.display
        )
    };
    let rows = YesNo::ALL
        .iter()
        .map(|v| row(serde_json::to_value(v).unwrap(), v.code()))
        .chain(
            Department::ALL
                .iter()
                .map(|v| row(serde_json::to_value(v).unwrap(), v.code())),
        )
        .chain(
            hospital::Symptom::ALL
                .iter()
                .map(|v| row(serde_json::to_value(v).unwrap(), v.code())),
        );
    for row in rows {
        assert!(doc.contains(&row), "missing {row}");
    }
}
