//! Message `portal2StA.Sterbefall.084021`: death notice by the undertaker (JSON slot
//! `Bestatter`), carrying what the facility cannot confirm: family, informant, burial and
//! certificate order.

use serde::{Deserialize, Serialize};

use crate::codelisten::{BESTATTUNGSART, FAMILIENSTAND};

use super::super::header::Nachrichtentyp;
use super::super::werte::gesetzt;
use super::super::xml_out::XmlOut;
use super::super::{AnschriftAutor, Nachrichtenkopf, XmlError};
use super::gemeinsam::{
    beende, beginne, datum_opt, fehlt_anschrift_autor, fehlt_anzeigender, fehlt_kontakte,
    fehlt_sterbefall, pruefe_todeszeitpunkt, pruefe_vollstaendig, schreibe_anzeigender,
    schreibe_kontakte, schreibe_person_kern, schreibe_sterbefall, schreibe_wohnanschrift, text_opt,
    ungueltig, wahr_opt, zahl_opt, AnschriftPfade, Fehlend, KontaktPfade, PersonPfade,
    LETZTER_WOHNSITZ, VERSTORBENER,
};
use super::modell::{Anzeigender, GeschlechtVerstorbener, Sterbefall, Wohnanschrift};

const TYP: Nachrichtentyp = Nachrichtentyp {
    code: "084021",
    name: "portal2StA.Sterbefall.084021",
};

const PARTNER: PersonPfade = PersonPfade {
    vorname: "partnerVerstorbener.vorname",
    familienname: "partnerVerstorbener.familienname",
    geburtsname: "partnerVerstorbener.geburtsname",
    geburtstag: "partnerVerstorbener.geburtstag",
    geschlecht: "partnerVerstorbener.geschlecht",
};
const AUSKUNFT_KONTAKT: KontaktPfade = KontaktPfade {
    liste: "auskunftsgeber.kontaktdaten",
    kanal: "auskunftsgeber.kontaktdaten[].kanal",
    kennung: "auskunftsgeber.kontaktdaten[].kennung",
    zusatz: "auskunftsgeber.kontaktdaten[].zusatz",
};
const AUSKUNFT_ANSCHRIFT: AnschriftPfade = AnschriftPfade {
    strasse: "auskunftsgeber.anschrift.strasse",
    plz: "auskunftsgeber.anschrift.plz",
    ort: "auskunftsgeber.anschrift.ort",
};
const VOLLJ_ANSCHRIFT: AnschriftPfade = AnschriftPfade {
    strasse: "volljaehrigeKinder[].anschrift.strasse",
    plz: "volljaehrigeKinder[].anschrift.plz",
    ort: "volljaehrigeKinder[].anschrift.ort",
};
const MINDERJ_ANSCHRIFT: AnschriftPfade = AnschriftPfade {
    strasse: "minderjaehrigeKinder[].anschrift.strasse",
    plz: "minderjaehrigeKinder[].anschrift.plz",
    ort: "minderjaehrigeKinder[].anschrift.ort",
};

/// Content of the `Bestatter` slot of a death-notice request: the undertaker's notice
/// (message 084021).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SterbefallBestatter {
    /// Postal address of the undertaker (`anschrift.autor`); required by the schema.
    pub anschrift_autor: Option<AnschriftAutor>,
    /// The reporting undertaker and its contact person (`anzeigender`).
    pub anzeigender: Option<Anzeigender>,
    /// The deceased (`verstorbener`).
    pub verstorbener: Option<VerstorbenerBestatter>,
    /// Time and place of death, for plausibility only (`sterbefall`, optional here).
    pub sterbefall: Option<Sterbefall>,
    /// Spouse or registered partner (`partnerVerstorbener`).
    pub partner_verstorbener: Option<PartnerVerstorbener>,
    /// Informant who is neither partner nor child (`auskunftsgeber`).
    pub auskunftsgeber: Option<Auskunftsgeber>,
    /// Number of adult children; `0` when known to be none (`anzahlKinderVolljaehrig`).
    pub anzahl_kinder_volljaehrig: Option<u32>,
    /// Adult children (`volljaehrigeKinder`).
    pub volljaehrige_kinder: Option<Vec<VolljaehrigesKind>>,
    /// Number of minor children; `0` when known to be none (`anzahlKinderMinderjaehrig`).
    pub anzahl_kinder_minderjaehrig: Option<u32>,
    /// Minor children (`minderjaehrigeKinder`).
    pub minderjaehrige_kinder: Option<Vec<MinderjaehrigesKind>>,
    /// Kind of burial (`artDerBestattung`).
    pub art_der_bestattung: Option<Bestattungsart>,
    /// Death certificates wanted after registration (`zahlDerUrkunden`).
    pub zahl_der_urkunden: Option<ZahlDerUrkunden>,
    /// Certificates are collected at the office instead of being posted
    /// (`abholungImStandesamt`, written only when `true`).
    pub abholung_im_standesamt: Option<bool>,
    /// A certificate is wanted if registration is deferred
    /// (`bescheinigungBeiZurueckstellung`, written only when `true`).
    pub bescheinigung_bei_zurueckstellung: Option<bool>,
    /// Body id issued by the examining physician (`leichenID`); identical in 084020/084040.
    #[serde(rename = "leichenID", skip_serializing_if = "Option::is_none")]
    pub leichen_id: Option<String>,
}

