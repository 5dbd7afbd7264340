//! The code tables of the laboratory notification, in one place: per disease the pathogen
//! (DEMIS notification category), the tests (LOINC), methods and materials (SNOMED CT) a
//! form offers, the interpretations, and the gender values shared by the health modules.
//!
//! A form lists a disease's [`DiseaseCodes`]; the builder looks the chosen codes up here again
//! and refuses any other, so a bundle only ever carries codes of this table.

use serde::{Deserialize, Serialize};

use crate::common::{LOINC, SNOMED};
use crate::resources::Coding;

/// One code of a code system, with the display text DEMIS uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Code {
    /// The code system's URL.
    pub system: &'static str,
    /// The code.
    pub code: &'static str,
    /// The display text.
    pub display: &'static str,
}

impl Code {
    /// A code of `system`.
    pub const fn new(system: &'static str, code: &'static str, display: &'static str) -> Self {
        Code {
            system,
            code,
            display,
        }
    }

    /// The code as a FHIR `Coding`.
    pub fn coding(&self) -> Coding {
        Coding::new(self.system, self.code, self.display)
    }
}

const fn loinc(code: &'static str, display: &'static str) -> Code {
    Code::new(LOINC, code, display)
}

const fn snomed(code: &'static str, display: &'static str) -> Code {
    Code::new(SNOMED, code, display)
}

const CATEGORY: &str = "https://demis.rki.de/fhir/CodeSystem/notificationCategory";
const INTERPRETATION: &str = "http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation";

/// A disease a laboratory form reports; the names are the contract's `diseaseCode` values and
/// the route segments of the disease forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Disease {
    /// Influenza virus.
    Influenza,
    /// Respiratory syncytial virus.
    Rsv,
    /// Norovirus.
    Norovirus,
    /// SARS-CoV-2.
    Sarscov2,
}

impl Disease {
    /// Every disease, in the order the disease index page lists them.
    pub const ALL: [Disease; 4] = [
        Disease::Influenza,
        Disease::Rsv,
        Disease::Norovirus,
        Disease::Sarscov2,
    ];

    /// The contract's `diseaseCode` (also the route segment).
    pub fn code(self) -> &'static str {
        match self {
            Disease::Influenza => "Influenza",
            Disease::Rsv => "Rsv",
            Disease::Norovirus => "Norovirus",
            Disease::Sarscov2 => "Sarscov2",
        }
    }

    /// The disease of a `diseaseCode`.
    pub fn from_code(code: &str) -> Option<Disease> {
        Disease::ALL.into_iter().find(|d| d.code() == code)
    }

    /// The disease's code table.
    pub fn codes(self) -> &'static DiseaseCodes {
        match self {
            Disease::Influenza => &INFLUENZA,
            Disease::Rsv => &RSV,
            Disease::Norovirus => &NOROVIRUS,
            Disease::Sarscov2 => &SARSCOV2,
        }
    }
}

/// What a disease's form offers, and the DEMIS names that depend on the disease.
#[derive(Debug)]
pub struct DiseaseCodes {
    /// The pathogen: `DiagnosticReport.code` (DEMIS notification category).
    pub pathogen: Code,
    /// The suffix of the disease's DEMIS profiles (`LaboratoryReportCVDP`, …), upper case.
    pub profile_suffix: &'static str,
    /// The tests: `Observation.code` (LOINC).
    pub tests: &'static [Code],
    /// The methods: `Observation.method` (SNOMED CT).
    pub methods: &'static [Code],
    /// The materials: `Specimen.type` (SNOMED CT).
    pub materials: &'static [Code],
}

impl DiseaseCodes {
    /// The test of `code`, if the disease's form offers it.
    pub fn test(&self, code: &str) -> Option<&'static Code> {
        self.tests.iter().find(|c| c.code == code)
    }

    /// The method of `code`, if offered.
    pub fn method(&self, code: &str) -> Option<&'static Code> {
        self.methods.iter().find(|c| c.code == code)
    }

    /// The material of `code`, if offered.
    pub fn material(&self, code: &str) -> Option<&'static Code> {
        self.materials.iter().find(|c| c.code == code)
    }
}

const NUCLEIC_ACID: Code = snomed("398545005", "Nucleic acid assay (procedure)");
const ANTIGEN: Code = snomed("121276004", "Antigen assay (procedure)");
const UPPER_RESPIRATORY_SWAB: Code =
    snomed("309164002", "Upper respiratory swab sample (specimen)");
