//! The birth notice as the `birthnotice` module receives it (spec 01, section 2.3).
//!
//! Every field is optional because a memento pre-fills only what the hospital system
//! knows; [`Geburtsanzeige::missing_for_dispatch`] says what still has to be completed.
//! Unknown fields are rejected so that a typo in an integration does not silently drop data.

use serde::{Deserialize, Serialize};

/// Content of a birth notice by a hospital (message 081020), in the JSON shape of the
/// memento request without `id` and `clientReference`, which belong to the report, not to
/// the notice.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Geburtsanzeige {
    /// Id of the reporting hospital location. Selects configuration (author address,
    /// seal) in the engine; XPersonenstand has no element for it, so it is not written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub standort_id: Option<String>,
    /// Name of the hospital (`nameEinrichtung`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name_einrichtung: Option<String>,
    /// Contact person at the hospital for queries by the registry office (`ansprechpartner`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ansprechpartner: Option<String>,
    /// Postal address of the hospital (`anschrift.autor`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anschrift_autor: Option<AnschriftAutor>,
    /// The child was stillborn (`totgeburt`, written only when `true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub totgeburt: Option<bool>,
    /// Week of pregnancy and birth weight of a stillborn child (`totgeburtAngaben`);
    /// only allowed together with `totgeburt: true`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub totgeburt_angaben: Option<TotgeburtAngaben>,
    /// Confidential birth under § 25 SchKG (`vertraulicheGeburt`, written only when
    /// `true`); the mother is then given by her pseudonym in `mutter.vertraulich`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vertrauliche_geburt: Option<bool>,
    /// Day, time and place of birth (`geburtsangaben`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub geburtsangaben: Option<Geburtsangaben>,
    /// The newborn (`kind`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<Kind>,
    /// Present for a multiple birth (`mehrlingsgeburt`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mehrlingsgeburt: Option<Mehrlingsgeburt>,
    /// The mother, either with her real data or with her pseudonym (`mutter`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mutter: Option<Mutter>,
    /// The second parent, if known to the hospital (`elternteil2`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elternteil2: Option<ZweitesElternteil>,
    /// DVDV identifier of the receiving registry office when several are configured;
    /// replaces the kennung of the header's `leser`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub standesamt_kennung: Option<String>,
    /// Human-readable id that pairs this notice with the parents' delivery (081021), which
    /// must carry the identical value (`zuordnungGeburtsanzeige`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zuordnung_geburtsanzeige: Option<String>,
}

/// Hospital address; only the building variant exists in this module.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AnschriftAutor {
    /// Street address of the hospital building (`gebaeude`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gebaeude: Option<Gebaeudeanschrift>,
}

/// Building address of the hospital.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Gebaeudeanschrift {
    /// Postal code, up to five digits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub postleitzahl: Option<String>,
    /// Street name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strasse: Option<String>,
    /// House number, optionally with a letter suffix such as `12a`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hausnummer: Option<String>,
    /// Town.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wohnort: Option<String>,
}

/// Extra data for a stillbirth.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TotgeburtAngaben {
    /// Week of pregnancy; to be given when the birth weight is below 500 g.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schwangerschaftswoche: Option<u32>,
    /// Birth weight in grams.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub geburtsgewicht: Option<u32>,
}

/// Day, time and place of the birth.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Geburtsangaben {
    /// Day of birth, `YYYY-MM-DD`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// Time of birth, `HH:mm` (24-hour clock).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uhrzeit: Option<String>,
    /// Place of birth, normally the hospital's address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ort: Option<Ereignisort>,
}

/// Place where the birth happened.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ereignisort {
    /// Street name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strasse: Option<String>,
    /// House number as free text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hausnummer: Option<String>,
    /// Town.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ort: Option<String>,
}

/// The newborn.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Kind {
    /// Sex of the child as entered in the form.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub geschlecht: Option<KindGeschlecht>,
    /// Intended names of the child; sent only to pair the notice with the parents' data.
    #[serde(skip_serializing_if = "Option::is_none")]
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KindName {
    /// Given names, space separated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vornamen: Option<String>,
    /// Family name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub familienname: Option<String>,
}

/// Counts of a multiple birth, including the child of this notice.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Mehrlingsgeburt {
    /// Number of boys born in this multiple birth.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anzahl_knaben: Option<u32>,
    /// Number of girls born in this multiple birth.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anzahl_maedchen: Option<u32>,
    /// Number of children of undetermined sex born in this multiple birth.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anzahl_unbestimmt: Option<u32>,
}

/// The mother: exactly one of the two variants is sent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Mutter {
    /// Real data of the mother, for every birth that is not confidential.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub standard: Option<MutterStandard>,
    /// Pseudonym of the mother, only for a confidential birth.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vertraulich: Option<MutterVertraulich>,
}

/// Identifying data of the mother, taken from her identity card.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MutterStandard {
    /// Names of the mother.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<PersonName>,
    /// Date of birth of the mother, `YYYY-MM-DD`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub geburtsdatum: Option<String>,
    /// Residential address of the mother in Germany.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anschrift: Option<AnschriftMutter>,
}

/// Residential address of the mother.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AnschriftMutter {
    /// Street name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strasse: Option<String>,
    /// House number, optionally with a letter suffix such as `12a`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hausnummer: Option<String>,
    /// Postal code, up to five digits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub postleitzahl: Option<String>,
    /// Town.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wohnort: Option<String>,
}

/// Pseudonym chosen by the mother for a confidential birth.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MutterVertraulich {
    /// Given names of the pseudonym.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vornamen: Option<String>,
    /// Family name of the pseudonym.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub familienname: Option<String>,
}

/// Names of an adult parent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PersonName {
    /// Given names, space separated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vornamen: Option<String>,
    /// Current family name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub familienname: Option<String>,
    /// Birth name, if different from the family name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub geburtsname: Option<String>,
}

/// The second parent; XPersonenstand carries only the names here.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ZweitesElternteil {
    /// Names of the second parent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<PersonName>,
}
