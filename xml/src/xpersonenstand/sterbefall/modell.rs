//! Building blocks shared by the three death-notice slots (spec 01, section 2.4).
//!
//! The same concept has the same JSON name in every slot (`anzeigender`, `sterbefall`,
//! `verstorbener.letzterWohnsitz`, ...), so these types are declared once here.

use serde::{Deserialize, Serialize};

pub(crate) use crate::xpersonenstand::Kontakt;

use super::super::werte::gesetzt;

/// Sex of the deceased (or of the partner) in the module's vocabulary; the writer maps it
/// to the XInneres code list `urn:xoev-de:xinneres:codeliste:geschlecht`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GeschlechtVerstorbener {
    /// Male; code `m`.
    Maennlich,
    /// Female; code `w`.
    Weiblich,
    /// Diverse; code `d`.
    Divers,
    /// Sex not determined or not entered in the register; code `x` ("ohne Angabe").
    Unbestimmt,
}

impl GeschlechtVerstorbener {
    /// Code of the code list `urn:xoev-de:xinneres:codeliste:geschlecht`.
    pub(crate) fn code(self) -> &'static str {
        match self {
            GeschlechtVerstorbener::Maennlich => "m",
            GeschlechtVerstorbener::Weiblich => "w",
            GeschlechtVerstorbener::Divers => "d",
            GeschlechtVerstorbener::Unbestimmt => "x",
        }
    }
}

/// The reporting organisation (`anzeigender`, type `Portal2StA.Anzeigender`): hospital,
/// care facility or undertaker.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Anzeigender {
    /// Name of the reporting organisation (`namen/nameOrganisation`).
    pub name_organisation: Option<String>,
    /// The natural person making the report for the organisation
    /// (`namen/nameNatuerlichePerson`); also written as the message's `ansprechpartner`.
    pub ansprechpartner: Option<crate::xpersonenstand::PersonName>,
    /// Contact channels for queries by the registry office (`kontaktdaten`, at least one).
    pub kontaktdaten: Option<Vec<Kontakt>>,
    /// Postal address of the organisation (`anschrift`).
    pub anschrift: Option<Wohnanschrift>,
}

/// A simple address as the portals send it (`Portal2StA.Anschrift`); the street text
/// carries the house number.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Wohnanschrift {
    /// Street and house number.
    pub strasse: Option<String>,
    /// German postal code, up to five digits.
    pub plz: Option<String>,
    /// Town.
    pub ort: Option<String>,
}

impl Wohnanschrift {
    pub(crate) fn angegeben(&self) -> bool {
        gesetzt(&self.strasse).is_some()
            || gesetzt(&self.plz).is_some()
            || gesetzt(&self.ort).is_some()
    }
}

/// Time and place of death (`sterbefall`, type `Portal2StA.Sterbefall`).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Sterbefall {
    /// When the death occurred (`todestag`).
    pub todeszeitpunkt: Option<Todeszeitpunkt>,
    /// Where the death occurred (`sterbeort`).
    pub sterbeort: Option<Sterbeort>,
}

impl Sterbefall {
    pub(crate) fn angegeben(&self) -> bool {
        self.todeszeitpunkt.as_ref().is_some_and(|t| t.angegeben())
            || self.sterbeort.as_ref().is_some_and(|o| o.angegeben())
    }
}

/// Time of death: exactly one of a known day and time (`todestag`) or a period
/// (`sterbezeitraum`), the schema's choice within `todestag`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Todeszeitpunkt {
    /// Known day and time of death.
    pub todestag: Option<Todestag>,
    /// Period in which the death occurred, when the exact day is unknown.
    pub sterbezeitraum: Option<Sterbezeitraum>,
}

impl Todeszeitpunkt {
    pub(crate) fn angegeben(&self) -> bool {
        self.todestag.as_ref().is_some_and(|t| t.angegeben())
            || self.sterbezeitraum.as_ref().is_some_and(|z| z.angegeben())
    }
}

/// Known moment of death.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Todestag {
    /// Date-time with offset, e.g. `2026-11-20T14:30:00+01:00`; written as the local day
    /// (`todestag`) and time `HH:mm` (`todeszeit`) in that offset.
    pub zeitpunkt: Option<String>,
    /// Whether the time is exact (`todeszeit/@exakt`); `false` for an approximate time.
    pub uhrzeit_exakt: Option<bool>,
}

impl Todestag {
    pub(crate) fn angegeben(&self) -> bool {
        gesetzt(&self.zeitpunkt).is_some() || self.uhrzeit_exakt.is_some()
    }
}

/// Period of death (`sterbezeitraum`), for a death nobody witnessed.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Sterbezeitraum {
    /// Day the person was last seen alive, `YYYY-MM-DD`.
    pub letzter_tag_lebend: Option<String>,
    /// Time the person was last seen alive, `HH:mm`.
    pub letzter_tag_lebend_uhrzeit: Option<String>,
    /// Day by which the person was certainly dead, `YYYY-MM-DD`.
    pub mit_sicherheit_tot_tag: Option<String>,
    /// Time by which the person was certainly dead, `HH:mm`.
    pub mit_sicherheit_tot_uhrzeit: Option<String>,
}

impl Sterbezeitraum {
    pub(crate) fn angegeben(&self) -> bool {
        [
            &self.letzter_tag_lebend,
            &self.letzter_tag_lebend_uhrzeit,
            &self.mit_sicherheit_tot_tag,
            &self.mit_sicherheit_tot_uhrzeit,
        ]
        .into_iter()
        .any(|w| gesetzt(w).is_some())
    }
}

/// Place of death (or, in a death certificate, the place where the body was found).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Sterbeort {
    /// Street; imprecise places (plot, motorway kilometre) also go here.
    pub strasse: Option<String>,
    /// House number as free text.
    pub hausnummer: Option<String>,
    /// Town.
    pub ort: Option<String>,
    /// District of the town.
    pub ortsteil: Option<String>,
}

impl Sterbeort {
    pub(crate) fn angegeben(&self) -> bool {
        [&self.strasse, &self.hausnummer, &self.ort, &self.ortsteil]
            .into_iter()
            .any(|w| gesetzt(w).is_some())
    }
}

/// The deceased as a hospital or care facility knows them from the health insurance card
/// (`verstorbener`, type `Portal2StA.Sterbefall.Verstorbener.Einrichtung`).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Verstorbener {
    /// Given names, space separated.
    pub vorname: Option<String>,
    /// Family name (the full name when given and family name cannot be told apart).
    pub familienname: Option<String>,
    /// Birth name, if different.
    pub geburtsname: Option<String>,
    /// Date of birth, `YYYY-MM-DD`; left out when only partly known.
    pub geburtstag: Option<String>,
    /// Sex of the deceased.
    pub geschlecht: Option<GeschlechtVerstorbener>,
    /// Last residence (`letzterWohnsitz`).
    pub letzter_wohnsitz: Option<Wohnanschrift>,
}