/// The deceased as the undertaker reports them
/// (`Portal2StA.Sterbefall.Verstorbener.Bestatter`): the facility's fields plus marital
/// status and the orphan flag.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VerstorbenerBestatter {
    /// Given names, space separated.
    pub vorname: Option<String>,
    /// Family name.
    pub familienname: Option<String>,
    /// Birth name, if different.
    pub geburtsname: Option<String>,
    /// Date of birth, `YYYY-MM-DD`.
    pub geburtstag: Option<String>,
    /// Sex of the deceased.
    pub geschlecht: Option<GeschlechtVerstorbener>,
    /// Last residence (`letzterWohnsitz`).
    pub letzter_wohnsitz: Option<Wohnanschrift>,
    /// Marital status as a code of the list
    /// `urn:xpersonenstand:schluesseltabelle:familienstandpersonenstandswesen`, e.g. `VH`
    /// married, `VW` widowed, `GS` divorced, `LD` single, `NB` unknown.
    pub familienstand: Option<String>,
    /// The deceased was a minor full orphan (`vollwaise`, written only when `true`).
    pub vollwaise: Option<bool>,
}

/// Spouse or registered partner of the deceased
/// (`Portal2StA.Sterbefall.VerstorbenerPartner.Bestatter`).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PartnerVerstorbener {
    /// Given names.
    pub vorname: Option<String>,
    /// Family name.
    pub familienname: Option<String>,
    /// Birth name, if different.
    pub geburtsname: Option<String>,
    /// Date of birth, `YYYY-MM-DD`.
    pub geburtstag: Option<String>,
    /// Sex of the partner.
    pub geschlecht: Option<GeschlechtVerstorbener>,
    /// The partner is also the informant (`istAuskunftsgeber`, written only when `true`).
    pub ist_auskunftsgeber: Option<bool>,
}

/// Informant who is neither partner nor child of the deceased (`auskunftsgeber`).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Auskunftsgeber {
    /// Given names.
    pub vorname: Option<String>,
    /// Family name.
    pub familienname: Option<String>,
    /// Birth name, if different.
    pub geburtsname: Option<String>,
    /// Address of the informant.
    pub anschrift: Option<Wohnanschrift>,
    /// Contact channels (at least one once the informant is given).
    pub kontaktdaten: Option<Vec<super::modell::Kontakt>>,
    /// Relation to the deceased, e.g. `Nichte` (`verhaeltnisVerstorbener`).
    pub verhaeltnis_verstorbener: Option<String>,
}

/// An adult child of the deceased (`volljaehrigeKinder`).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VolljaehrigesKind {
    /// Family name.
    pub familienname: Option<String>,
    /// Birth name, if different.
    pub geburtsname: Option<String>,
    /// Given names.
    pub vornamen: Option<String>,
    /// Address of the child.
    pub anschrift: Option<Wohnanschrift>,
    /// The child is also the informant (`istAuskunftsgeber`, written only when `true`).
    pub ist_auskunftsgeber: Option<bool>,
}

/// A minor child of the deceased (`minderjaehrigeKinder`).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MinderjaehrigesKind {
    /// Family name.
    pub familienname: Option<String>,
    /// Given names.
    pub vornamen: Option<String>,
    /// Date of birth, `YYYY-MM-DD`.
    pub geburtstag: Option<String>,
    /// Address of the child.
    pub anschrift: Option<Wohnanschrift>,
    /// The child became a full orphan by this death (`vollwaise`, written only when `true`).
    pub vollwaise: Option<bool>,
    /// The child is also the informant (`istAuskunftsgeber`, written only when `true`).
    pub ist_auskunftsgeber: Option<bool>,
}

