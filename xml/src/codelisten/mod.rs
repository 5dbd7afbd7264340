//! The code lists of the messages, each in one place: its name, `listURI`, `listVersionID`, where
//! it comes from, and its entries (code and German label). The writers take URI and version from
//! here and check codes against it; the web layer's field checks and form selects use the same
//! lists, and the simulated office checks received messages against them ([`pruefe_nachricht`]).
//!
//! Lists the schema enumerates (`xpersonenstand-codes.xsd`) are tested against that enumeration;
//! the others are transcribed from their publisher's edition named in [`Codeliste::quelle`].

mod nachricht;
mod staatsangehoerigkeit;

pub use nachricht::{pruefe_nachricht, Codebefund};

use crate::xpersonenstand::XmlError;

/// One code list in one version.
#[derive(Debug, PartialEq, Eq)]
pub struct Codeliste {
    /// German name of the list, as its publisher calls it.
    pub name: &'static str,
    /// `listURI`, the list's identifier.
    pub uri: &'static str,
    /// `listVersionID`, the version the messages name.
    pub version: &'static str,
    /// Who publishes the list, where, and which edition these entries are.
    pub quelle: &'static str,
    /// Every entry: code and German label, in the publisher's order.
    pub eintraege: &'static [(&'static str, &'static str)],
}

impl Codeliste {
    /// Whether `code` is a code of this list.
    pub fn enthaelt(&self, code: &str) -> bool {
        self.eintraege.iter().any(|(c, _)| *c == code)
    }

    /// The label of `code`, if it is a code of this list.
    pub fn bezeichnung(&self, code: &str) -> Option<&'static str> {
        self.eintraege
            .iter()
            .find(|(c, _)| *c == code)
            .map(|(_, label)| *label)
    }

    /// `Ok` if `code` is a code of this list; else the error at the JSON path `feld`.
    pub(crate) fn pruefe(&self, feld: &'static str, code: &str) -> Result<(), XmlError> {
        if self.enthaelt(code) {
            return Ok(());
        }
        Err(XmlError::InvalidValue {
            field: feld,
            reason: format!(
                "'{code}' ist kein Code der Liste {} ({}, Version {})",
                self.name, self.uri, self.version
            ),
        })
    }
}

/// Contact channels (`kanal` of every contact), KoSIT. Transcribed: the schema fixes only the
/// URI; the version is the one the XPersonenstand reference instances name.
pub static ERREICHBARKEIT: Codeliste = Codeliste {
    name: "Erreichbarkeit",
    uri: "urn:de:xoev:codeliste:erreichbarkeit",
    version: "1",
    quelle: "KoSIT (Koordinierungsstelle für IT-Standards), XRepository \
             urn:de:xoev:codeliste:erreichbarkeit_1, transcribed",
    eintraege: &[
        ("01", "E-Mail"),
        ("02", "Telefon (Festnetz)"),
        ("03", "Mobiltelefon"),
        ("04", "Fax"),
        ("05", "Instant Messenger"),
        ("06", "Pager"),
        ("07", "Sonstiges"),
    ],
};

/// Nationalities (`staatsangehoerigkeit.code`), Destatis; three-digit keys, not ISO 3166.
/// Transcribed: the schema fixes only the URI and leaves the version to the sender.
pub static STAATSANGEHOERIGKEIT: Codeliste = Codeliste {
    name: "Staatsangehörigkeit",
    uri: "urn:de:bund:destatis:bevoelkerungsstatistik:schluessel:staatsangehoerigkeit",
    version: "2023-02-24",
    quelle: "Statistisches Bundesamt (Destatis), Staats- und Gebietssystematik, XRepository \
             urn:de:bund:destatis:bevoelkerungsstatistik:schluessel:staatsangehoerigkeit_2023-02-24, \
             transcribed",
    eintraege: staatsangehoerigkeit::EINTRAEGE,
};

/// Sex (`geschlecht` wherever a message writes it), XInneres, KoSIT. Transcribed: the schema
/// fixes only the URI.
pub static GESCHLECHT: Codeliste = Codeliste {
    name: "Geschlecht",
    uri: "urn:xoev-de:xinneres:codeliste:geschlecht",
    version: "1",
    quelle: "KoSIT, XInneres, XRepository urn:xoev-de:xinneres:codeliste:geschlecht_1 \
             (§§ 22, 45b PStG), transcribed",
    eintraege: &[
        ("m", "männlich"),
        ("w", "weiblich"),
        ("x", "ohne Angabe"),
        ("d", "divers"),
    ],
};

