//! The field tables of `labreport`: the memento's (spec/02 §2.1, contract 0.3.0: a flat
//! `MeldendeEinrichtung`), and the findings each disease's form adds (the codes
//! [`meldewerk_fhir::codes`] offers for the disease).

use std::sync::LazyLock;

use meldewerk_fhir::codes::{Code, Disease, Interpretation};
use meldewerk_fhir::BirthMonth;

use crate::demis::{EMAIL, GESCHLECHT, NEUN_ZIFFERN};
use crate::module_layer::fields::field;
use crate::module_layer::{Field, FieldKind, TextPattern};

/// A birth month and year, `YYYY-MM`.
static GEBURTSMONAT: TextPattern = TextPattern {
    fits: |text| BirthMonth::parse(text).is_some(),
    rule: "must be a month YYYY-MM",
    hint: "Monat und Jahr im Format JJJJ-MM, z. B. 1975-04",
    sample: "1975-04",
    // Year 0000 is no year (FHIR's gYearMonth starts at 0001).
    pattern: "^(000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})-(0[1-9]|1[0-2])$",
    max_length: None,
};

/// The memento's fields (every member besides `reportId`), in the order of the form.
pub(super) static FIELDS: &[Field] = &[
    field("MeldungsDatum", "Meldedatum", FieldKind::Date, "Meldung"),
    field(
        "MeldungsVerweisId",
        "Bezug auf Meldung (Kennung)",
        FieldKind::Text,
        "Meldung",
    )
    .with_hint("Nur bei Korrektur- oder Folgemeldungen"),
    field(
        "Patient.IsAnonym",
        "Nichtnamentliche Meldung (anonyme Person)",
        FieldKind::Bool,
        "Betroffene Person",
    )
    .with_hint("Angekreuzt gelten nur die Angaben unter „Anonyme Person“"),
    field(
        "Patient.Standard.Name.Vorname",
        "Vorname",
        FieldKind::Text,
        "Betroffene Person",
    ),
    field(
        "Patient.Standard.Name.Nachname",
        "Nachname",
        FieldKind::Text,
        "Betroffene Person",
    ),
    field(
        "Patient.Standard.Geschlecht",
        "Geschlecht",
        FieldKind::Choice(GESCHLECHT),
        "Betroffene Person",
    ),
    field(
        "Patient.Standard.Geburtsdatum",
        "Geburtsdatum",
        FieldKind::Date,
        "Betroffene Person",
    ),
    field(
        "Patient.Standard.Adresse.Strasse",
        "Straße und Hausnummer",
        FieldKind::Text,
        "Betroffene Person",
    ),
    field(
        "Patient.Standard.Adresse.PLZ",
        "Postleitzahl",
        FieldKind::Text,
        "Betroffene Person",
    ),
    field(
        "Patient.Standard.Adresse.Stadt",
        "Ort",
        FieldKind::Text,
        "Betroffene Person",
    ),
    field(
        "Patient.Standard.Adresse.Land",
        "Land",
        FieldKind::Text,
        "Betroffene Person",
    ),
    field(
        "Patient.Standard.Kontakt.Telefon",
        "Telefon",
        FieldKind::Text,
        "Betroffene Person",
    ),
    field(
        "Patient.Standard.Kontakt.Email",
        "E-Mail",
        FieldKind::Pattern(&EMAIL),
        "Betroffene Person",
    ),
    field(
        "Patient.Anonym.Geschlecht",
        "Geschlecht",
        FieldKind::Choice(GESCHLECHT),
        "Anonyme Person",
    ),
    field(
        "Patient.Anonym.GeburtsmonatJahr",
        "Geburtsmonat",
        FieldKind::Pattern(&GEBURTSMONAT),
        "Anonyme Person",
    ),
    field(
        "Patient.Anonym.Adresse.PLZ",
        "Postleitzahl",
        FieldKind::Text,
        "Anonyme Person",
    ),
    field(
        "Patient.Anonym.Adresse.Land",
        "Land",
        FieldKind::Text,
        "Anonyme Person",
    ),
    field(
        "MeldendeEinrichtung.BSNR",
        "Betriebsstättennummer (BSNR)",
        FieldKind::Pattern(&NEUN_ZIFFERN),
        "Meldende Einrichtung",
    )
    .with_hint("Name und Anschrift kommen aus dem Einrichtungsregister"),
    field(
        "MeldendeEinrichtung.Telefon",
        "Telefon",
        FieldKind::Text,
        "Meldende Einrichtung",
    ),
    field(
        "MeldendeEinrichtung.Email",
        "E-Mail",
        FieldKind::Pattern(&EMAIL),
        "Meldende Einrichtung",
    ),
    field(
        "MeldendePerson.Name.Vorname",
        "Vorname",
        FieldKind::Text,
        "Meldende Person",
    ),
    field(
        "MeldendePerson.Name.Nachname",
        "Nachname",
        FieldKind::Text,
        "Meldende Person",
    ),
    field(
        "MeldendePerson.Kontakt.Telefon",
        "Telefon",
        FieldKind::Text,
        "Meldende Person",
    ),
    field(
        "MeldendePerson.Kontakt.Email",
        "E-Mail",
        FieldKind::Pattern(&EMAIL),
        "Meldende Person",
    ),
    field(
        "EinsendendeEinrichtung.EinrichtungsName",
        "Name",
        FieldKind::Text,
        "Einsendende Einrichtung",
    ),
    field(
        "EinsendendeEinrichtung.Adresse.Strasse",
        "Straße und Hausnummer",
        FieldKind::Text,
        "Einsendende Einrichtung",
    ),
    field(
        "EinsendendeEinrichtung.Adresse.PLZ",
        "Postleitzahl",
        FieldKind::Text,
        "Einsendende Einrichtung",
    ),
    field(
        "EinsendendeEinrichtung.Adresse.Stadt",
        "Ort",
        FieldKind::Text,
        "Einsendende Einrichtung",
    ),
    field(
        "EinsendendeEinrichtung.Kontakt.Telefon",
        "Telefon",
        FieldKind::Text,
        "Einsendende Einrichtung",
    ),
    field(
        "EinsendendeEinrichtung.Kontakt.Email",
        "E-Mail",
        FieldKind::Pattern(&EMAIL),
        "Einsendende Einrichtung",
    ),
];