/// Kind of burial; mapped to the list `urn:xpersonenstand:schluesseltabelle:bestattungsart`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Bestattungsart {
    /// Burial in the ground; code `1`.
    Erdbestattung,
    /// Cremation; code `2`.
    Feuerbestattung,
    /// Not known yet; code `3`.
    Unbekannt,
}

impl Bestattungsart {
    /// Code of the list `BESTATTUNGSART`.
    pub(crate) fn code(self) -> &'static str {
        match self {
            Bestattungsart::Erdbestattung => "1",
            Bestattungsart::Feuerbestattung => "2",
            Bestattungsart::Unbekannt => "3",
        }
    }
}

/// Number of certificates per format (`Urkundenanforderung.ArtDerUrkunde.Erweitert`).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ZahlDerUrkunden {
    /// Standard-format certificates.
    pub anzahl_standardformat: Option<u32>,
    /// Family-book format certificates.
    pub anzahl_stammbuchformat: Option<u32>,
    /// International certificates CIEC 16.
    #[serde(rename = "anzahlCIEC16", skip_serializing_if = "Option::is_none")]
    pub anzahl_ciec16: Option<u32>,
    /// International certificates CIEC 34.
    #[serde(rename = "anzahlCIEC34", skip_serializing_if = "Option::is_none")]
    pub anzahl_ciec34: Option<u32>,
    /// Register print-outs.
    pub anzahl_registerausdruck: Option<u32>,
    /// Register print-outs with notes.
    pub anzahl_registerausdruck_mit_hinweisen: Option<u32>,
    /// Certificates for social insurance purposes.
    pub anzahl_sozialversicherung: Option<u32>,
}

impl Auskunftsgeber {
    fn angegeben(&self) -> bool {
        [
            &self.vorname,
            &self.familienname,
            &self.geburtsname,
            &self.verhaeltnis_verstorbener,
        ]
        .into_iter()
        .any(|w| gesetzt(w).is_some())
            || self.anschrift.as_ref().is_some_and(|a| a.angegeben())
            || self
                .kontaktdaten
                .as_ref()
                .is_some_and(|k| k.iter().any(|k| k.angegeben()))
    }
}

impl SterbefallBestatter {
    /// Dotted JSON paths (relative to the slot) of fields the 084021 schema makes
    /// mandatory and that are missing or blank, in document order; array members are
    /// marked `[]`. Optional sections (`sterbefall`, `partnerVerstorbener`,
    /// `auskunftsgeber`) are checked only once one of their fields is filled.
    pub fn missing_for_dispatch(&self) -> Vec<&'static str> {
        let mut fehlt = Fehlend(Vec::new());
        fehlt_anschrift_autor(self.anschrift_autor.as_ref(), &mut fehlt);
        if let Some(s) = self.sterbefall.as_ref().filter(|s| s.angegeben()) {
            fehlt_sterbefall(Some(s), true, &mut fehlt);
        }
        let v = self.verstorbener.clone().unwrap_or_default();
        v.kern().fehlt(&VERSTORBENER, &mut fehlt);
        if let Some(p) = self.partner().filter(|p| p.kern().angegeben()) {
            p.kern().fehlt(&PARTNER, &mut fehlt);
        }
        fehlt_anzeigender(self.anzeigender.as_ref(), &mut fehlt);
        if let Some(a) = self.auskunftsgeber.as_ref().filter(|a| a.angegeben()) {
            fehlt_kontakte(a.kontaktdaten.as_deref(), &AUSKUNFT_KONTAKT, &mut fehlt);
        }
        fehlt.0
    }

    fn partner(&self) -> Option<&PartnerVerstorbener> {
        self.partner_verstorbener.as_ref()
    }
}

fn pruefe_werte(x: &SterbefallBestatter) -> Result<(), XmlError> {
    pruefe_todeszeitpunkt(
        x.sterbefall
            .as_ref()
            .and_then(|s| s.todeszeitpunkt.as_ref()),
    )?;
    let familienstand = x
        .verstorbener
        .as_ref()
        .and_then(|v| gesetzt(&v.familienstand));
    if let Some(f) = familienstand {
        FAMILIENSTAND.pruefe("verstorbener.familienstand", f)?;
    }
    let anzahl_passt =
        |anzahl: Option<u32>, liste: usize| anzahl.is_none_or(|n| n as usize >= liste);
    if !anzahl_passt(
        x.anzahl_kinder_volljaehrig,
        x.volljaehrige_kinder.as_ref().map_or(0, Vec::len),
    ) {
        return Err(ungueltig(
            "anzahlKinderVolljaehrig",
            "ist kleiner als die Zahl der aufgeführten volljährigen Kinder",
        ));
    }
    if !anzahl_passt(
        x.anzahl_kinder_minderjaehrig,
        x.minderjaehrige_kinder.as_ref().map_or(0, Vec::len),
    ) {
        return Err(ungueltig(
            "anzahlKinderMinderjaehrig",
            "ist kleiner als die Zahl der aufgeführten minderjährigen Kinder",
        ));
    }
    Ok(())
}

