//! The birth notice as the `birthnotice` module receives it (spec 01, section 2.3).
//!
//! Every field is optional because a memento pre-fills only what the hospital system
//! knows; [`Geburtsanzeige::missing_for_dispatch`] says what still has to be completed.
//! Unknown fields are rejected so that a typo in an integration does not silently drop data.

use serde::{Deserialize, Serialize};

/// Content of a birth notice by a hospital (message 081020), in the JSON shape of the
/// memento request without `id` and `clientReference`, which belong to the report, not to
/// the notice.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Geburtsanzeige {
    /// Id of the reporting hospital location. Selects configuration (author address,
    /// seal) in the engine; XPersonenstand has no element for it, so it is not written.
    pub standort_id: Option<String>,
    /// Name of the hospital (`nameEinrichtung`).
    pub name_einrichtung: Option<String>,
    /// Contact person at the hospital for queries by the registry office (`ansprechpartner`).
    pub ansprechpartner: Option<String>,
    /// Postal address of the hospital (`anschrift.autor`).
    pub anschrift_autor: Option<AnschriftAutor>,
    /// The child was stillborn (`totgeburt`, written only when `true`).
    pub totgeburt: Option<bool>,
    /// Week of pregnancy and birth weight of a stillborn child (`totgeburtAngaben`);
    /// only allowed together with `totgeburt: true`.
    pub totgeburt_angaben: Option<TotgeburtAngaben>,
    /// Confidential birth under § 25 SchKG (`vertraulicheGeburt`, written only when
    /// `true`); the mother is then given by her pseudonym in `mutter.vertraulich`.
    pub vertrauliche_geburt: Option<bool>,
    /// Day, time and place of birth (`geburtsangaben`).
    pub geburtsangaben: Option<Geburtsangaben>,
    /// The newborn (`kind`).
    pub kind: Option<Kind>,
    /// Present for a multiple birth (`mehrlingsgeburt`).
    pub mehrlingsgeburt: Option<Mehrlingsgeburt>,
    /// The mother, either with her real data or with her pseudonym (`mutter`).
    pub mutter: Option<Mutter>,
    /// The second parent, if known to the hospital (`elternteil2`).
    pub elternteil2: Option<ZweitesElternteil>,
    /// DVDV identifier of the receiving registry office when several are configured;
    /// replaces the kennung of the header's `leser`.
    pub standesamt_kennung: Option<String>,
    /// Human-readable id that pairs this notice with the parents' delivery (081021), which
    /// must carry the identical value (`zuordnungGeburtsanzeige`).
    pub zuordnung_geburtsanzeige: Option<String>,
}

/// Hospital address; only the building variant exists in this module.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AnschriftAutor {
    /// Street address of the hospital building (`gebaeude`).
    pub gebaeude: Option<Gebaeudeanschrift>,
}

/// Building address of the hospital.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Gebaeudeanschrift {
    /// Postal code, up to five digits.
    pub postleitzahl: Option<String>,
    /// Street name.
    pub strasse: Option<String>,
    /// House number, optionally with a letter suffix such as `12a`.
    pub hausnummer: Option<String>,
    /// Town.
    pub wohnort: Option<String>,
}

/// Extra data for a stillbirth.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TotgeburtAngaben {
    /// Week of pregnancy; to be given when the birth weight is below 500 g.
    pub schwangerschaftswoche: Option<u32>,
    /// Birth weight in grams.
    pub geburtsgewicht: Option<u32>,
}

/// Day, time and place of the birth.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Geburtsangaben {
    /// Day of birth, `YYYY-MM-DD`.
    pub tag: Option<String>,
    /// Time of birth, `HH:mm` (24-hour clock).
    pub uhrzeit: Option<String>,
    /// Place of birth, normally the hospital's address.
    pub ort: Option<Ereignisort>,
}

/// Place where the birth happened.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ereignisort {
    /// Street name.
    pub strasse: Option<String>,
    /// House number as free text.
    pub hausnummer: Option<String>,
    /// Town.
    pub ort: Option<String>,
}

/// The newborn.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Kind {
    /// Sex of the child as entered in the form.
    pub geschlecht: Option<KindGeschlecht>,
    /// Intended names of the child; sent only to pair the notice with the parents' data.
    pub name: Option<KindName>,
}

/// Sex of the child in the form's vocabulary; the writer maps it to the XInneres code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum KindGeschlecht {
    /// No entry in the register (§ 22 (3) PStG); code `x`.
    KeineAngabe,
    /// Male; code `m`.
    Maennlich,
    /// Female; code `w`.
    Weiblich,
    /// Diverse; code `d`.
    Divers,
}

impl KindGeschlecht {
    /// Code of the code list `urn:xoev-de:xinneres:codeliste:geschlecht`.
    pub(crate) fn code(self) -> &'static str {
        match self {
            KindGeschlecht::KeineAngabe => "x",
            KindGeschlecht::Maennlich => "m",
            KindGeschlecht::Weiblich => "w",
            KindGeschlecht::Divers => "d",
        }
    }
}

/// Names of the newborn; a newborn has no separate birth name.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KindName {
    /// Given names, space separated.
    pub vornamen: Option<String>,
    /// Family name.
    pub familienname: Option<String>,
}

/// Counts of a multiple birth, including the child of this notice.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Mehrlingsgeburt {
    /// Number of boys born in this multiple birth.
    pub anzahl_knaben: Option<u32>,
    /// Number of girls born in this multiple birth.
    pub anzahl_maedchen: Option<u32>,
    /// Number of children of undetermined sex born in this multiple birth.
    pub anzahl_unbestimmt: Option<u32>,
}

/// The mother: exactly one of the two variants is sent.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Mutter {
    /// Real data of the mother, for every birth that is not confidential.
    pub standard: Option<MutterStandard>,
    /// Pseudonym of the mother, only for a confidential birth.
    pub vertraulich: Option<MutterVertraulich>,
}

/// Identifying data of the mother, taken from her identity card.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MutterStandard {
    /// Names of the mother.
    pub name: Option<PersonName>,
    /// Date of birth of the mother, `YYYY-MM-DD`.
    pub geburtsdatum: Option<String>,
    /// Residential address of the mother in Germany.
    pub anschrift: Option<AnschriftMutter>,
}

/// Residential address of the mother.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AnschriftMutter {
    /// Street name.
    pub strasse: Option<String>,
    /// House number, optionally with a letter suffix such as `12a`.
    pub hausnummer: Option<String>,
    /// Postal code, up to five digits.
    pub postleitzahl: Option<String>,
    /// Town.
    pub wohnort: Option<String>,
}

/// Pseudonym chosen by the mother for a confidential birth.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MutterVertraulich {
    /// Given names of the pseudonym.
    pub vornamen: Option<String>,
    /// Family name of the pseudonym.
    pub familienname: Option<String>,
}

/// Names of an adult parent.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PersonName {
    /// Given names, space separated.
    pub vornamen: Option<String>,
    /// Current family name.
    pub familienname: Option<String>,
    /// Birth name, if different from the family name.
    pub geburtsname: Option<String>,
}

/// The second parent; XPersonenstand carries only the names here.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ZweitesElternteil {
    /// Names of the second parent.
    pub name: Option<PersonName>,
}
