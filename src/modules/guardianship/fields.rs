//! The fields of a court form's memento (spec/03 §2.3), in form order; `jobId` is the id.

use crate::module_layer::fields::{field as f, Field, FieldKind, TextPattern};

const EMPFAENGER_TYPE: &[(&str, &str)] = &[("Gericht", "Gericht"), ("Sonstige", "Sonstige Stelle")];

const FAMILIENSTAND: &[(&str, &str)] = &[
    ("Ledig", "ledig"),
    ("Verheiratet", "verheiratet"),
    ("Geschieden", "geschieden"),
    ("Verwitwet", "verwitwet"),
];

/// A SAFE-ID, the address of a mailbox in the EGVP directory (the store's one definition).
pub(super) static SAFE_ID: TextPattern = TextPattern {
    fits: |text| meldewerk_storage::SafeId::parse(text).is_ok(),
    rule: "be a SAFE-ID such as DE.Justiz.1a2b-3c4d (DE, a directory, an id) or \
           safe-<digits>-<digits>",
    hint: "Die SAFE-ID des Gerichtspostfachs, z. B. DE.Justiz.1a2b-3c4d.",
    sample: "DE.Justiz.ag-musterstadt",
    pattern: "^(DE\\.[A-Za-z][A-Za-z0-9_]*\\.[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*|(safe|govello)(-[0-9]+){2,})$",
    max_length: Some(meldewerk_storage::MAX_SAFE_ID_LEN),
};

const ABSENDER: &str = "Absender";
const EMPFAENGER: &str = "Empfänger";
const BETROFFENER: &str = "Betroffene Person";
const MELDUNG: &str = "Meldung";
use FieldKind::*;

/// Every field of the `guardianship` memento except `jobId`.
pub static FIELDS: &[Field] = &[
    f(
        "absender.name",
        "Name der absendenden Stelle",
        Text,
        ABSENDER,
    ),
    f(
        "absender.aktenzeichen",
        "Eigenes Aktenzeichen",
        Text,
        ABSENDER,
    )
    .with_hint("Ihr Aktenzeichen; bleibt es leer, gilt die Vorgangsnummer als Aktenzeichen."),
    f(
        "absender.egvp_account_id",
        "Absendendes Postfach (Konto-Nr.)",
        Integer {
            min: 1,
            max: i64::MAX,
        },
        ABSENDER,
    )
    .with_hint("Die Nummer des EGVP-Postfachs, über das die Nachricht gesendet wird."),
    f(
        "empfaenger.name",
        "Empfangendes Gericht bzw. Stelle",
        Text,
        EMPFAENGER,
    ),
    f(
        "empfaenger.type",
        "Art des Empfängers",
        Choice(EMPFAENGER_TYPE),
        EMPFAENGER,
    ),
    f(
        "empfaenger.safeId",
        "SAFE-ID des Empfängers",
        Pattern(&SAFE_ID),
        EMPFAENGER,
    ),
    f(
        "empfaenger.aktenzeichen",
        "Aktenzeichen des Gerichts",
        Text,
        EMPFAENGER,
    )
    .with_hint("Nur wenn das Verfahren dort schon ein Aktenzeichen hat."),
    f(
        "empfaenger.adresse.strasse",
        "Straße und Hausnummer",
        Text,
        EMPFAENGER,
    ),
    f(
        "empfaenger.adresse.plz",
        "Postleitzahl",
        Postleitzahl,
        EMPFAENGER,
    ),
    f("empfaenger.adresse.stadt", "Ort", Text, EMPFAENGER),
    f("betroffener.name.vorname", "Vorname", Text, BETROFFENER),
    f("betroffener.name.nachname", "Nachname", Text, BETROFFENER),
    f(
        "betroffener.geburtsdatum",
        "Geburtsdatum",
        Date,
        BETROFFENER,
    ),
    f(
        "betroffener.familienstand",
        "Familienstand",
        Choice(FAMILIENSTAND),
        BETROFFENER,
    ),
    f(
        "betroffener.anschrift.strasse",
        "Straße und Hausnummer (Wohnanschrift)",
        Text,
        BETROFFENER,
    ),
    f(
        "betroffener.anschrift.plz",
        "Postleitzahl (Wohnanschrift)",
        Postleitzahl,
        BETROFFENER,
    ),
    f(
        "betroffener.anschrift.stadt",
        "Ort (Wohnanschrift)",
        Text,
        BETROFFENER,
    ),
    f("betroffener.anschriftTelefon", "Telefon", Text, BETROFFENER),
    f(
        "betroffener.gegenwaertigerAufenthalt",
        "Gegenwärtiger Aufenthalt",
        Text,
        BETROFFENER,
    )
    .with_hint("Zum Beispiel Einrichtung, Station und Zimmer."),
    f("meldeZeitpunkt", "Zeitpunkt der Meldung", DateTime, MELDUNG),
];