/// Writes an undertaker's death notice as XPersonenstand 26.11 message 084021 (UTF-8,
/// indented).
///
/// Fails with [`XmlError::MissingField`] for the first path of
/// [`SterbefallBestatter::missing_for_dispatch`] or a missing header field, and with
/// [`XmlError::InvalidValue`] for values the schema would reject (dates, date-times
/// without offset, times, postal codes, house numbers, marital status codes, characters
/// outside DIN 91379), a time of death given both as a day and as a period, or a child
/// count smaller than the children listed.
pub fn write_sterbefall_084021(
    kopf: &Nachrichtenkopf,
    x: &SterbefallBestatter,
) -> Result<String, XmlError> {
    pruefe_vollstaendig(x.missing_for_dispatch())?;
    pruefe_werte(x)?;
    let anzeigender = x.anzeigender.clone().unwrap_or_default();
    let ansprechpartner = anzeigender
        .ansprechpartner
        .as_ref()
        .map(|p| (p, "anzeigender.ansprechpartner"));
    let mut out = beginne(&TYP, kopf, x.anschrift_autor.as_ref(), ansprechpartner)?;

    if let Some(s) = x.sterbefall.as_ref().filter(|s| s.angegeben()) {
        schreibe_sterbefall(&mut out, s)?;
    }
    schreibe_verstorbener(&mut out, &x.verstorbener.clone().unwrap_or_default())?;
    if let Some(p) = x.partner().filter(|p| p.kern().angegeben()) {
        out.start("xpsw:partnerVerstorbener", &[])?;
        schreibe_person_kern(&mut out, &p.kern(), &PARTNER)?;
        wahr_opt(&mut out, "xpsw:istAuskunftsgeber", p.ist_auskunftsgeber)?;
        out.end("xpsw:partnerVerstorbener")?;
    }
    schreibe_anzeigender(&mut out, &anzeigender)?;
    if let Some(a) = x.auskunftsgeber.as_ref().filter(|a| a.angegeben()) {
        schreibe_auskunftsgeber(&mut out, a)?;
    }
    zahl_opt(
        &mut out,
        "xpsw:anzahlKinderVolljaehrig",
        x.anzahl_kinder_volljaehrig,
    )?;
    for k in x.volljaehrige_kinder.as_deref().unwrap_or_default() {
        schreibe_volljaehriges_kind(&mut out, k)?;
    }
    zahl_opt(
        &mut out,
        "xpsw:anzahlKinderMinderjaehrig",
        x.anzahl_kinder_minderjaehrig,
    )?;
    for k in x.minderjaehrige_kinder.as_deref().unwrap_or_default() {
        schreibe_minderjaehriges_kind(&mut out, k)?;
    }
    if let Some(b) = x.art_der_bestattung {
        out.start("xpsw:artDerBestattung", &[])?;
        out.code("xpsw:code", &BESTATTUNGSART, b.code())?;
        out.end("xpsw:artDerBestattung")?;
    }
    if let Some(z) = x.zahl_der_urkunden.as_ref() {
        schreibe_zahl_der_urkunden(&mut out, z)?;
    }
    wahr_opt(
        &mut out,
        "xpsw:abholungImStandesamt",
        x.abholung_im_standesamt,
    )?;
    wahr_opt(
        &mut out,
        "xpsw:bescheinigungBeiZurueckstellung",
        x.bescheinigung_bei_zurueckstellung,
    )?;
    text_opt(&mut out, "xpsw:leichenID", "leichenID", &x.leichen_id)?;
    beende(out, &TYP)
}

fn schreibe_verstorbener(out: &mut XmlOut, v: &VerstorbenerBestatter) -> Result<(), XmlError> {
    out.start("xpsw:verstorbener", &[])?;
    schreibe_person_kern(out, &v.kern(), &VERSTORBENER)?;
    schreibe_wohnanschrift(
        out,
        "xpsw:letzterWohnsitz",
        v.letzter_wohnsitz.as_ref(),
        &LETZTER_WOHNSITZ,
    )?;
    if let Some(f) = gesetzt(&v.familienstand) {
        out.start("xpsw:familienstand", &[])?;
        out.code("xpsw:code", &FAMILIENSTAND, f)?;
        out.end("xpsw:familienstand")?;
    }
    wahr_opt(out, "xpsw:vollwaise", v.vollwaise)?;
    out.end("xpsw:verstorbener")
}

