//! Message `portal2StA.Sterbefall.084020`: death notice by a hospital or care facility
//! (JSON slot `Einrichtung`).

use serde::{Deserialize, Serialize};

use super::super::header::Nachrichtentyp;
use super::super::{AnschriftAutor, Nachrichtenkopf, XmlError};
use super::gemeinsam::{
    beende, beginne, fehlt_anschrift_autor, fehlt_anzeigender, fehlt_sterbefall,
    pruefe_todeszeitpunkt, pruefe_vollstaendig, schreibe_anzeigender, schreibe_person_kern,
    schreibe_sterbefall, schreibe_wohnanschrift, text_opt, Fehlend, LETZTER_WOHNSITZ, VERSTORBENER,
};
use super::modell::{Anzeigender, Sterbefall, Verstorbener};

const TYP: Nachrichtentyp = Nachrichtentyp {
    code: "084020",
    name: "portal2StA.Sterbefall.084020",
};

/// Content of the `Einrichtung` slot of a death-notice request: the notice of a hospital
/// or care facility in which the death occurred (message 084020).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SterbefallEinrichtung {
    /// Postal address of the facility (`anschrift.autor`); the schema requires it for
    /// every message and the contract has no other field for it.
    pub anschrift_autor: Option<AnschriftAutor>,
    /// The reporting facility and its contact person (`anzeigender`).
    pub anzeigender: Option<Anzeigender>,
    /// The deceased (`verstorbener`).
    pub verstorbener: Option<Verstorbener>,
    /// Time and place of death (`sterbefall`).
    pub sterbefall: Option<Sterbefall>,
    /// Body id issued by the examining physician (`leichenID`); pairs this notice with
    /// 084021 and 084040, which carry the identical value.
    #[serde(rename = "leichenID", skip_serializing_if = "Option::is_none")]
    pub leichen_id: Option<String>,
}

impl SterbefallEinrichtung {
    /// Dotted JSON paths (relative to the slot, e.g. `verstorbener.familienname`) of
    /// fields the 084020 schema makes mandatory and that are missing or blank, in
    /// document order; array members are marked `[]` (e.g.
    /// `anzeigender.kontaktdaten[].kennung`). The form refuses to dispatch until this is
    /// empty.
    pub fn missing_for_dispatch(&self) -> Vec<&'static str> {
        let mut fehlt = Fehlend(Vec::new());
        fehlt_anschrift_autor(self.anschrift_autor.as_ref(), &mut fehlt);
        fehlt_sterbefall(self.sterbefall.as_ref(), true, &mut fehlt);
        let v = self.verstorbener.clone().unwrap_or_default();
        v.kern().fehlt(&VERSTORBENER, &mut fehlt);
        fehlt_anzeigender(self.anzeigender.as_ref(), &mut fehlt);
        fehlt.0
    }
}

/// Writes a facility's death notice as XPersonenstand 26.11 message 084020 (UTF-8,
/// indented).
///
/// Fails with [`XmlError::MissingField`] for the first path of
/// [`SterbefallEinrichtung::missing_for_dispatch`] or a missing header field, and with
/// [`XmlError::InvalidValue`] for values the schema would reject (dates, date-times
/// without offset, times, postal codes, house numbers, characters outside DIN 91379) or a
/// time of death given both as a day and as a period.
pub fn write_sterbefall_084020(
    kopf: &Nachrichtenkopf,
    x: &SterbefallEinrichtung,
) -> Result<String, XmlError> {
    pruefe_vollstaendig(x.missing_for_dispatch())?;
    pruefe_todeszeitpunkt(
        x.sterbefall
            .as_ref()
            .and_then(|s| s.todeszeitpunkt.as_ref()),
    )?;
    let anzeigender = x.anzeigender.clone().unwrap_or_default();
    let ansprechpartner = anzeigender
        .ansprechpartner
        .as_ref()
        .map(|p| (p, "anzeigender.ansprechpartner"));
    let mut out = beginne(&TYP, kopf, x.anschrift_autor.as_ref(), ansprechpartner)?;

    schreibe_sterbefall(&mut out, &x.sterbefall.clone().unwrap_or_default())?;

    let v = x.verstorbener.clone().unwrap_or_default();
    out.start("xpsw:verstorbener", &[])?;
    schreibe_person_kern(&mut out, &v.kern(), &VERSTORBENER)?;
    schreibe_wohnanschrift(
        &mut out,
        "xpsw:letzterWohnsitz",
        v.letzter_wohnsitz.as_ref(),
        &LETZTER_WOHNSITZ,
    )?;
    out.end("xpsw:verstorbener")?;

    schreibe_anzeigender(&mut out, &anzeigender)?;
    text_opt(&mut out, "xpsw:leichenID", "leichenID", &x.leichen_id)?;
    beende(out, &TYP)
}
