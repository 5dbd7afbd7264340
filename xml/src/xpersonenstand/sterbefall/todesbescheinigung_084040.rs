//! Message `portal2StA.Sterbefall.084040`: a physician's notice of the post-mortem
//! examination, the electronic death certificate (JSON slot `Todesbescheinigung`).

use serde::{Deserialize, Serialize};

use crate::codelisten::IDENTIFIZIERUNGSART;

use super::super::header::Nachrichtentyp;
use super::super::werte::{
    gesetzt, pruefe_postleitzahl, pruefe_tagesdatum, pruefe_uhrzeit, zerlege_hausnummer,
};
use super::super::xml_out::XmlOut;
use super::super::{AnschriftAutor, Gebaeudeanschrift, Nachrichtenkopf, PersonName, XmlError};
use super::gemeinsam::{
    beende, beginne, fehlt_anschrift_autor, fehlt_kontakte, fehlt_todeszeitpunkt,
    pruefe_todeszeitpunkt, pruefe_vollstaendig, schreibe_geschlecht, schreibe_kontakte,
    schreibe_ortsangaben, schreibe_personname, schreibe_todestag, text_opt, ungueltig, wahr_opt,
    Fehlend, KontaktPfade, LETZTER_WOHNSITZ, VERSTORBENER,
};
use super::modell::{GeschlechtVerstorbener, Kontakt, Sterbeort, Todeszeitpunkt, Wohnanschrift};

const TYP: Nachrichtentyp = Nachrichtentyp {
    code: "084040",
    name: "portal2StA.Sterbefall.084040",
};

const ARZT_KONTAKT: KontaktPfade = KontaktPfade {
    liste: "angabenLeichenschau.kontaktArzt",
    kanal: "angabenLeichenschau.kontaktArzt[].kanal",
    kennung: "angabenLeichenschau.kontaktArzt[].kennung",
    zusatz: "angabenLeichenschau.kontaktArzt[].zusatz",
};
const P_ARZT_VORNAMEN: &str = "angabenLeichenschau.namenArzt.vornamen";
const P_ARZT_FAMILIENNAME: &str = "angabenLeichenschau.namenArzt.familienname";
const P_DATUM: &str = "angabenLeichenschau.datum";
const P_UHRZEIT: &str = "angabenLeichenschau.uhrzeit";
const P_EXAKT: &str = "angabenLeichenschau.uhrzeitExakt";
const P_ORT: &str = "angabenLeichenschau.ort";

/// Content of the `Todesbescheinigung` slot of a death-notice request: the examining
/// physician's death certificate (message 084040).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Todesbescheinigung {
    /// Postal address of the sender (`anschrift.autor`); required by the schema.
    pub anschrift_autor: Option<AnschriftAutor>,
    /// The deceased (`verstorbener`).
    pub verstorbener: Option<VerstorbenerTodesbescheinigung>,
    /// Time and place of death or finding (`sterbefall`).
    pub sterbefall: Option<SterbefallTodesbescheinigung>,
    /// The examination and the examining physician (`angabenLeichenschau`).
    pub angaben_leichenschau: Option<AngabenLeichenschau>,
    /// Body id issued by the physician (`leichenID`, mandatory in 084040); identical in
    /// 084020/084021 and in the registry's follow-up message 104010.
    #[serde(rename = "leichenID", skip_serializing_if = "Option::is_none")]
    pub leichen_id: Option<String>,
}

/// The deceased in a death certificate (`Todesbescheinigung.Verstorbener`).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VerstorbenerTodesbescheinigung {
    /// Given names.
    pub vorname: Option<String>,
    /// Family name (the full name when given names cannot be identified).
    pub familienname: Option<String>,
    /// Birth name, only if different from the family name.
    pub geburtsname: Option<String>,
    /// Last residence in Germany (`letzterWohnort/anschriftInland`).
    pub letzter_wohnsitz: Option<Wohnanschrift>,
    /// Date of birth, `YYYY-MM-DD` (`tagDerGeburt/jahrMonatTag`).
    pub geburtstag: Option<String>,
    /// Place of birth (`ortDerGeburt`).
    pub geburtsort: Option<String>,
    /// Sex of the deceased.
    pub geschlecht: Option<GeschlechtVerstorbener>,
    /// How the deceased was identified, as a code of the list
    /// `urn:xoev-de:xpersonenstand:codeliste:identifizierungsart`: `EPR` identity card or
    /// passport, `ESI` other document, `AAD` statements of relatives or third parties,
    /// `EK` own knowledge, `NM` not possible.
    pub identifizierung: Option<String>,
}