fn schreibe_auskunftsgeber(out: &mut XmlOut, a: &Auskunftsgeber) -> Result<(), XmlError> {
    out.start("xpsw:auskunftsgeber", &[])?;
    text_opt(out, "xpsw:vorname", "auskunftsgeber.vorname", &a.vorname)?;
    text_opt(
        out,
        "xpsw:familienname",
        "auskunftsgeber.familienname",
        &a.familienname,
    )?;
    text_opt(
        out,
        "xpsw:geburtsname",
        "auskunftsgeber.geburtsname",
        &a.geburtsname,
    )?;
    schreibe_wohnanschrift(
        out,
        "xpsw:anschrift",
        a.anschrift.as_ref(),
        &AUSKUNFT_ANSCHRIFT,
    )?;
    schreibe_kontakte(
        out,
        "xpsw:kontaktdaten",
        a.kontaktdaten.as_deref(),
        &AUSKUNFT_KONTAKT,
    )?;
    text_opt(
        out,
        "xpsw:verhaeltnisVerstorbener",
        "auskunftsgeber.verhaeltnisVerstorbener",
        &a.verhaeltnis_verstorbener,
    )?;
    out.end("xpsw:auskunftsgeber")
}

fn schreibe_volljaehriges_kind(out: &mut XmlOut, k: &VolljaehrigesKind) -> Result<(), XmlError> {
    out.start("xpsw:volljaehrigeKinder", &[])?;
    text_opt(
        out,
        "xpsw:familienname",
        "volljaehrigeKinder[].familienname",
        &k.familienname,
    )?;
    text_opt(
        out,
        "xpsw:geburtsname",
        "volljaehrigeKinder[].geburtsname",
        &k.geburtsname,
    )?;
    text_opt(
        out,
        "xpsw:vornamen",
        "volljaehrigeKinder[].vornamen",
        &k.vornamen,
    )?;
    schreibe_wohnanschrift(
        out,
        "xpsw:anschrift",
        k.anschrift.as_ref(),
        &VOLLJ_ANSCHRIFT,
    )?;
    wahr_opt(out, "xpsw:istAuskunftsgeber", k.ist_auskunftsgeber)?;
    out.end("xpsw:volljaehrigeKinder")
}

fn schreibe_minderjaehriges_kind(
    out: &mut XmlOut,
    k: &MinderjaehrigesKind,
) -> Result<(), XmlError> {
    out.start("xpsw:minderjaehrigeKinder", &[])?;
    text_opt(
        out,
        "xpsw:familienname",
        "minderjaehrigeKinder[].familienname",
        &k.familienname,
    )?;
    text_opt(
        out,
        "xpsw:vornamen",
        "minderjaehrigeKinder[].vornamen",
        &k.vornamen,
    )?;
    datum_opt(
        out,
        "xpsw:geburtstag",
        "minderjaehrigeKinder[].geburtstag",
        &k.geburtstag,
    )?;
    schreibe_wohnanschrift(
        out,
        "xpsw:anschrift",
        k.anschrift.as_ref(),
        &MINDERJ_ANSCHRIFT,
    )?;
    wahr_opt(out, "xpsw:vollwaise", k.vollwaise)?;
    wahr_opt(out, "xpsw:istAuskunftsgeber", k.ist_auskunftsgeber)?;
    out.end("xpsw:minderjaehrigeKinder")
}

fn schreibe_zahl_der_urkunden(out: &mut XmlOut, z: &ZahlDerUrkunden) -> Result<(), XmlError> {
    out.start("xpsw:zahlDerUrkunden", &[])?;
    for (element, anzahl) in [
        ("xpsw:anzahlStandardformat", z.anzahl_standardformat),
        ("xpsw:anzahlStammbuchformat", z.anzahl_stammbuchformat),
        ("xpsw:anzahlCIEC16", z.anzahl_ciec16),
        ("xpsw:anzahlCIEC34", z.anzahl_ciec34),
        ("xpsw:anzahlRegisterausdruck", z.anzahl_registerausdruck),
        (
            "xpsw:anzahlRegisterausdruckMitHinweisen",
            z.anzahl_registerausdruck_mit_hinweisen,
        ),
        ("xpsw:anzahlSozialversicherung", z.anzahl_sozialversicherung),
    ] {
        zahl_opt(out, element, anzahl)?;
    }
    out.end("xpsw:zahlDerUrkunden")
}