const NASOPHARYNGEAL_SWAB: Code = snomed("258500001", "Nasopharyngeal swab (specimen)");

static SARSCOV2: DiseaseCodes = DiseaseCodes {
    pathogen: Code::new(CATEGORY, "cvdp", "Severe-Acute-Respiratory-Syndrome-Coronavirus-2 (SARS-CoV-2)"),
    profile_suffix: "CVDP",
    tests: &[
        loinc(
            "94660-8",
            "SARS-CoV-2 (COVID-19) RNA [Presence] in Serum or Plasma by NAA with probe detection",
        ),
        loinc(
            "94500-6",
            "SARS-CoV-2 (COVID-19) RNA [Presence] in Respiratory specimen by NAA with probe detection",
        ),
        loinc(
            "94558-4",
            "SARS-CoV-2 (COVID-19) Ag [Presence] in Respiratory specimen by Rapid immunoassay",
        ),
    ],
    methods: &[NUCLEIC_ACID, ANTIGEN],
    materials: &[
        UPPER_RESPIRATORY_SWAB,
        NASOPHARYNGEAL_SWAB,
        snomed("119342007", "Saliva specimen (specimen)"),
    ],
};

static INFLUENZA: DiseaseCodes = DiseaseCodes {
    pathogen: Code::new(
        CATEGORY,
        "invp",
        "Influenzavirus; Meldepflicht nur für den direkten Nachweis",
    ),
    profile_suffix: "INVP",
    tests: &[
        loinc(
            "92142-9",
            "Influenza virus A RNA [Presence] in Respiratory specimen by NAA with probe detection",
        ),
        loinc(
            "92141-1",
            "Influenza virus B RNA [Presence] in Respiratory specimen by NAA with probe detection",
        ),
        loinc(
            "80382-5",
            "Influenza virus A Ag [Presence] in Upper respiratory specimen by Rapid immunoassay",
        ),
        loinc(
            "80381-7",
            "Influenza virus B Ag [Presence] in Upper respiratory specimen by Rapid immunoassay",
        ),
    ],
    methods: &[NUCLEIC_ACID, ANTIGEN],
    materials: &[
        NASOPHARYNGEAL_SWAB,
        UPPER_RESPIRATORY_SWAB,
        snomed(
            "258607008",
            "Bronchoalveolar lavage fluid sample (specimen)",
        ),
    ],
};

static RSV: DiseaseCodes = DiseaseCodes {
    pathogen: Code::new(CATEGORY, "rsvp", "Respiratorisches Synzytial-Virus (RSV)"),
    profile_suffix: "RSVP",
    tests: &[
        loinc(
            "92131-2",
            "Respiratory syncytial virus RNA [Presence] in Respiratory specimen by NAA with probe detection",
        ),
        loinc(
            "72885-7",
            "Respiratory syncytial virus Ag [Presence] in Nasopharynx by Rapid immunoassay",
        ),
    ],
    methods: &[NUCLEIC_ACID, ANTIGEN],
    materials: &[
        NASOPHARYNGEAL_SWAB,
        snomed("258411007", "Nasopharyngeal aspirate (specimen)"),
        UPPER_RESPIRATORY_SWAB,
    ],
};

// The two LOINC codes below are not in the DEMIS examples; docs/fhir-demis.md marks them as
// to be confirmed against DEMIS' value set of the NOVP profiles before production.
static NOROVIRUS: DiseaseCodes = DiseaseCodes {
    pathogen: Code::new(CATEGORY, "novp", "Norovirus"),
    profile_suffix: "NOVP",
    tests: &[
        loinc(
            "49610-9",
            "Norovirus genogroup I RNA [Presence] in Stool by NAA with probe detection",
        ),
        loinc(
            "49611-7",
            "Norovirus genogroup II RNA [Presence] in Stool by NAA with probe detection",
        ),
    ],
    methods: &[NUCLEIC_ACID, ANTIGEN],
    materials: &[
        snomed("119339001", "Stool specimen (specimen)"),
        snomed("168138009", "Vomitus specimen (specimen)"),
    ],
};

/// The result of a pathogen detection, as the form offers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Interpretation {
    /// Pathogen detected.
    Positive,
    /// Pathogen not detected.
    Negative,
}

impl Interpretation {
    /// Both, positive first.
    pub const ALL: [Interpretation; 2] = [Interpretation::Positive, Interpretation::Negative];

