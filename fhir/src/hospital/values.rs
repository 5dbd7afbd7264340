//! The typed values of the hospitalisation form that the contract leaves "not shown", derived
//! from `DiseaseHospitalizationNotificationExample.json` (see `docs/fhir-demis.md`).

use serde::{Deserialize, Serialize};

use crate::codes::Code;
use crate::common::SNOMED;

const YES_OR_NO: &str = "https://demis.rki.de/fhir/CodeSystem/yesOrNoAnswer";
const SERVICE_TYPE: &str = "https://demis.rki.de/fhir/CodeSystem/hospitalizationServiceType";

/// An answer of DEMIS' yes-or-no code system (`Hospitalisiert`, `Verstorben`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum YesNo {
    /// `yes`.
    Ja,
    /// `no`.
    Nein,
    /// `ASKU`: asked, but could not be found out.
    NichtErmittelbar,
    /// `NASK`: not asked.
    NichtErhoben,
}

impl YesNo {
    /// Every value, in the order a form offers them.
    pub const ALL: [YesNo; 4] = [
        YesNo::Ja,
        YesNo::Nein,
        YesNo::NichtErmittelbar,
        YesNo::NichtErhoben,
    ];

    /// The code of `yesOrNoAnswer`.
    pub fn code(self) -> Code {
        let (code, display) = match self {
            YesNo::Ja => ("yes", "Ja"),
            YesNo::Nein => ("no", "Nein"),
            YesNo::NichtErmittelbar => ("ASKU", "nicht ermittelbar"),
            YesNo::NichtErhoben => ("NASK", "nicht erhoben"),
        };
        Code::new(YES_OR_NO, code, display)
    }
}

/// The department of a hospitalisation (`ArtDerHospitalisierung`): DEMIS'
/// `hospitalizationServiceType`, the Fachabteilungsschlüssel of § 301 SGB V.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Department {
    /// 0100 Innere Medizin.
    InnereMedizin,
    /// 0800 Pneumologie.
    Pneumologie,
    /// 1000 Pädiatrie.
    Paediatrie,
    /// 1500 Allgemeine Chirurgie.
    AllgemeineChirurgie,
    /// 3600 Intensivmedizin (the example's intensive-care stay).
    Intensivmedizin,
}

impl Department {
    /// Every value, in the order of their keys.
    pub const ALL: [Department; 5] = [
        Department::InnereMedizin,
        Department::Pneumologie,
        Department::Paediatrie,
        Department::AllgemeineChirurgie,
        Department::Intensivmedizin,
    ];

    /// The code of `hospitalizationServiceType`.
    pub fn code(self) -> Code {
        let (code, display) = match self {
            Department::InnereMedizin => ("0100", "Innere Medizin"),
            Department::Pneumologie => ("0800", "Pneumologie"),
            Department::Paediatrie => ("1000", "Pädiatrie"),
            Department::AllgemeineChirurgie => ("1500", "Allgemeine Chirurgie"),
            Department::Intensivmedizin => ("3600", "Intensivmedizin"),
        };
        Code::new(SERVICE_TYPE, code, display)
    }
}

/// A symptom (`MedizinischeInformationen.Symptome`): the example's `Condition.evidence`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[allow(missing_docs)] // each variant's code and display text say what it is
pub enum Symptom {
    Fieber,
    Halsschmerzen,
    Husten,
    Pneumonie,
    Schnupfen,
    Ards,
    Beatmung,
    Dyspnoe,
    Durchfall,
    Geruchsverlust,
    Geschmacksverlust,
    Tachypnoe,
    Tachykardie,
    AllgemeineKrankheitszeichen,
    Schuettelfrost,
    Kopfschmerzen,
    Muskelschmerzen,
}

impl Symptom {
    /// Every symptom, in the example's order.
    pub const ALL: [Symptom; 17] = [
        Symptom::Fieber,
        Symptom::Halsschmerzen,
        Symptom::Husten,
        Symptom::Pneumonie,
        Symptom::Schnupfen,
        Symptom::Ards,
        Symptom::Beatmung,
        Symptom::Dyspnoe,
        Symptom::Durchfall,
        Symptom::Geruchsverlust,
        Symptom::Geschmacksverlust,
        Symptom::Tachypnoe,
        Symptom::Tachykardie,
        Symptom::AllgemeineKrankheitszeichen,
        Symptom::Schuettelfrost,
        Symptom::Kopfschmerzen,
        Symptom::Muskelschmerzen,
    ];

    /// The SNOMED CT code.
    pub fn code(self) -> Code {
        let (code, display) = match self {
            Symptom::Fieber => ("386661006", "Fever (finding)"),
            Symptom::Halsschmerzen => ("267102003", "Sore throat symptom (finding)"),
            Symptom::Husten => ("49727002", "Cough (finding)"),
            Symptom::Pneumonie => ("233604007", "Pneumonia (disorder)"),
            Symptom::Schnupfen => ("275280004", "Sniffles (finding)"),
            Symptom::Ards => ("67782005", "Acute respiratory distress syndrome (disorder)"),
            Symptom::Beatmung => ("371820004", "Patient ventilated (finding)"),
            Symptom::Dyspnoe => ("267036007", "Dyspnea (finding)"),
            Symptom::Durchfall => ("62315008", "Diarrhea (finding)"),
            Symptom::Geruchsverlust => ("44169009", "Loss of sense of smell (finding)"),
            Symptom::Geschmacksverlust => ("36955009", "Loss of taste (finding)"),
            Symptom::Tachypnoe => ("271823003", "Tachypnea (finding)"),
            Symptom::Tachykardie => ("3424008", "Tachycardia (finding)"),
            Symptom::AllgemeineKrankheitszeichen => ("213257006", "Generally unwell (finding)"),
            Symptom::Schuettelfrost => ("43724002", "Chill (finding)"),
            Symptom::Kopfschmerzen => ("25064002", "Headache (finding)"),
            Symptom::Muskelschmerzen => ("68962001", "Muscle pain (finding)"),
        };
        Code::new(SNOMED, code, display)
    }
}
