//! The fields of a birth notice (spec/01 §2.3), in form order.

use crate::module_layer::fields::{field as f, Field, FieldKind};

const GESCHLECHT: &[(&str, &str)] = &[
    ("WEIBLICH", "weiblich"),
    ("MAENNLICH", "männlich"),
    ("DIVERS", "divers"),
    ("KEINE_ANGABE", "ohne Angabe"),
];

const EINRICHTUNG: &str = "Einrichtung";
const GEBURT: &str = "Geburt";
const KIND: &str = "Kind";
const MUTTER: &str = "Mutter";
const ELTERNTEIL2: &str = "Zweiter Elternteil";
const ZUORDNUNG: &str = "Zuordnung";
use FieldKind::*;

/// Every field of the `birthnotice` request except `id` and `clientReference`.
pub static FIELDS: &[Field] = &[
    f("nameEinrichtung", "Name der Einrichtung", Text, EINRICHTUNG),
    f("standortId", "Standort-ID", Text, EINRICHTUNG)
        .with_hint("Kennung des Standorts, wenn die Einrichtung mehrere hat; sonst leer lassen."),
    f("ansprechpartner", "Ansprechpartner", Text, EINRICHTUNG),
    f(
        "anschriftAutor.gebaeude.strasse",
        "Straße der Einrichtung",
        Text,
        EINRICHTUNG,
    ),
    f(
        "anschriftAutor.gebaeude.hausnummer",
        "Hausnummer der Einrichtung",
        Hausnummer,
        EINRICHTUNG,
    ),
    f(
        "anschriftAutor.gebaeude.postleitzahl",
        "Postleitzahl der Einrichtung",
        Postleitzahl,
        EINRICHTUNG,
    ),
    f(
        "anschriftAutor.gebaeude.wohnort",
        "Ort der Einrichtung",
        Text,
        EINRICHTUNG,
    ),
    f("geburtsangaben.tag", "Tag der Geburt", Date, GEBURT),
    f("geburtsangaben.uhrzeit", "Uhrzeit der Geburt", Time, GEBURT),
    f(
        "geburtsangaben.ort.strasse",
        "Straße des Geburtsorts",
        Text,
        GEBURT,
    ),
    f(
        "geburtsangaben.ort.hausnummer",
        "Hausnummer des Geburtsorts",
        Text,
        GEBURT,
    ),
    f("geburtsangaben.ort.ort", "Geburtsort", Text, GEBURT),
    f("totgeburt", "Totgeburt", Bool, GEBURT),
    f(
        "totgeburtAngaben.schwangerschaftswoche",
        "Schwangerschaftswoche (Totgeburt)",
        Integer { min: 1, max: 45 },
        GEBURT,
    ),
    f(
        "totgeburtAngaben.geburtsgewicht",
        "Geburtsgewicht in Gramm (Totgeburt)",
        Integer {
            min: 1,
            max: 10_000,
        },
        GEBURT,
    ),
    f("vertraulicheGeburt", "Vertrauliche Geburt", Bool, GEBURT),
    f(
        "mehrlingsgeburt.anzahlKnaben",
        "Mehrlingsgeburt: Anzahl Knaben",
        Integer { min: 0, max: 20 },
        GEBURT,
    ),
    f(
        "mehrlingsgeburt.anzahlMaedchen",
        "Mehrlingsgeburt: Anzahl Mädchen",
        Integer { min: 0, max: 20 },
        GEBURT,
    ),
    f(
        "mehrlingsgeburt.anzahlUnbestimmt",
        "Mehrlingsgeburt: Anzahl ohne bestimmtes Geschlecht",
        Integer { min: 0, max: 20 },
        GEBURT,
    ),
    f(
        "kind.geschlecht",
        "Geschlecht des Kindes",
        Choice(GESCHLECHT),
        KIND,
    ),
    f("kind.name.vornamen", "Vornamen des Kindes", Text, KIND),
    f(
        "kind.name.familienname",
        "Familienname des Kindes",
        Text,
        KIND,
    ),
    f(
        "mutter.standard.name.vornamen",
        "Vornamen der Mutter",
        Text,
        MUTTER,
    ),
    f(
        "mutter.standard.name.familienname",
        "Familienname der Mutter",
        Text,
        MUTTER,
    ),
    f(
        "mutter.standard.name.geburtsname",
        "Geburtsname der Mutter",
        Text,
        MUTTER,
    ),
    f(
        "mutter.standard.geburtsdatum",
        "Geburtsdatum der Mutter",
        Date,
        MUTTER,
    ),
    f(
        "mutter.standard.anschrift.strasse",
        "Straße (Mutter)",
        Text,
        MUTTER,
    ),
    f(
        "mutter.standard.anschrift.hausnummer",
        "Hausnummer (Mutter)",
        Hausnummer,
        MUTTER,
    ),
    f(
        "mutter.standard.anschrift.postleitzahl",
        "Postleitzahl (Mutter)",
        Postleitzahl,
        MUTTER,
    ),
    f(
        "mutter.standard.anschrift.wohnort",
        "Wohnort (Mutter)",
        Text,
        MUTTER,
    ),
    f(
        "mutter.vertraulich.vornamen",
        "Pseudonym der Mutter: Vornamen (nur vertrauliche Geburt)",
        Text,
        MUTTER,
    ),
    f(
        "mutter.vertraulich.familienname",
        "Pseudonym der Mutter: Familienname (nur vertrauliche Geburt)",
        Text,
        MUTTER,
    ),
    f("elternteil2.name.vornamen", "Vornamen", Text, ELTERNTEIL2),
    f(
        "elternteil2.name.familienname",
        "Familienname",
        Text,
        ELTERNTEIL2,
    ),
    f(
        "elternteil2.name.geburtsname",
        "Geburtsname",
        Text,
        ELTERNTEIL2,
    ),
    f(
        "standesamtKennung",
        "Kennung des Standesamts",
        Text,
        ZUORDNUNG,
    )
    .with_hint(
        "DVDV-Kennung des zuständigen Standesamts, z. B. psw:11000000; leer lassen für das \
         voreingestellte Standesamt.",
    ),
    f(
        "zuordnungGeburtsanzeige",
        "Zuordnungskennung",
        Text,
        ZUORDNUNG,
    )
    .with_hint(
        "Dieselbe Kennung wie in den Geburtsdaten der Eltern, damit das Standesamt beide \
         Meldungen zusammenführt.",
    ),
];
