//! JSON paths of the 081021 data, shared by the dispatch check and the writer so that
//! both report a field under the same name. Structures that occur more than once (places,
//! events, parents, postal addresses) get one path set per occurrence.

/// Paths of an `Ereignisort`: strasse, hausnummer, ort, ortsteil, kreisbezeichnung.
pub(super) type OrtPfade = [&'static str; 5];

/// Paths of an `AngabenEreignis` (place and day).
pub(super) struct EreignisPfade {
    pub(super) tag: &'static str,
    pub(super) ort: OrtPfade,
}

/// Paths of a `PersonName`: familienname, geburtsname, vornamen (schema order).
pub(super) type NamePfade = [&'static str; 3];

/// Paths of a `Staatsangehoerigkeit`: the object, `code`, `nichtGelisteterWert`.
pub(super) type StaatPfade = [&'static str; 3];

/// Paths of an `AnschriftInland`: strasse, hausnummer, postleitzahl, wohnort.
pub(super) type InlandPfade = [&'static str; 4];

/// Paths of a parent (`mutter` or `elternteil2`).
pub(super) struct ElternteilPfade {
    pub(super) namen: NamePfade,
    pub(super) geburt: EreignisPfade,
    pub(super) geschlecht: &'static str,
    pub(super) staatsangehoerigkeit: StaatPfade,
    pub(super) weitere_staatsangehoerigkeit: StaatPfade,
    pub(super) anschrift: InlandPfade,
}

/// Paths of a `PostalischeInlandsanschrift`.
pub(super) struct AnschriftPfade {
    /// The choice object itself.
    pub(super) basis: &'static str,
    /// gebaeude: postleitzahl, strasse, hausnummer, wohnort, wohnortFruehererGemeindename,
    /// zusatzangaben.
    pub(super) gebaeude: [&'static str; 6],
    /// postfach: postfach, wohnort, postleitzahl.
    pub(super) postfach: [&'static str; 3],
}

/// Paths of a list of `Kontakt`: the list, kanal, kennung, zusatz.
pub(super) use crate::xpersonenstand::kontakt::KontaktPfade;

// The macros take literal path pieces so that `concat!` can build `&'static str`s.
macro_rules! ort {
    ($($t:literal),+) => {
        [
            concat!($($t,)+ ".strasse"),
            concat!($($t,)+ ".hausnummer"),
            concat!($($t,)+ ".ort"),
            concat!($($t,)+ ".ortsteil"),
            concat!($($t,)+ ".kreisbezeichnung"),
        ]
    };
}

macro_rules! ereignis {
    ($p:literal, $s:literal) => {
        EreignisPfade {
            tag: concat!($p, $s, ".tag"),
            ort: ort!($p, $s, ".ort"),
        }
    };
}

macro_rules! staat {
    ($p:literal, $s:literal) => {
        [
            concat!($p, $s),
            concat!($p, $s, ".code"),
            concat!($p, $s, ".nichtGelisteterWert"),
        ]
    };
}

macro_rules! elternteil {
    ($p:literal) => {
        ElternteilPfade {
            namen: [
                concat!($p, ".namen.familienname"),
                concat!($p, ".namen.geburtsname"),
                concat!($p, ".namen.vornamen"),
            ],
            geburt: ereignis!($p, ".geburt"),
            geschlecht: concat!($p, ".geschlecht"),
            staatsangehoerigkeit: staat!($p, ".staatsangehoerigkeit"),
            weitere_staatsangehoerigkeit: staat!($p, ".weitereStaatsangehoerigkeit"),
            anschrift: [
                concat!($p, ".anschrift.strasse"),
                concat!($p, ".anschrift.hausnummer"),
                concat!($p, ".anschrift.postleitzahl"),
                concat!($p, ".anschrift.wohnort"),
            ],
        }
    };
}

macro_rules! anschrift {
    ($p:literal) => {
        AnschriftPfade {
            basis: $p,
            gebaeude: [
                concat!($p, ".gebaeude.postleitzahl"),
                concat!($p, ".gebaeude.strasse"),
                concat!($p, ".gebaeude.hausnummer"),
                concat!($p, ".gebaeude.wohnort"),
                concat!($p, ".gebaeude.wohnortFruehererGemeindename"),
                concat!($p, ".gebaeude.zusatzangaben"),
            ],
            postfach: [
                concat!($p, ".postfach.postfach"),
                concat!($p, ".postfach.wohnort"),
                concat!($p, ".postfach.postleitzahl"),
            ],
        }
    };
}

macro_rules! kontakte {
    ($p:literal) => {
        KontaktPfade {
            liste: $p,
            kanal: concat!($p, ".kanal"),
            kennung: concat!($p, ".kennung"),
            zusatz: concat!($p, ".zusatz"),
        }
    };
}

pub(super) const ANSCHRIFT_AUTOR: AnschriftPfade = anschrift!("anschriftAutor");
pub(super) const GEBURTSORT: OrtPfade = ort!("geburtsangaben", ".ort");
pub(super) const MUTTER: ElternteilPfade = elternteil!("mutter");
pub(super) const ELTERNTEIL2: ElternteilPfade = elternteil!("elternteil2");
pub(super) const EHE_EREIGNIS: EreignisPfade = ereignis!("ehe", ".ereignis");
pub(super) const VORANGEGANGENES_KIND_NAMEN: NamePfade = [
    "vorangegangenesKind.namen.familienname",
    "vorangegangenesKind.namen.geburtsname",
    "vorangegangenesKind.namen.vornamen",
];
pub(super) const VORANGEGANGENES_KIND_GEBURT: EreignisPfade =
    ereignis!("vorangegangenesKind", ".geburt");
pub(super) const KONTAKTDATEN: KontaktPfade = kontakte!("kontaktdaten");
pub(super) const ELTERNGELDSTELLE_ERREICHBARKEIT: KontaktPfade =
    kontakte!("zustaendigeElterngeldstelle.erreichbarkeit");
pub(super) const ELTERNGELDSTELLE_ANSCHRIFT: AnschriftPfade =
    anschrift!("zustaendigeElterngeldstelle.anschrift");

/// Paths of one `AllgemeinerName` of the child: the object, name, nichtVorhanden,
/// namensartCode.
pub(super) type AllgemeinerNamePfade = [&'static str; 4];

macro_rules! allgemeiner_name {
    ($p:literal) => {
        [
            $p,
            concat!($p, ".name"),
            concat!($p, ".nichtVorhanden"),
            concat!($p, ".namensartCode"),
        ]
    };
}

pub(super) const KIND_FAMILIENNAME: AllgemeinerNamePfade =
    allgemeiner_name!("kind.name.familienname");
pub(super) const KIND_VORNAMEN: AllgemeinerNamePfade = allgemeiner_name!("kind.name.vornamen");
