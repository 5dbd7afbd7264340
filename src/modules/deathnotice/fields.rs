//! The fields of the three death-notice slots (spec/01 §2.4, shaped after the messages in
//! `docs/xpersonenstand-084.md`), in form order.
//!
//! The three slots share most of their parts (the reporter, the deceased, the time and place of
//! death), so each part is written once, relative to its slot, and the table puts the slot name in
//! front of every path when it is first used. The table is built once per process.

use std::sync::LazyLock;

use meldewerk_xml::codelisten::{ERREICHBARKEIT, FAMILIENSTAND, IDENTIFIZIERUNGSART};

use crate::module_layer::fields::{Field, FieldKind};

use FieldKind::*;

/// Values of `verstorbener.geschlecht` (and of the partner's), as the open points answer them.
const GESCHLECHT: &[(&str, &str)] = &[
    ("weiblich", "weiblich"),
    ("maennlich", "männlich"),
    ("divers", "divers"),
    ("unbestimmt", "unbestimmt / ohne Angabe"),
];

/// Kinds of burial (084021): the API's words, which the writer maps to the codes of
/// `meldewerk_xml::codelisten::BESTATTUNGSART`.
const BESTATTUNGSART: &[(&str, &str)] = &[
    ("erdbestattung", "Erdbestattung"),
    ("feuerbestattung", "Feuerbestattung"),
    ("unbekannt", "noch nicht bekannt"),
];

const ANZAHL: FieldKind = Integer { min: 0, max: 99 };

/// One field of a part: path relative to the slot, label, kind.
type Row = (&'static str, &'static str, FieldKind);