/// Time and place in a death certificate (`Todesbescheinigung.Sterbefall`).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SterbefallTodesbescheinigung {
    /// When the death occurred (`todestag`).
    pub todeszeitpunkt: Option<Todeszeitpunkt>,
    /// Place of death or, with `auffindungsort: true`, of finding (`ereignisort`).
    pub sterbeort: Option<Sterbeort>,
    /// The place is where the body was found, not the place of death. Without it the
    /// flag `sterbeort` = `true` is written.
    pub auffindungsort: Option<bool>,
    /// A natural cause of death is established (`natuerlicherTod`, only when `true`).
    pub natuerlicher_tod: Option<bool>,
    /// Stillbirth (`totgeburt`, only when `true`).
    pub totgeburt: Option<bool>,
}

/// The post-mortem examination (`Todesbescheinigung.Leichenschau`).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AngabenLeichenschau {
    /// Names of the physician (`namenArzt`).
    pub namen_arzt: Option<PersonName>,
    /// Professional address of the physician in Germany (`anschriftArzt`).
    pub anschrift_arzt: Option<Gebaeudeanschrift>,
    /// Professional contact channels of the physician (`kontaktArzt`, at least one).
    pub kontakt_arzt: Option<Vec<Kontakt>>,
    /// Day of the examination, `YYYY-MM-DD`.
    pub datum: Option<String>,
    /// Time of the examination, `HH:mm`.
    pub uhrzeit: Option<String>,
    /// Whether `uhrzeit` is exact (`uhrzeit/@exakt`).
    pub uhrzeit_exakt: Option<bool>,
    /// The time of the examination is unknown (`uhrzeit/unbekannt`); replaces `uhrzeit`.
    pub uhrzeit_unbekannt: Option<bool>,
    /// Town where the examination took place.
    pub ort: Option<String>,
}

impl Todesbescheinigung {
    /// Dotted JSON paths (relative to the slot) of fields the 084040 schema makes
    /// mandatory and that are missing or blank, in document order; array members are
    /// marked `[]`. The time of the examination is required unless `uhrzeitUnbekannt` is
    /// `true`; `uhrzeitExakt` is required with a time.
    pub fn missing_for_dispatch(&self) -> Vec<&'static str> {
        let mut fehlt = Fehlend(Vec::new());
        fehlt_anschrift_autor(self.anschrift_autor.as_ref(), &mut fehlt);
        let v = self.verstorbener.clone().unwrap_or_default();
        v.kern().fehlt(&VERSTORBENER, &mut fehlt);
        let s = self.sterbefall.as_ref();
        fehlt_todeszeitpunkt(s.and_then(|s| s.todeszeitpunkt.as_ref()), &mut fehlt);

        let l = self.angaben_leichenschau.clone().unwrap_or_default();
        let arzt = l.namen_arzt.as_ref();
        fehlt.text(arzt.map(|n| &n.vornamen), P_ARZT_VORNAMEN);
        fehlt.text(arzt.map(|n| &n.familienname), P_ARZT_FAMILIENNAME);
        fehlt_kontakte(l.kontakt_arzt.as_deref(), &ARZT_KONTAKT, &mut fehlt);
        fehlt.text(Some(&l.datum), P_DATUM);
        if l.uhrzeit_unbekannt != Some(true) {
            fehlt.text(Some(&l.uhrzeit), P_UHRZEIT);
            fehlt.erwarte(l.uhrzeit_exakt.is_some(), P_EXAKT);
        }
        fehlt.text(Some(&l.ort), P_ORT);
        fehlt.text(Some(&self.leichen_id), "leichenID");
        fehlt.0
    }
}

fn pruefe_werte(x: &Todesbescheinigung) -> Result<(), XmlError> {
    pruefe_todeszeitpunkt(
        x.sterbefall
            .as_ref()
            .and_then(|s| s.todeszeitpunkt.as_ref()),
    )?;
    let art = x
        .verstorbener
        .as_ref()
        .and_then(|v| gesetzt(&v.identifizierung));
    if let Some(a) = art {
        IDENTIFIZIERUNGSART.pruefe("verstorbener.identifizierung", a)?;
    }
    let l = x.angaben_leichenschau.as_ref();
    if l.is_some_and(|l| l.uhrzeit_unbekannt == Some(true) && gesetzt(&l.uhrzeit).is_some()) {
        return Err(ungueltig(
            "angabenLeichenschau.uhrzeitUnbekannt",
            "eine unbekannte Uhrzeit schließt die Angabe einer Uhrzeit aus",
        ));
    }
    Ok(())
}

