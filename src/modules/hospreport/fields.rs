//! The fields of the hospitalisation report (spec/02 §2.3), in form order, and the value lists
//! the contract leaves "not shown" (decided in `docs/decisions.md`, "The hospitalisation
//! report", from the DEMIS example and `meldewerk_fhir::hospital`).

use std::sync::LazyLock;

use crate::module_layer::fields::{Field, FieldKind, TableBuilder};

use FieldKind::*;

/// `Patient.Geschlecht`: the gender values of the health modules (`codes::Gender`).
pub(super) use crate::demis::GESCHLECHT;

/// `Hospitalisiert`, `Verstorben`: DEMIS' `yesOrNoAnswer` (`hospital::YesNo`).
pub(super) const JA_NEIN: &[(&str, &str)] = &[
    ("JA", "ja"),
    ("NEIN", "nein"),
    ("NICHT_ERMITTELBAR", "nicht ermittelbar"),
    ("NICHT_ERHOBEN", "nicht erhoben"),
];

/// `ArtDerHospitalisierung`: DEMIS' `hospitalizationServiceType` (`hospital::Department`).
pub(super) const ABTEILUNG: &[(&str, &str)] = &[
    ("INNERE_MEDIZIN", "Innere Medizin (0100)"),
    ("PNEUMOLOGIE", "Pneumologie (0800)"),
    ("PAEDIATRIE", "Pädiatrie (1000)"),
    ("ALLGEMEINE_CHIRURGIE", "Allgemeine Chirurgie (1500)"),
    ("INTENSIVMEDIZIN", "Intensivmedizin (3600)"),
];

/// `MedizinischeInformationen.Symptome`: one yes/no member per symptom of
/// `hospital::Symptom` (`{"FIEBER": true}`), a checkbox each in the form.
pub(super) const SYMPTOME: &[(&str, &str)] = &[
    ("FIEBER", "Fieber"),
    ("HALSSCHMERZEN", "Halsschmerzen"),
    ("HUSTEN", "Husten"),
    ("PNEUMONIE", "Pneumonie"),
    ("SCHNUPFEN", "Schnupfen"),
    ("ARDS", "Akutes Lungenversagen (ARDS)"),
    ("BEATMUNG", "Beatmung"),
    ("DYSPNOE", "Atemnot (Dyspnoe)"),
    ("DURCHFALL", "Durchfall"),
    ("GERUCHSVERLUST", "Geruchsverlust"),
    ("GESCHMACKSVERLUST", "Geschmacksverlust"),
    ("TACHYPNOE", "beschleunigte Atmung (Tachypnoe)"),
    ("TACHYKARDIE", "beschleunigter Herzschlag (Tachykardie)"),
    (
        "ALLGEMEINE_KRANKHEITSZEICHEN",
        "allgemeine Krankheitszeichen",
    ),
    ("SCHUETTELFROST", "Schüttelfrost"),
    ("KOPFSCHMERZEN", "Kopfschmerzen"),
    ("MUSKELSCHMERZEN", "Muskelschmerzen"),
];

/// BSNR, IK and LANR (nine digits each), and e-mail addresses: the patterns of the health
/// modules.
pub(super) use crate::demis::{EMAIL, NEUN_ZIFFERN};