/// Name types (`namensartCode`), Bundesministerium des Innern, version 1 of 2012-11-01; the
/// schema enumerates it.
pub static NAMENSART: Codeliste = Codeliste {
    name: "Namensart",
    uri: "urn:xpersonenstand:schluesseltabelle:namensart",
    version: "1",
    quelle: "Bundesministerium des Innern, enumerated in XPersonenstand 26.11 \
             (xpersonenstand-codes.xsd, Code.Namensart.Code), valid from 2012-11-01",
    eintraege: &[
        ("e", "Eigenname"),
        ("en", "Eigennamen"),
        ("ez", "Eigenname und Namenszusatz"),
        ("fz", "Familiennamen und Namenszusatz"),
        ("fzw", "Familienname und Zwischenname"),
        ("isn", "Isländischer Nachname"),
        ("nk", "Namenskette"),
        ("nkz", "Namenskette und Namenszusatz"),
        ("nkzp", "Namenskette und Namenszusätze"),
        ("vm", "Vorname und Mittelname"),
        ("vpm", "Vornamen und Mittelname"),
        ("vpv", "Vornamen und Vatersname"),
        ("vpz", "Vornamen und Namenszusatz"),
        ("vv", "Vorname und Vatersname"),
        ("vz", "Vorname und Namenszusatz"),
        ("zf", "Namenszusatz und Familienname"),
        ("zwf", "Zwischenname und Familienname"),
        ("zwv", "Zwischenname und Vorname"),
        ("zwvp", "Zwischenname und Vornamen"),
    ],
};

/// Marital status of the deceased (`verstorbener.familienstand`, 084021), Bundesministerium des
/// Innern, version 1 of 2013-05-01; the schema enumerates it.
pub static FAMILIENSTAND: Codeliste = Codeliste {
    name: "Familienstand (Personenstandswesen)",
    uri: "urn:xpersonenstand:schluesseltabelle:familienstandpersonenstandswesen",
    version: "1",
    quelle: "Bundesministerium des Innern, enumerated in XPersonenstand 26.11 \
             (xpersonenstand-codes.xsd, Code.FamilienstandPersonenstandswesen.Code), \
             valid from 2013-05-01",
    eintraege: &[
        ("EA", "Ehe aufgehoben"),
        ("EN", "Ehe für nichtig erklärt"),
        ("GS", "geschieden"),
        ("LA", "aufgehobene Lebenspartnerschaft"),
        ("LD", "ledig"),
        ("LE", "durch Todeserklärung aufgelöste Lebenspartnerschaft"),
        ("LP", "in eingetragener Lebenspartnerschaft"),
        ("LV", "durch Tod aufgelöste Lebenspartnerschaft"),
        ("NB", "nicht bekannt"),
        ("TE", "verheiratet, Ehegatte für tot erklärt"),
        (
            "TF",
            "verheiratet, Todeszeit des Ehegatten gerichtlich festgestellt",
        ),
        ("VH", "verheiratet"),
        ("VW", "verwitwet"),
    ],
};

/// Kinds of burial (`artDerBestattung`, 084021), KoSIT, version 1 of 2018-11-01; the schema
/// enumerates it. The API names the kinds in words (`erdbestattung`); the writer maps them here.
pub static BESTATTUNGSART: Codeliste = Codeliste {
    name: "Bestattungsart",
    uri: "urn:xpersonenstand:schluesseltabelle:bestattungsart",
    version: "1",
    quelle: "KoSIT, enumerated in XPersonenstand 26.11 (xpersonenstand-codes.xsd, \
             Code.Bestattungsart.Code), valid from 2018-11-01",
    eintraege: &[
        ("1", "Erdbestattung"),
        ("2", "Feuerbestattung"),
        ("3", "unbekannte Bestattungsart"),
    ],
};