/// Writes a physician's death certificate as XPersonenstand 26.11 message 084040 (UTF-8,
/// indented).
///
/// Fails with [`XmlError::MissingField`] for the first path of
/// [`Todesbescheinigung::missing_for_dispatch`] or a missing header field, and with
/// [`XmlError::InvalidValue`] for values the schema would reject (dates, date-times
/// without offset, times, postal codes, house numbers, identification codes, characters
/// outside DIN 91379) or contradictory fields (a day and a period of death, a time of the
/// examination together with `uhrzeitUnbekannt`).
pub fn write_sterbefall_084040(
    kopf: &Nachrichtenkopf,
    x: &Todesbescheinigung,
) -> Result<String, XmlError> {
    pruefe_vollstaendig(x.missing_for_dispatch())?;
    pruefe_werte(x)?;
    let l = x.angaben_leichenschau.clone().unwrap_or_default();
    let arzt = l.namen_arzt.clone().unwrap_or_default();
    let ansprechpartner = Some((&arzt, "angabenLeichenschau.namenArzt"));
    let mut out = beginne(&TYP, kopf, x.anschrift_autor.as_ref(), ansprechpartner)?;

    schreibe_verstorbener(&mut out, &x.verstorbener.clone().unwrap_or_default())?;
    schreibe_sterbefall(&mut out, &x.sterbefall.clone().unwrap_or_default())?;

    out.start("xpsw:angabenLeichenschau", &[])?;
    schreibe_personname(
        &mut out,
        "xpsw:namenArzt",
        &arzt,
        [
            P_ARZT_FAMILIENNAME,
            "angabenLeichenschau.namenArzt.geburtsname",
            P_ARZT_VORNAMEN,
        ],
    )?;
    let a = l.anschrift_arzt.clone().unwrap_or_default();
    schreibe_anschrift_inland(
        &mut out,
        "xpsw:anschriftArzt",
        InlandFelder {
            hausnummer: (
                &a.hausnummer,
                "angabenLeichenschau.anschriftArzt.hausnummer",
            ),
            postleitzahl: (
                &a.postleitzahl,
                "angabenLeichenschau.anschriftArzt.postleitzahl",
            ),
            strasse: (&a.strasse, "angabenLeichenschau.anschriftArzt.strasse"),
            wohnort: (&a.wohnort, "angabenLeichenschau.anschriftArzt.wohnort"),
        },
    )?;
    schreibe_kontakte(
        &mut out,
        "xpsw:kontaktArzt",
        l.kontakt_arzt.as_deref(),
        &ARZT_KONTAKT,
    )?;
    let datum = gesetzt(&l.datum).unwrap_or_default();
    pruefe_tagesdatum(P_DATUM, datum)?;
    out.wert("xpsw:datum", datum)?;
    out.start("xpsw:uhrzeit", &[])?;
    match gesetzt(&l.uhrzeit) {
        Some(u) => {
            pruefe_uhrzeit(P_UHRZEIT, u)?;
            let exakt = if l.uhrzeit_exakt == Some(true) {
                "true"
            } else {
                "false"
            };
            out.wert_mit_attributen("xpsw:uhrzeit", &[("exakt", exakt)], u)?;
        }
        None => out.wert("xpsw:unbekannt", "true")?,
    }
    out.end("xpsw:uhrzeit")?;
    out.text("xpsw:ort", P_ORT, gesetzt(&l.ort).unwrap_or_default())?;
    out.end("xpsw:angabenLeichenschau")?;

    out.text(
        "xpsw:leichenID",
        "leichenID",
        gesetzt(&x.leichen_id).unwrap_or_default(),
    )?;
    beende(out, &TYP)
}

