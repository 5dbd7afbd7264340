//! The fields of a bed occupancy report (spec/02 §2.5), in form order. `reportId` is the layer's
//! (the module's id member).

use crate::module_layer::fields::{field as f, Field, FieldKind, TextPattern};

const STANDORT: &str = "Standort";
const BETTEN: &str = "Betten";
use FieldKind::*;

/// Most beds of one kind a location may report: far above any real ward (the largest German
/// hospitals run some 3,000 beds over all their locations), low enough to catch a typo.
pub(crate) const MAX_BEDS: i64 = 100_000;

/// The hospital location's id in the InEK location register: six digits.
pub(crate) static STANDORT_ID: TextPattern = TextPattern {
    fits: |s| s.len() == 6 && s.bytes().all(|b| b.is_ascii_digit()),
    rule: "must be 6 digits",
    hint: "Standort-ID nach dem InEK-Standortverzeichnis, 6 Ziffern",
    sample: "987654",
    pattern: "^[0-9]{6}$",
    max_length: None,
};

/// The institution code (Institutionskennzeichen): nine digits, the registry's rule.
pub(crate) static IK_NUMMER: TextPattern = TextPattern {
    fits: |s| meldewerk_storage::Ik::parse(s).is_ok(),
    rule: "must be 9 digits",
    hint: "Institutionskennzeichen, 9 Ziffern",
    sample: "261101015",
    pattern: "^[0-9]{9}$",
    max_length: None,
};

const BEDS: FieldKind = Integer {
    min: 0,
    max: MAX_BEDS,
};

/// The two counts a report must have (the occupied beds), then the two it may have.
pub(crate) const OCCUPIED: [&str; 2] = [
    "numbers.erwachsenen_betten_belegt",
    "numbers.kinder_betten_belegt",
];

/// The hospital details a direct submission (and the form) must give besides the counts.
pub(crate) const DETAILS: [&str; 7] = [
    "StandortId",
    "IK_Nummer",
    "Standortname",
    "Strasse",
    "Hausnummer",
    "PLZ",
    "Ort",
];

/// Every field of the `bedreport` request except `reportId`.
pub static FIELDS: &[Field] = &[
    f("dateOfReport", "Datum des Berichts", Date, STANDORT)
        .with_hint("Leer lassen für den Tag des Absendens."),
    f("StandortId", "Standort-ID", Pattern(&STANDORT_ID), STANDORT),
    f(
        "IK_Nummer",
        "Institutionskennzeichen (IK)",
        Pattern(&IK_NUMMER),
        STANDORT,
    ),
    f("Standortname", "Name des Standorts", Text, STANDORT),
    f("Strasse", "Straße", Text, STANDORT),
    f("Hausnummer", "Hausnummer", Text, STANDORT),
    f("PLZ", "Postleitzahl", Postleitzahl, STANDORT),
    f("Ort", "Ort", Text, STANDORT),
    f("Telefon", "Telefon", Text, STANDORT),
    f(
        "numbers.erwachsenen_betten_belegt",
        "Belegte Betten, Erwachsene",
        BEDS,
        BETTEN,
    ),
    f(
        "numbers.erwachsenen_betten_betrieben",
        "Betriebene Betten, Erwachsene",
        BEDS,
        BETTEN,
    ),
    f(
        "numbers.kinder_betten_belegt",
        "Belegte Betten, Kinder",
        BEDS,
        BETTEN,
    ),
    f(
        "numbers.kinder_betten_betrieben",
        "Betriebene Betten, Kinder",
        BEDS,
        BETTEN,
    ),
];