    /// `Observation.interpretation` (HL7 v3 ObservationInterpretation).
    pub fn code(self) -> Code {
        match self {
            Interpretation::Positive => Code::new(INTERPRETATION, "POS", "Positive"),
            Interpretation::Negative => Code::new(INTERPRETATION, "NEG", "Negative"),
        }
    }

    /// `Observation.valueCodeableConcept` (LOINC answer).
    pub fn value(self) -> Code {
        match self {
            Interpretation::Positive => loinc("LA11882-0", "Detected"),
            Interpretation::Negative => loinc("LA11883-8", "Not detected"),
        }
    }

    /// `DiagnosticReport.conclusionCode` (DEMIS conclusion code).
    pub fn conclusion(self) -> Code {
        const CONCLUSION: &str = "https://demis.rki.de/fhir/CodeSystem/conclusionCode";
        match self {
            Interpretation::Positive => Code::new(
                CONCLUSION,
                "pathogenDetected",
                "Meldepflichtiger Erreger nachgewiesen",
            ),
            Interpretation::Negative => Code::new(
                CONCLUSION,
                "pathogenNotDetected",
                "Meldepflichtiger Erreger nicht nachgewiesen",
            ),
        }
    }
}

/// The contract's gender values (`Geschlecht`), shared by the health modules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Gender {
    /// Not asked.
    #[serde(rename = "NASK")]
    NotAsked,
    /// Asked but unknown.
    #[serde(rename = "ASKU")]
    AskedUnknown,
    /// Male.
    #[serde(rename = "MAENNLICH")]
    Male,
    /// Female.
    #[serde(rename = "WEIBLICH")]
    Female,
    /// Diverse (German civil-status value D).
    #[serde(rename = "DIVERS")]
    Diverse,
    /// Indeterminate (German civil-status value X, no entry).
    #[serde(rename = "UNBESTIMMT")]
    Indeterminate,
}

impl Gender {
    /// Every value, in the contract's order.
    pub const ALL: [Gender; 6] = [
        Gender::NotAsked,
        Gender::AskedUnknown,
        Gender::Male,
        Gender::Female,
        Gender::Diverse,
        Gender::Indeterminate,
    ];

    /// `Patient.gender`, and the German civil-status code (`gender-amtlich-de`) that
    /// qualifies `other`. Not asked writes no gender at all.
    pub fn fhir(self) -> Option<(&'static str, Option<Code>)> {
        const AMTLICH: &str = "http://fhir.de/CodeSystem/gender-amtlich-de";
        match self {
            Gender::NotAsked => None,
            Gender::AskedUnknown => Some(("unknown", None)),
            Gender::Male => Some(("male", None)),
            Gender::Female => Some(("female", None)),
            Gender::Diverse => Some(("other", Some(Code::new(AMTLICH, "D", "divers")))),
            Gender::Indeterminate => Some(("other", Some(Code::new(AMTLICH, "X", "unbestimmt")))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_disease_round_trips_its_code_and_has_a_full_table() {
        for disease in Disease::ALL {
            assert_eq!(Disease::from_code(disease.code()), Some(disease));
            let codes = disease.codes();
            assert!(!codes.tests.is_empty() && !codes.methods.is_empty());
            assert!(!codes.materials.is_empty());
            assert_eq!(codes.profile_suffix, codes.pathogen.code.to_uppercase());
            for code in codes.tests {
                assert_eq!(code.system, LOINC);
                assert_eq!(codes.test(code.code), Some(code));
            }
        }
        assert_eq!(Disease::from_code("sarscov2"), None);
    }

    #[test]
    fn the_sars_cov_2_codes_are_those_of_the_demis_example() {
        let codes = Disease::Sarscov2.codes();
        assert_eq!(codes.pathogen.code, "cvdp");
        assert!(codes.test("94660-8").is_some());
        assert!(codes.method("398545005").is_some());
        assert!(codes.material("309164002").is_some());
    }

    #[test]
    fn gender_values_are_the_contracts() {
        let names: Vec<String> = Gender::ALL
            .iter()
            .map(|g| {
                serde_json::to_value(g)
                    .unwrap()
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_eq!(
            names,
            [
                "NASK",
                "ASKU",
                "MAENNLICH",
                "WEIBLICH",
                "DIVERS",
                "UNBESTIMMT"
            ]
        );
    }
}