/// Paths of the findings every disease form adds.
pub(super) const TEST: &str = "Befund.Test";
pub(super) const METHODE: &str = "Befund.Methode";
pub(super) const MATERIAL: &str = "Befund.Material";
pub(super) const ERGEBNIS: &str = "Befund.Ergebnis";
pub(super) const BEURTEILUNG: &str = "Befund.Beurteilung";

/// What the form asks for a detection's result, the values those of [`Interpretation`].
static ERGEBNISSE: &[(&str, &str)] = &[
    ("POSITIVE", "Erreger nachgewiesen"),
    ("NEGATIVE", "Erreger nicht nachgewiesen"),
];

/// A disease's codes as the options of a choice: the code, and its display beside it.
fn options(codes: &'static [Code]) -> &'static [(&'static str, &'static str)] {
    // Built once per disease at start-up and kept for the process, like the field tables.
    codes
        .iter()
        .map(|code| {
            let label: &'static str = Box::leak(format!("{} ({})", code.display, code.code).into());
            (code.code, label)
        })
        .collect::<Vec<_>>()
        .leak()
}

/// The findings of each disease's form, in the order of [`Disease::ALL`].
pub(super) static FINDINGS: LazyLock<[&'static [Field]; 4]> = LazyLock::new(|| {
    Disease::ALL.map(|disease| {
        let codes = disease.codes();
        let section = "Befund";
        let table = vec![
            field(
                TEST,
                "Untersuchung",
                FieldKind::Choice(options(codes.tests)),
                section,
            ),
            field(
                METHODE,
                "Methode",
                FieldKind::Choice(options(codes.methods)),
                section,
            ),
            field(
                MATERIAL,
                "Material",
                FieldKind::Choice(options(codes.materials)),
                section,
            ),
            field(ERGEBNIS, "Ergebnis", FieldKind::Choice(ERGEBNISSE), section),
            field(BEURTEILUNG, "Beurteilung", FieldKind::Text, section)
                .with_hint("Freitext des Labors, optional"),
        ];
        &*table.leak()
    })
});

/// The result of the form's `Befund.Ergebnis` value.
pub(super) fn interpretation(value: &str) -> Option<Interpretation> {
    Interpretation::ALL.into_iter().find(|i| {
        serde_json::to_value(i)
            .ok()
            .is_some_and(|v| v.as_str() == Some(value))
    })
}

/// The label of a field of the memento's table or of a disease's findings.
pub(super) fn label(path: &str) -> &'static str {
    FIELDS
        .iter()
        .chain(FINDINGS[0].iter())
        .find(|f| f.path == path)
        .map_or("Angabe", |f| f.label)
}