fn schreibe_verstorbener(
    out: &mut XmlOut,
    v: &VerstorbenerTodesbescheinigung,
) -> Result<(), XmlError> {
    out.start("xpsw:verstorbener", &[])?;
    text_opt(out, "xpsw:vorname", VERSTORBENER.vorname, &v.vorname)?;
    let familienname = gesetzt(&v.familienname).unwrap_or_default();
    out.text("xpsw:familienname", VERSTORBENER.familienname, familienname)?;
    text_opt(
        out,
        "xpsw:geburtsname",
        VERSTORBENER.geburtsname,
        &v.geburtsname,
    )?;
    if let Some(w) = v.letzter_wohnsitz.as_ref().filter(|w| w.angegeben()) {
        out.start("xpsw:letzterWohnort", &[])?;
        schreibe_anschrift_inland(
            out,
            "xpsw:anschriftInland",
            InlandFelder {
                hausnummer: (&None, LETZTER_WOHNSITZ.strasse),
                postleitzahl: (&w.plz, LETZTER_WOHNSITZ.plz),
                strasse: (&w.strasse, LETZTER_WOHNSITZ.strasse),
                wohnort: (&w.ort, LETZTER_WOHNSITZ.ort),
            },
        )?;
        out.end("xpsw:letzterWohnort")?;
    }
    if let Some(tag) = gesetzt(&v.geburtstag) {
        pruefe_tagesdatum(VERSTORBENER.geburtstag, tag)?;
        out.start("xpsw:tagDerGeburt", &[])?;
        out.wert("jahrMonatTag", tag)?;
        out.end("xpsw:tagDerGeburt")?;
    }
    text_opt(
        out,
        "xpsw:ortDerGeburt",
        "verstorbener.geburtsort",
        &v.geburtsort,
    )?;
    let geschlecht = v
        .geschlecht
        .ok_or(XmlError::MissingField(VERSTORBENER.geschlecht))?;
    schreibe_geschlecht(out, geschlecht)?;
    if let Some(art) = gesetzt(&v.identifizierung) {
        out.start("xpsw:identifizierung", &[])?;
        out.code("xpsw:code", &IDENTIFIZIERUNGSART, art)?;
        out.end("xpsw:identifizierung")?;
    }
    out.end("xpsw:verstorbener")
}

fn schreibe_sterbefall(out: &mut XmlOut, s: &SterbefallTodesbescheinigung) -> Result<(), XmlError> {
    out.start("xpsw:sterbefall", &[])?;
    wahr_opt(out, "xpsw:sterbeort", Some(s.auffindungsort != Some(true)))?;
    match s.sterbeort.as_ref().filter(|o| o.angegeben()) {
        Some(o) => {
            out.start("xpsw:ereignisort", &[])?;
            schreibe_ortsangaben(out, o)?;
            out.end("xpsw:ereignisort")?;
        }
        None => out.leer("xpsw:ereignisort")?,
    }
    schreibe_todestag(out, &s.todeszeitpunkt.clone().unwrap_or_default())?;
    wahr_opt(out, "xpsw:natuerlicherTod", s.natuerlicher_tod)?;
    wahr_opt(out, "xpsw:totgeburt", s.totgeburt)?;
    out.end("xpsw:sterbefall")
}

/// Values and JSON paths of an `Anschrift.Inland`.
struct InlandFelder<'a> {
    hausnummer: (&'a Option<String>, &'static str),
    postleitzahl: (&'a Option<String>, &'static str),
    strasse: (&'a Option<String>, &'static str),
    wohnort: (&'a Option<String>, &'static str),
}

/// `Anschrift.Inland` (XInneres `Meldeanschrift`, unqualified children); the element is
/// written even when empty because both uses make it mandatory or choose it explicitly.
fn schreibe_anschrift_inland(
    out: &mut XmlOut,
    element: &str,
    f: InlandFelder<'_>,
) -> Result<(), XmlError> {
    if [f.hausnummer.0, f.postleitzahl.0, f.strasse.0, f.wohnort.0]
        .into_iter()
        .all(|w| gesetzt(w).is_none())
    {
        return out.leer(element);
    }
    out.start(element, &[])?;
    if let Some(h) = gesetzt(f.hausnummer.0) {
        let h = zerlege_hausnummer(f.hausnummer.1, h)?;
        out.wert("hausnummer", h.nummer)?;
        if let Some(z) = h.zusatz {
            out.text("hausnummerBuchstabeZusatzziffer", f.hausnummer.1, z)?;
        }
    }
    if let Some(p) = gesetzt(f.postleitzahl.0) {
        pruefe_postleitzahl(f.postleitzahl.1, p)?;
        out.wert("postleitzahl", p)?;
    }
    text_opt(out, "strasse", f.strasse.1, f.strasse.0)?;
    text_opt(out, "wohnort", f.wohnort.1, f.wohnort.0)?;
    out.end(element)
}