/// How the deceased was identified (`verstorbener.identifizierung`, 084040), KoSIT, version 1 of
/// 2021-11-01; the schema enumerates it.
pub static IDENTIFIZIERUNGSART: Codeliste = Codeliste {
    name: "Identifizierungsart",
    uri: "urn:xoev-de:xpersonenstand:codeliste:identifizierungsart",
    version: "1",
    quelle: "KoSIT, enumerated in XPersonenstand 26.11 (xpersonenstand-codes.xsd, \
             Code.Identifizierungsart.Code), valid from 2021-11-01",
    eintraege: &[
        ("AAD", "Nach Angaben von Angehörigen/Dritten"),
        ("EK", "Aufgrund eigener Kenntnis"),
        ("EPR", "Nach Einsicht in den Personalausweis/Reisepass"),
        ("ESI", "Nach Einsicht in sonstiges Identifikationsdokument"),
        ("NM", "Nicht möglich"),
    ],
};

/// Every list the messages' code elements use and a receiver can check, by URI.
pub static ALLE: &[&Codeliste] = &[
    &ERREICHBARKEIT,
    &STAATSANGEHOERIGKEIT,
    &GESCHLECHT,
    &NAMENSART,
    &FAMILIENSTAND,
    &BESTATTUNGSART,
    &IDENTIFIZIERUNGSART,
];

/// The list with the URI `uri`, if it is one of [`ALLE`].
pub fn nach_uri(uri: &str) -> Option<&'static Codeliste> {
    ALLE.iter().copied().find(|l| l.uri == uri)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_list_has_unique_codes_and_labels() {
        for liste in ALLE {
            assert!(!liste.eintraege.is_empty(), "{}", liste.uri);
            for (i, (code, label)) in liste.eintraege.iter().enumerate() {
                assert!(!code.is_empty() && !label.is_empty(), "{}", liste.uri);
                assert!(
                    !liste.eintraege[..i].iter().any(|(c, _)| c == code),
                    "{} has {code} twice",
                    liste.uri
                );
            }
        }
        let uris: std::collections::HashSet<&str> = ALLE.iter().map(|l| l.uri).collect();
        assert_eq!(uris.len(), ALLE.len());
    }

    #[test]
    fn codes_are_checked_with_a_message_naming_the_list() {
        assert!(ERREICHBARKEIT.pruefe("k", "01").is_ok());
        assert_eq!(ERREICHBARKEIT.bezeichnung("01"), Some("E-Mail"));
        assert_eq!(
            ERREICHBARKEIT
                .pruefe("k", "E-Mail")
                .unwrap_err()
                .to_string(),
            "invalid value in k: 'E-Mail' ist kein Code der Liste Erreichbarkeit \
             (urn:de:xoev:codeliste:erreichbarkeit, Version 1)"
        );
        assert!(STAATSANGEHOERIGKEIT.enthaelt("000"));
        assert!(!STAATSANGEHOERIGKEIT.enthaelt("DE"));
        assert_eq!(nach_uri(GESCHLECHT.uri), Some(&GESCHLECHT));
    }

    #[test]
    fn the_api_enums_map_to_codes_of_their_lists() {
        use crate::xpersonenstand::{
            Bestattungsart, Geschlecht, GeschlechtVerstorbener, KindGeschlecht,
        };
        let codes = [
            KindGeschlecht::KeineAngabe.code(),
            KindGeschlecht::Maennlich.code(),
            KindGeschlecht::Weiblich.code(),
            KindGeschlecht::Divers.code(),
            Geschlecht::Maennlich.code(),
            Geschlecht::Weiblich.code(),
            Geschlecht::KeineAngabe.code(),
            Geschlecht::Divers.code(),
            GeschlechtVerstorbener::Maennlich.code(),
            GeschlechtVerstorbener::Weiblich.code(),
            GeschlechtVerstorbener::Divers.code(),
            GeschlechtVerstorbener::Unbestimmt.code(),
        ];
        assert!(codes.iter().all(|c| GESCHLECHT.enthaelt(c)), "{codes:?}");
        for b in [
            Bestattungsart::Erdbestattung,
            Bestattungsart::Feuerbestattung,
            Bestattungsart::Unbekannt,
        ] {
            assert!(BESTATTUNGSART.enthaelt(b.code()), "{b:?}");
        }
    }
}