/// A form section: its heading and the parts it is made of.
type Section = (&'static str, &'static [&'static [Row]]);

const ANSCHRIFT_AUTOR: &[Row] = &[
    ("anschriftAutor.gebaeude.strasse", "Straße (Absender)", Text),
    (
        "anschriftAutor.gebaeude.hausnummer",
        "Hausnummer (Absender)",
        Hausnummer,
    ),
    (
        "anschriftAutor.gebaeude.postleitzahl",
        "Postleitzahl (Absender)",
        Postleitzahl,
    ),
    ("anschriftAutor.gebaeude.wohnort", "Ort (Absender)", Text),
];

const ANZEIGENDER: &[Row] = &[
    (
        "anzeigender.nameOrganisation",
        "Name der anzeigenden Stelle",
        Text,
    ),
    (
        "anzeigender.ansprechpartner.vornamen",
        "Ansprechpartner: Vornamen",
        Text,
    ),
    (
        "anzeigender.ansprechpartner.familienname",
        "Ansprechpartner: Familienname",
        Text,
    ),
    (
        "anzeigender.ansprechpartner.geburtsname",
        "Ansprechpartner: Geburtsname",
        Text,
    ),
    (
        "anzeigender.anschrift.strasse",
        "Straße und Hausnummer",
        Text,
    ),
    ("anzeigender.anschrift.plz", "Postleitzahl", Postleitzahl),
    ("anzeigender.anschrift.ort", "Ort", Text),
    (
        "anzeigender.kontaktdaten[].kanal",
        "Kontakt: Kanal",
        Code(&ERREICHBARKEIT),
    ),
    (
        "anzeigender.kontaktdaten[].kennung",
        "Kontakt: Adresse oder Nummer",
        Text,
    ),
    ("anzeigender.kontaktdaten[].zusatz", "Kontakt: Zusatz", Text),
];

/// What every slot knows of the deceased.
const VERSTORBENER: &[Row] = &[
    (
        "verstorbener.vorname",
        "Vornamen der verstorbenen Person",
        Text,
    ),
    (
        "verstorbener.familienname",
        "Familienname der verstorbenen Person",
        Text,
    ),
    (
        "verstorbener.geburtsname",
        "Geburtsname der verstorbenen Person",
        Text,
    ),
    (
        "verstorbener.geburtstag",
        "Geburtsdatum der verstorbenen Person",
        Date,
    ),
    (
        "verstorbener.geschlecht",
        "Geschlecht der verstorbenen Person",
        Choice(GESCHLECHT),
    ),
    (
        "verstorbener.letzterWohnsitz.strasse",
        "Letzter Wohnsitz: Straße und Hausnummer",
        Text,
    ),
    (
        "verstorbener.letzterWohnsitz.plz",
        "Letzter Wohnsitz: Postleitzahl",
        Postleitzahl,
    ),
    (
        "verstorbener.letzterWohnsitz.ort",
        "Letzter Wohnsitz: Ort",
        Text,
    ),
];

const VERSTORBENER_BESTATTER: &[Row] = &[
    (
        "verstorbener.familienstand",
        "Familienstand",
        Code(&FAMILIENSTAND),
    ),
    ("verstorbener.vollwaise", "Minderjährige Vollwaise", Bool),
];

const VERSTORBENER_BESCHEINIGUNG: &[Row] = &[
    ("verstorbener.geburtsort", "Geburtsort", Text),
    (
        "verstorbener.identifizierung",
        "Identifizierung",
        Code(&IDENTIFIZIERUNGSART),
    ),
];

/// Time and place of death, in every slot.
const STERBEFALL: &[Row] = &[
    (
        "sterbefall.todeszeitpunkt.todestag.zeitpunkt",
        "Todeszeitpunkt",
        DateTime,
    ),
    (
        "sterbefall.todeszeitpunkt.todestag.uhrzeitExakt",
        "Uhrzeit des Todes ist exakt",
        Bool,
    ),
    (
        "sterbefall.todeszeitpunkt.sterbezeitraum.letzterTagLebend",
        "Zuletzt lebend gesehen am",
        Date,
    ),
    (
        "sterbefall.todeszeitpunkt.sterbezeitraum.letzterTagLebendUhrzeit",
        "Zuletzt lebend gesehen um",
        Time,
    ),
    (
        "sterbefall.todeszeitpunkt.sterbezeitraum.mitSicherheitTotTag",
        "Mit Sicherheit tot am",
        Date,
    ),
    (
        "sterbefall.todeszeitpunkt.sterbezeitraum.mitSicherheitTotUhrzeit",
        "Mit Sicherheit tot um",
        Time,
    ),
    ("sterbefall.sterbeort.strasse", "Sterbeort: Straße", Text),
    (
        "sterbefall.sterbeort.hausnummer",
        "Sterbeort: Hausnummer",
        Text,
    ),
    ("sterbefall.sterbeort.ort", "Sterbeort: Ort", Text),
    ("sterbefall.sterbeort.ortsteil", "Sterbeort: Ortsteil", Text),
];

const STERBEFALL_BESCHEINIGUNG: &[Row] = &[
    (
        "sterbefall.auffindungsort",
        "Der Ort ist der Auffindungsort, nicht der Sterbeort",
        Bool,
    ),
    ("sterbefall.natuerlicherTod", "Natürlicher Tod", Bool),
    ("sterbefall.totgeburt", "Totgeburt", Bool),
];

const LEICHEN_ID: &[Row] = &[("leichenID", "Leichen-ID", Text)];

const PARTNER: &[Row] = &[
    ("partnerVerstorbener.vorname", "Vornamen", Text),
    (
        "partnerVerstorbener.familienname",
        "Familienname (Partner)",
        Text,
    ),
    ("partnerVerstorbener.geburtsname", "Geburtsname", Text),
    ("partnerVerstorbener.geburtstag", "Geburtsdatum", Date),
    (
        "partnerVerstorbener.geschlecht",
        "Geschlecht (Partner)",
        Choice(GESCHLECHT),
    ),
    (
        "partnerVerstorbener.istAuskunftsgeber",
        "Ist zugleich Auskunftsgeber",
        Bool,
    ),
];

const AUSKUNFTSGEBER: &[Row] = &[
    ("auskunftsgeber.vorname", "Vornamen", Text),
    ("auskunftsgeber.familienname", "Familienname", Text),
    ("auskunftsgeber.geburtsname", "Geburtsname", Text),
    (
        "auskunftsgeber.verhaeltnisVerstorbener",
        "Verhältnis zur verstorbenen Person",
        Text,
    ),
    (
        "auskunftsgeber.anschrift.strasse",
        "Straße und Hausnummer",
        Text,
    ),
    ("auskunftsgeber.anschrift.plz", "Postleitzahl", Postleitzahl),
    ("auskunftsgeber.anschrift.ort", "Ort", Text),
    (
        "auskunftsgeber.kontaktdaten[].kanal",
        "Kontakt des Auskunftsgebers: Kanal",
        Code(&ERREICHBARKEIT),
    ),
    (
        "auskunftsgeber.kontaktdaten[].kennung",
        "Kontakt des Auskunftsgebers: Adresse oder Nummer",
        Text,
    ),
    (
        "auskunftsgeber.kontaktdaten[].zusatz",
        "Kontakt des Auskunftsgebers: Zusatz",
        Text,
    ),
];

const KINDER: &[Row] = &[
    (
        "anzahlKinderVolljaehrig",
        "Anzahl volljähriger Kinder",
        ANZAHL,
    ),
    (
        "volljaehrigeKinder[].vornamen",
        "Volljähriges Kind: Vornamen",
        Text,
    ),
    (
        "volljaehrigeKinder[].familienname",
        "Volljähriges Kind: Familienname",
        Text,
    ),
    (
        "volljaehrigeKinder[].geburtsname",
        "Volljähriges Kind: Geburtsname",
        Text,
    ),
    (
        "volljaehrigeKinder[].anschrift.strasse",
        "Volljähriges Kind: Straße und Hausnummer",
        Text,
    ),
    (
        "volljaehrigeKinder[].anschrift.plz",
        "Volljähriges Kind: Postleitzahl",
        Postleitzahl,
    ),
    (
        "volljaehrigeKinder[].anschrift.ort",
        "Volljähriges Kind: Ort",
        Text,
    ),
    (
        "volljaehrigeKinder[].istAuskunftsgeber",
        "Volljähriges Kind ist Auskunftsgeber",
        Bool,
    ),
    (
        "anzahlKinderMinderjaehrig",
        "Anzahl minderjähriger Kinder",
        ANZAHL,
    ),
    (
        "minderjaehrigeKinder[].vornamen",
        "Minderjähriges Kind: Vornamen",
        Text,
    ),
    (
        "minderjaehrigeKinder[].familienname",
        "Minderjähriges Kind: Familienname",
        Text,
    ),
    (
        "minderjaehrigeKinder[].geburtstag",
        "Minderjähriges Kind: Geburtsdatum",
        Date,
    ),
    (
        "minderjaehrigeKinder[].anschrift.strasse",
        "Minderjähriges Kind: Straße und Hausnummer",
        Text,
    ),
    (
        "minderjaehrigeKinder[].anschrift.plz",
        "Minderjähriges Kind: Postleitzahl",
        Postleitzahl,
    ),
    (
        "minderjaehrigeKinder[].anschrift.ort",
        "Minderjähriges Kind: Ort",
        Text,
    ),
    (
        "minderjaehrigeKinder[].vollwaise",
        "Minderjähriges Kind ist Vollwaise",
        Bool,
    ),
    (
        "minderjaehrigeKinder[].istAuskunftsgeber",
        "Minderjähriges Kind ist Auskunftsgeber",
        Bool,
    ),
];

const BESTATTUNG: &[Row] = &[
    (
        "artDerBestattung",
        "Art der Bestattung",
        Choice(BESTATTUNGSART),
    ),
    (
        "zahlDerUrkunden.anzahlStandardformat",
        "Sterbeurkunden (Standardformat)",
        ANZAHL,
    ),
    (
        "zahlDerUrkunden.anzahlStammbuchformat",
        "Sterbeurkunden (Stammbuchformat)",
        ANZAHL,
    ),
    (
        "zahlDerUrkunden.anzahlCIEC16",
        "Internationale Sterbeurkunden (CIEC 16)",
        ANZAHL,
    ),
    (
        "zahlDerUrkunden.anzahlCIEC34",
        "Internationale Sterbeurkunden (CIEC 34)",
        ANZAHL,
    ),
    (
        "zahlDerUrkunden.anzahlRegisterausdruck",
        "Registerausdrucke",
        ANZAHL,
    ),
    (
        "zahlDerUrkunden.anzahlRegisterausdruckMitHinweisen",
        "Registerausdrucke mit Hinweisen",
        ANZAHL,
    ),
    (
        "zahlDerUrkunden.anzahlSozialversicherung",
        "Urkunden für Zwecke der Sozialversicherung",
        ANZAHL,
    ),
    (
        "abholungImStandesamt",
        "Urkunden werden im Standesamt abgeholt",
        Bool,
    ),
    (
        "bescheinigungBeiZurueckstellung",
        "Bescheinigung bei Zurückstellung der Beurkundung",
        Bool,
    ),
];

const LEICHENSCHAU: &[Row] = &[
    (
        "angabenLeichenschau.namenArzt.vornamen",
        "Arzt/Ärztin: Vornamen",
        Text,
    ),
    (
        "angabenLeichenschau.namenArzt.familienname",
        "Arzt/Ärztin: Familienname",
        Text,
    ),
    (
        "angabenLeichenschau.namenArzt.geburtsname",
        "Arzt/Ärztin: Geburtsname",
        Text,
    ),
    (
        "angabenLeichenschau.anschriftArzt.strasse",
        "Praxis/Dienststelle: Straße",
        Text,
    ),
    (
        "angabenLeichenschau.anschriftArzt.hausnummer",
        "Praxis/Dienststelle: Hausnummer",
        Hausnummer,
    ),
    (
        "angabenLeichenschau.anschriftArzt.postleitzahl",
        "Praxis/Dienststelle: Postleitzahl",
        Postleitzahl,
    ),
    (
        "angabenLeichenschau.anschriftArzt.wohnort",
        "Praxis/Dienststelle: Ort",
        Text,
    ),
    (
        "angabenLeichenschau.kontaktArzt[].kanal",
        "Kontakt Arzt/Ärztin: Kanal",
        Code(&ERREICHBARKEIT),
    ),
    (
        "angabenLeichenschau.kontaktArzt[].kennung",
        "Kontakt Arzt/Ärztin: Adresse oder Nummer",
        Text,
    ),
    (
        "angabenLeichenschau.kontaktArzt[].zusatz",
        "Kontakt Arzt/Ärztin: Zusatz",
        Text,
    ),
    ("angabenLeichenschau.datum", "Datum der Leichenschau", Date),
    (
        "angabenLeichenschau.uhrzeit",
        "Uhrzeit der Leichenschau",
        Time,
    ),
    (
        "angabenLeichenschau.uhrzeitExakt",
        "Uhrzeit der Leichenschau ist exakt",
        Bool,
    ),
    (
        "angabenLeichenschau.uhrzeitUnbekannt",
        "Uhrzeit der Leichenschau unbekannt",
        Bool,
    ),
    ("angabenLeichenschau.ort", "Ort der Leichenschau", Text),
];

/// The slots in table order, each with its sections.
const SLOTS: &[(&str, &[Section])] = &[
    (
        "Einrichtung",
        &[
            ("Einrichtung", &[ANZEIGENDER, ANSCHRIFT_AUTOR]),
            ("Verstorbene Person", &[VERSTORBENER]),
            ("Sterbefall", &[STERBEFALL, LEICHEN_ID]),
        ],
    ),
    (
        "Bestatter",
        &[
            ("Bestattungsunternehmen", &[ANZEIGENDER, ANSCHRIFT_AUTOR]),
            (
                "Verstorbene Person",
                &[VERSTORBENER, VERSTORBENER_BESTATTER],
            ),
            ("Sterbefall", &[STERBEFALL, LEICHEN_ID]),
            ("Ehegatte oder Lebenspartner", &[PARTNER]),
            ("Auskunftsgeber", &[AUSKUNFTSGEBER]),
            ("Kinder", &[KINDER]),
            ("Bestattung und Urkunden", &[BESTATTUNG]),
        ],
    ),
    (
        "Todesbescheinigung",
        &[
            ("Leichenschau", &[LEICHENSCHAU]),
            ("Absender", &[ANSCHRIFT_AUTOR]),
            (
                "Verstorbene Person",
                &[VERSTORBENER, VERSTORBENER_BESCHEINIGUNG],
            ),
            (
                "Sterbefall",
                &[STERBEFALL, STERBEFALL_BESCHEINIGUNG, LEICHEN_ID],
            ),
        ],
    ),
];

/// Labels of paths `missing_for_dispatch` and the writers name that are no single field: lists
/// that need a first entry, and rules across fields.
const OTHER_LABELS: &[(&str, &str)] = &[
    (
        "anzeigender.kontaktdaten",
        "Kontaktdaten der anzeigenden Stelle (mindestens ein Eintrag)",
    ),
    (
        "auskunftsgeber.kontaktdaten",
        "Kontaktdaten des Auskunftsgebers (mindestens ein Eintrag)",
    ),
    (
        "angabenLeichenschau.kontaktArzt",
        "Kontaktdaten des Arztes / der Ärztin (mindestens ein Eintrag)",
    ),
    ("sterbefall.todeszeitpunkt", "Todeszeitpunkt"),
];

/// Hints of what to enter, by path relative to the slot.
const HINTS: &[(&str, &str)] = &[(
    "leichenID",
    "Kennung, unter der die verstorbene Person bei Ihnen geführt wird, z. B. die Nummer \
         der Todesbescheinigung.",
)];

/// Every field of the `deathnotice` request except `id`: each slot's fields under the prefix
/// `Einrichtung.`, `Bestatter.` or `Todesbescheinigung.`.
pub static FIELDS: LazyLock<Vec<Field>> = LazyLock::new(|| {
    let mut fields = Vec::new();
    for (slot, sections) in SLOTS {
        for (section, parts) in *sections {
            for (path, label, kind) in parts.iter().flat_map(|part| part.iter()) {
                // Built once for the life of the process: the table is `'static` like every
                // module's, so its prefixed paths are too.
                let full: &'static str = Box::leak(format!("{slot}.{path}").into_boxed_str());
                let mut field = crate::module_layer::fields::field(full, label, *kind, section);
                field.hint = HINTS.iter().find(|(p, _)| p == path).map(|(_, h)| *h);
                fields.push(field);
            }
        }
    }
    fields
});

/// The label of a path relative to `slot` (`verstorbener.familienname` in `Einrichtung`), for
/// messages about missing or refused values.
pub fn label(slot: &str, path: &str) -> String {
    // A list that needs a first entry is named by its own label, not by its section's.
    if let Some((_, label)) = OTHER_LABELS.iter().find(|(p, _)| *p == path) {
        return (*label).to_owned();
    }
    let full = format!("{slot}.{path}");
    let found = crate::module_layer::fields::label(&FIELDS, &full);
    if found != full {
        return found.to_owned();
    }
    path.to_owned()
}