/// The table, in form order; built once, since the symptoms are a row each.
pub(super) static FIELDS: LazyLock<Vec<Field>> = LazyLock::new(|| {
    let mut table = TableBuilder::default();
    table
        .section("Meldung")
        .field("MeldeDatum", "Meldedatum", Date)
        .section("Patient")
        .field("Patient.Vorname", "Vorname", Text)
        .field("Patient.Name", "Name", Text)
        .field("Patient.Geburtsdatum", "Geburtsdatum", Date)
        .field("Patient.Geschlecht", "Geschlecht", Choice(GESCHLECHT))
        .field("Patient.Adresse.Strasse", "Straße", Text)
        .field("Patient.Adresse.Hausnummer", "Hausnummer", Text)
        .field("Patient.Adresse.PLZ", "Postleitzahl", Text)
        .field("Patient.Adresse.Stadt", "Ort", Text)
        .field(
            "Patient.Adresse.inDeutschland",
            "Wohnort in Deutschland",
            Bool,
        )
        .field("Patient.Kontakt.Telefon", "Telefon", Text)
        .field("Patient.Kontakt.Email", "E-Mail", Pattern(&EMAIL))
        .section("Medizinische Informationen")
        .field(
            "MedizinischeInformationen.Erkrankungsbeginn",
            "Erkrankungsbeginn",
            Date,
        )
        .field(
            "MedizinischeInformationen.Diagnosedatum",
            "Diagnosedatum",
            Date,
        );
    for (code, label) in SYMPTOME {
        table.field(
            format!("MedizinischeInformationen.Symptome.{code}"),
            format!("Symptom: {label}"),
            Bool,
        );
    }
    table
        .field("MedizinischeInformationen.Hinweis", "Hinweis", Text)
        .section("Klinische Angaben")
        .field(
            "KlinischeAngaben.Hospitalisiert",
            "Hospitalisiert",
            Choice(JA_NEIN),
        )
        .field(
            "KlinischeAngaben.Hospitalisierung.AufnahmeAm",
            "Aufnahme am",
            Date,
        )
        .field(
            "KlinischeAngaben.Hospitalisierung.EntlassungAm",
            "Entlassung am",
            Date,
        )
        .field(
            "KlinischeAngaben.Hospitalisierung.ArtDerHospitalisierung",
            "Fachabteilung",
            Choice(ABTEILUNG),
        )
        .field(
            "KlinischeAngaben.Hospitalisierung.IntensivBehandlung",
            "Intensivbehandlung",
            Bool,
        )
        .field(
            "KlinischeAngaben.Hospitalisierung.IntensivBehandlungVon",
            "Intensivbehandlung seit",
            Date,
        )
        .field("KlinischeAngaben.Verstorben", "Verstorben", Choice(JA_NEIN))
        .field("KlinischeAngaben.Todesdatum", "Todesdatum", Date)
        .section("Meldende Einrichtung")
        .field("MeldendeEinrichtung.Name", "Name der Einrichtung", Text)
        .field("MeldendeEinrichtung.BSNR", "BSNR", Pattern(&NEUN_ZIFFERN))
        .field(
            "MeldendeEinrichtung.IK_Nummer",
            "IK-Nummer",
            Pattern(&NEUN_ZIFFERN),
        )
        .field(
            "MeldendeEinrichtung.Adresse.Strasse",
            "Straße und Hausnummer",
            Text,
        )
        .field("MeldendeEinrichtung.Adresse.PLZ", "Postleitzahl", Text)
        .field("MeldendeEinrichtung.Adresse.Stadt", "Ort", Text)
        .field("MeldendeEinrichtung.Adresse.Land", "Land", Text)
        .section("Ärztin oder Arzt")
        .field("Arzt.Titel", "Titel", Text)
        .field("Arzt.Vorname", "Vorname", Text)
        .field("Arzt.Nachname", "Nachname", Text)
        .field("Arzt.LANR", "LANR", Pattern(&NEUN_ZIFFERN))
        .field("Arzt.Kontakt.Telefon", "Telefon", Text);
    table.build()
});

/// The label of the field at `path`.
pub(super) fn label(path: &str) -> String {
    crate::module_layer::fields::label(&FIELDS, path).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use meldewerk_fhir::codes::Gender;
    use meldewerk_fhir::hospital::{Department, Symptom, YesNo};

    /// Each option list names the typed values in their order, by the values' own serde names.
    #[test]
    fn the_option_lists_are_the_typed_values_in_order() {
        fn names<T: serde::Serialize>(all: &[T]) -> Vec<String> {
            all.iter()
                .map(|v| {
                    serde_json::to_value(v)
                        .unwrap()
                        .as_str()
                        .unwrap()
                        .to_owned()
                })
                .collect()
        }
        let options = |list: &[(&str, &str)]| -> Vec<String> {
            list.iter().map(|(v, _)| (*v).to_owned()).collect()
        };
        assert_eq!(options(GESCHLECHT), names(&Gender::ALL));
        assert_eq!(options(JA_NEIN), names(&YesNo::ALL));
        assert_eq!(options(ABTEILUNG), names(&Department::ALL));
        assert_eq!(options(SYMPTOME), names(&Symptom::ALL));
    }
}
