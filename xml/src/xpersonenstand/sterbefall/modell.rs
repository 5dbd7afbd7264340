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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Anzeigender {
    /// Name of the reporting organisation (`namen/nameOrganisation`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name_organisation: Option<String>,
    /// The natural person making the report for the organisation
    /// (`namen/nameNatuerlichePerson`); also written as the message's `ansprechpartner`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ansprechpartner: Option<crate::xpersonenstand::PersonName>,
    /// Contact channels for queries by the registry office (`kontaktdaten`, at least one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kontaktdaten: Option<Vec<Kontakt>>,
    /// Postal address of the organisation (`anschrift`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anschrift: Option<Wohnanschrift>,
}

/// A simple address as the portals send it (`Portal2StA.Anschrift`); the street text
/// carries the house number.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Wohnanschrift {
    /// Street and house number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strasse: Option<String>,
    /// German postal code, up to five digits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plz: Option<String>,
    /// Town.
    #[serde(skip_serializing_if = "Option::is_none")]
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Sterbefall {
    /// When the death occurred (`todestag`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub todeszeitpunkt: Option<Todeszeitpunkt>,
    /// Where the death occurred (`sterbeort`).
    #[serde(skip_serializing_if = "Option::is_none")]
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Todeszeitpunkt {
    /// Known day and time of death.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub todestag: Option<Todestag>,
    /// Period in which the death occurred, when the exact day is unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sterbezeitraum: Option<Sterbezeitraum>,
}

impl Todeszeitpunkt {
    pub(crate) fn angegeben(&self) -> bool {
        self.todestag.as_ref().is_some_and(|t| t.angegeben())
            || self.sterbezeitraum.as_ref().is_some_and(|z| z.angegeben())
    }
}

/// Known moment of death.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Todestag {
    /// Date-time with offset, e.g. `2026-11-20T14:30:00+01:00`; written as the local day
    /// (`todestag`) and time `HH:mm` (`todeszeit`) in that offset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zeitpunkt: Option<String>,
    /// Whether the time is exact (`todeszeit/@exakt`); `false` for an approximate time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uhrzeit_exakt: Option<bool>,
}

impl Todestag {
    pub(crate) fn angegeben(&self) -> bool {
        gesetzt(&self.zeitpunkt).is_some() || self.uhrzeit_exakt.is_some()
    }
}

/// Period of death (`sterbezeitraum`), for a death nobody witnessed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Sterbezeitraum {
    /// Day the person was last seen alive, `YYYY-MM-DD`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub letzter_tag_lebend: Option<String>,
    /// Time the person was last seen alive, `HH:mm`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub letzter_tag_lebend_uhrzeit: Option<String>,
    /// Day by which the person was certainly dead, `YYYY-MM-DD`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mit_sicherheit_tot_tag: Option<String>,
    /// Time by which the person was certainly dead, `HH:mm`.
    #[serde(skip_serializing_if = "Option::is_none")]
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Sterbeort {
    /// Street; imprecise places (plot, motorway kilometre) also go here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strasse: Option<String>,
    /// House number as free text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hausnummer: Option<String>,
    /// Town.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ort: Option<String>,
    /// District of the town.
    #[serde(skip_serializing_if = "Option::is_none")]
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Verstorbener {
    /// Given names, space separated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vorname: Option<String>,
    /// Family name (the full name when given and family name cannot be told apart).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub familienname: Option<String>,
    /// Birth name, if different.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub geburtsname: Option<String>,
    /// Date of birth, `YYYY-MM-DD`; left out when only partly known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub geburtstag: Option<String>,
    /// Sex of the deceased.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub geschlecht: Option<GeschlechtVerstorbener>,
    /// Last residence (`letzterWohnsitz`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub letzter_wohnsitz: Option<Wohnanschrift>,
}
