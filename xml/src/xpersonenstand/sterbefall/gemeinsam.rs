//! Writing and completeness rules shared by 084020, 084021 and 084040.
//!
//! Element order and namespace qualification follow the schema: elements declared by
//! XPersonenstand are qualified (`xpsw:`), everything inherited from XÖV/XInneres (header,
//! postal addresses, code and contact children) is unqualified.

use super::super::geburt_081020::{schreibe_allgemeiner_name, schreibe_gebaeude};
use super::super::header::{schreibe_kopf, schreibe_wurzel_start, Nachrichtentyp};
pub(super) use super::super::kontakt::schreibe_kontakte;
pub(super) use super::super::kontakt::KontaktPfade;
use super::super::werte::{
    gesetzt, pruefe_postleitzahl, pruefe_tagesdatum, pruefe_uhrzeit, zerlege_zeitpunkt,
};
use super::super::xml_out::XmlOut;
use super::super::{AnschriftAutor, Nachrichtenkopf, PersonName, XmlError};
use super::modell::{
    Anzeigender, GeschlechtVerstorbener, Kontakt, Sterbefall, Sterbeort, Todeszeitpunkt,
    Wohnanschrift,
};
use crate::codelisten::GESCHLECHT;

/// Collects the dotted JSON paths of missing mandatory fields, in document order.
pub(super) struct Fehlend(pub(super) Vec<&'static str>);

impl Fehlend {
    pub(super) fn erwarte(&mut self, vorhanden: bool, pfad: &'static str) {
        if !vorhanden && !self.0.contains(&pfad) {
            self.0.push(pfad);
        }
    }

    pub(super) fn text(&mut self, wert: Option<&Option<String>>, pfad: &'static str) {
        self.erwarte(wert.and_then(gesetzt).is_some(), pfad);
    }
}

pub(super) fn ungueltig(field: &'static str, reason: &str) -> XmlError {
    XmlError::InvalidValue {
        field,
        reason: reason.to_owned(),
    }
}

/// Fails with the first path `missing_for_dispatch` reports.
pub(super) fn pruefe_vollstaendig(fehlt: Vec<&'static str>) -> Result<(), XmlError> {
    match fehlt.first() {
        Some(pfad) => Err(XmlError::MissingField(pfad)),
        None => Ok(()),
    }
}

/// JSON paths of a person's core fields within one slot.
pub(super) struct PersonPfade {
    pub(super) vorname: &'static str,
    pub(super) familienname: &'static str,
    pub(super) geburtsname: &'static str,
    pub(super) geburtstag: &'static str,
    pub(super) geschlecht: &'static str,
}

/// The fields every person type of the death notices shares, borrowed from the model.
pub(super) struct PersonKern<'a> {
    pub(super) vorname: &'a Option<String>,
    pub(super) familienname: &'a Option<String>,
    pub(super) geburtsname: &'a Option<String>,
    pub(super) geburtstag: &'a Option<String>,
    pub(super) geschlecht: Option<GeschlechtVerstorbener>,
}

/// `kern()` for the person types of the death notices, which all carry the shared fields under
/// the same names.
macro_rules! person_kern {
    ($($typ:ty),* $(,)?) => {
        $(impl $typ {
            pub(super) fn kern(&self) -> PersonKern<'_> {
                PersonKern {
                    vorname: &self.vorname,
                    familienname: &self.familienname,
                    geburtsname: &self.geburtsname,
                    geburtstag: &self.geburtstag,
                    geschlecht: self.geschlecht,
                }
            }
        })*
    };
}

person_kern!(
    super::modell::Verstorbener,
    super::todesbescheinigung_084040::VerstorbenerTodesbescheinigung,
    super::bestatter_084021::VerstorbenerBestatter,
    super::bestatter_084021::PartnerVerstorbener,
);

impl PersonKern<'_> {
    pub(super) fn angegeben(&self) -> bool {
        [
            self.vorname,
            self.familienname,
            self.geburtsname,
            self.geburtstag,
        ]
        .into_iter()
        .any(|w| gesetzt(w).is_some())
            || self.geschlecht.is_some()
    }

    /// Family name and sex are mandatory in every person type of these messages.
    pub(super) fn fehlt(&self, pfade: &PersonPfade, fehlt: &mut Fehlend) {
        fehlt.text(Some(self.familienname), pfade.familienname);
        fehlt.erwarte(self.geschlecht.is_some(), pfade.geschlecht);
    }
}

/// JSON paths of a [`Wohnanschrift`].
pub(super) struct AnschriftPfade {
    pub(super) strasse: &'static str,
    pub(super) plz: &'static str,
    pub(super) ort: &'static str,
}

pub(super) const ANZEIGENDER_KONTAKT: KontaktPfade = KontaktPfade {
    liste: "anzeigender.kontaktdaten",
    kanal: "anzeigender.kontaktdaten[].kanal",
    kennung: "anzeigender.kontaktdaten[].kennung",
    zusatz: "anzeigender.kontaktdaten[].zusatz",
};
const ANZEIGENDER_ANSCHRIFT: AnschriftPfade = AnschriftPfade {
    strasse: "anzeigender.anschrift.strasse",
    plz: "anzeigender.anschrift.plz",
    ort: "anzeigender.anschrift.ort",
};
pub(super) const LETZTER_WOHNSITZ: AnschriftPfade = AnschriftPfade {
    strasse: "verstorbener.letzterWohnsitz.strasse",
    plz: "verstorbener.letzterWohnsitz.plz",
    ort: "verstorbener.letzterWohnsitz.ort",
};
pub(super) const VERSTORBENER: PersonPfade = PersonPfade {
    vorname: "verstorbener.vorname",
    familienname: "verstorbener.familienname",
    geburtsname: "verstorbener.geburtsname",
    geburtstag: "verstorbener.geburtstag",
    geschlecht: "verstorbener.geschlecht",
};

const P_ZEITPUNKT: &str = "sterbefall.todeszeitpunkt.todestag.zeitpunkt";
const P_EXAKT: &str = "sterbefall.todeszeitpunkt.todestag.uhrzeitExakt";
const P_LETZTER_TAG: &str = "sterbefall.todeszeitpunkt.sterbezeitraum.letzterTagLebend";
const P_LETZTE_UHRZEIT: &str = "sterbefall.todeszeitpunkt.sterbezeitraum.letzterTagLebendUhrzeit";
const P_TOT_TAG: &str = "sterbefall.todeszeitpunkt.sterbezeitraum.mitSicherheitTotTag";
const P_TOT_UHRZEIT: &str = "sterbefall.todeszeitpunkt.sterbezeitraum.mitSicherheitTotUhrzeit";
pub(super) const P_STERBEORT_ORT: &str = "sterbefall.sterbeort.ort";

/// `anschriftAutor`: the building address is the only variant, as in 081020.
pub(super) fn fehlt_anschrift_autor(a: Option<&AnschriftAutor>, fehlt: &mut Fehlend) {
    let g = a.and_then(|a| a.gebaeude.as_ref());
    fehlt.text(
        g.map(|g| &g.postleitzahl),
        "anschriftAutor.gebaeude.postleitzahl",
    );
    fehlt.text(g.map(|g| &g.strasse), "anschriftAutor.gebaeude.strasse");
    fehlt.text(g.map(|g| &g.wohnort), "anschriftAutor.gebaeude.wohnort");
}

/// `anzeigender`: organisation name and one contact are mandatory; the contact person
/// needs both names once any of them is given (`PersonName`).
pub(super) fn fehlt_anzeigender(a: Option<&Anzeigender>, fehlt: &mut Fehlend) {
    fehlt.text(
        a.map(|a| &a.name_organisation),
        "anzeigender.nameOrganisation",
    );
    if let Some(p) = a
        .and_then(|a| a.ansprechpartner.as_ref())
        .filter(|p| name_angegeben(p))
    {
        fehlt.text(Some(&p.vornamen), "anzeigender.ansprechpartner.vornamen");
        fehlt.text(
            Some(&p.familienname),
            "anzeigender.ansprechpartner.familienname",
        );
    }
    fehlt_kontakte(
        a.and_then(|a| a.kontaktdaten.as_deref()),
        &ANZEIGENDER_KONTAKT,
        fehlt,
    );
}

pub(super) fn name_angegeben(n: &PersonName) -> bool {
    [&n.vornamen, &n.familienname, &n.geburtsname]
        .into_iter()
        .any(|w| gesetzt(w).is_some())
}

/// A contact list with at least one filled entry; each filled entry needs channel and value.
pub(super) fn fehlt_kontakte(liste: Option<&[Kontakt]>, p: &KontaktPfade, fehlt: &mut Fehlend) {
    let mut angegeben = liste.unwrap_or_default().iter().filter(|k| k.angegeben());
    let Some(erster) = angegeben.next() else {
        fehlt.erwarte(false, p.liste);
        return;
    };
    for k in std::iter::once(erster).chain(angegeben) {
        fehlt.text(Some(&k.kanal), p.kanal);
        fehlt.text(Some(&k.kennung), p.kennung);
    }
}

/// `sterbefall`: the time of death (either variant) and, where `ort_pflicht`, the town.
pub(super) fn fehlt_sterbefall(s: Option<&Sterbefall>, ort_pflicht: bool, fehlt: &mut Fehlend) {
    fehlt_todeszeitpunkt(s.and_then(|s| s.todeszeitpunkt.as_ref()), fehlt);
    if ort_pflicht {
        fehlt.text(
            s.and_then(|s| s.sterbeort.as_ref()).map(|o| &o.ort),
            P_STERBEORT_ORT,
        );
    }
}

/// Asks for the known day of death unless a period is being given instead.
pub(super) fn fehlt_todeszeitpunkt(t: Option<&Todeszeitpunkt>, fehlt: &mut Fehlend) {
    let zeitraum = t
        .and_then(|t| t.sterbezeitraum.as_ref())
        .filter(|z| z.angegeben());
    let tag = t
        .and_then(|t| t.todestag.as_ref())
        .filter(|t| t.angegeben());
    match (tag, zeitraum) {
        (None, Some(z)) => {
            fehlt.text(Some(&z.mit_sicherheit_tot_tag), P_TOT_TAG);
            fehlt.text(Some(&z.mit_sicherheit_tot_uhrzeit), P_TOT_UHRZEIT);
        }
        _ => {
            fehlt.text(tag.map(|t| &t.zeitpunkt), P_ZEITPUNKT);
            fehlt.erwarte(tag.and_then(|t| t.uhrzeit_exakt).is_some(), P_EXAKT);
        }
    }
}

/// Opens the message: root, header, `anschrift.autor` and the optional `ansprechpartner`
/// (the natural person's names, given names first).
pub(super) fn beginne(
    typ: &Nachrichtentyp,
    kopf: &Nachrichtenkopf,
    anschrift_autor: Option<&AnschriftAutor>,
    ansprechpartner: Option<(&PersonName, &'static str)>,
) -> Result<XmlOut, XmlError> {
    let mut out = XmlOut::new()?;
    schreibe_wurzel_start(&mut out, typ, kopf)?;
    schreibe_kopf(&mut out, typ, kopf, None)?;
    out.start("anschrift.autor", &[])?;
    let gebaeude = anschrift_autor.and_then(|a| a.gebaeude.as_ref());
    schreibe_gebaeude(&mut out, gebaeude.cloned().unwrap_or_default())?;
    out.end("anschrift.autor")?;
    if let Some((name, feld)) = ansprechpartner.filter(|(n, _)| name_angegeben(n)) {
        let voll = [gesetzt(&name.vornamen), gesetzt(&name.familienname)]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        out.text("xpsw:ansprechpartner", feld, &voll)?;
    }
    Ok(out)
}

pub(super) fn beende(mut out: XmlOut, typ: &Nachrichtentyp) -> Result<String, XmlError> {
    out.end(&format!("xpsw:{}", typ.name))?;
    out.fertig()
}

/// Writes an optional text element.
pub(super) fn text_opt(
    out: &mut XmlOut,
    element: &str,
    feld: &'static str,
    wert: &Option<String>,
) -> Result<(), XmlError> {
    match gesetzt(wert) {
        Some(v) => out.text(element, feld, v),
        None => Ok(()),
    }
}

/// Writes an optional `xida:Tagesdatum` element after checking the date.
pub(super) fn datum_opt(
    out: &mut XmlOut,
    element: &str,
    feld: &'static str,
    wert: &Option<String>,
) -> Result<(), XmlError> {
    if let Some(v) = gesetzt(wert) {
        pruefe_tagesdatum(feld, v)?;
        out.wert(element, v)?;
    }
    Ok(())
}

/// Writes a boolean with `fixed="true"`: present only when `true`.
pub(super) fn wahr_opt(
    out: &mut XmlOut,
    element: &str,
    wert: Option<bool>,
) -> Result<(), XmlError> {
    if wert == Some(true) {
        out.wert(element, "true")?;
    }
    Ok(())
}

/// Writes an optional count (`xs:nonNegativeInteger`).
pub(super) fn zahl_opt(out: &mut XmlOut, element: &str, wert: Option<u32>) -> Result<(), XmlError> {
    match wert {
        Some(n) => out.wert(element, &n.to_string()),
        None => Ok(()),
    }
}

pub(super) fn schreibe_geschlecht(
    out: &mut XmlOut,
    g: GeschlechtVerstorbener,
) -> Result<(), XmlError> {
    out.code("xpsw:geschlecht", &GESCHLECHT, g.code())
}

/// The first children of `Portal2StA.Sterbefall.Person` and of the deceased's types:
/// `vorname`, `familienname`, `geburtsname`, `geburtstag`, `geschlecht`.
pub(super) fn schreibe_person_kern(
    out: &mut XmlOut,
    p: &PersonKern<'_>,
    pfade: &PersonPfade,
) -> Result<(), XmlError> {
    text_opt(out, "xpsw:vorname", pfade.vorname, p.vorname)?;
    let familienname = gesetzt(p.familienname).unwrap_or_default();
    out.text("xpsw:familienname", pfade.familienname, familienname)?;
    text_opt(out, "xpsw:geburtsname", pfade.geburtsname, p.geburtsname)?;
    datum_opt(out, "xpsw:geburtstag", pfade.geburtstag, p.geburtstag)?;
    let geschlecht = p
        .geschlecht
        .ok_or(XmlError::MissingField(pfade.geschlecht))?;
    schreibe_geschlecht(out, geschlecht)
}

/// `PersonName` under the given element; `felder` are the JSON paths of familienname,
/// geburtsname and vornamen.
pub(super) fn schreibe_personname(
    out: &mut XmlOut,
    element: &str,
    name: &PersonName,
    felder: [&'static str; 3],
) -> Result<(), XmlError> {
    out.start(element, &[])?;
    let familienname = gesetzt(&name.familienname).unwrap_or_default();
    schreibe_allgemeiner_name(out, "xpsw:familienname", felder[0], familienname)?;
    if let Some(g) = gesetzt(&name.geburtsname) {
        schreibe_allgemeiner_name(out, "xpsw:geburtsname", felder[1], g)?;
    }
    let vornamen = gesetzt(&name.vornamen).unwrap_or_default();
    schreibe_allgemeiner_name(out, "xpsw:vornamen", felder[2], vornamen)?;
    out.end(element)
}

/// `Portal2StA.Anschrift`; written only when at least one field is filled. The postal
/// code must be a German one (the contract offers no foreign addresses).
pub(super) fn schreibe_wohnanschrift(
    out: &mut XmlOut,
    element: &str,
    a: Option<&Wohnanschrift>,
    p: &AnschriftPfade,
) -> Result<(), XmlError> {
    let Some(a) = a.filter(|a| a.angegeben()) else {
        return Ok(());
    };
    out.start(element, &[])?;
    text_opt(out, "xpsw:strasse", p.strasse, &a.strasse)?;
    if let Some(plz) = gesetzt(&a.plz) {
        pruefe_postleitzahl(p.plz, plz)?;
        out.text("xpsw:plz", p.plz, plz)?;
    }
    text_opt(out, "xpsw:ort", p.ort, &a.ort)?;
    out.end(element)
}

/// `anzeigender` of 084020 and 084021: `anschrift`, `kontaktdaten`, `namen`.
pub(super) fn schreibe_anzeigender(out: &mut XmlOut, a: &Anzeigender) -> Result<(), XmlError> {
    out.start("xpsw:anzeigender", &[])?;
    schreibe_wohnanschrift(
        out,
        "xpsw:anschrift",
        a.anschrift.as_ref(),
        &ANZEIGENDER_ANSCHRIFT,
    )?;
    schreibe_kontakte(
        out,
        "xpsw:kontaktdaten",
        a.kontaktdaten.as_deref(),
        &ANZEIGENDER_KONTAKT,
    )?;
    out.start("xpsw:namen", &[])?;
    let name = gesetzt(&a.name_organisation).unwrap_or_default();
    out.text(
        "xpsw:nameOrganisation",
        "anzeigender.nameOrganisation",
        name,
    )?;
    if let Some(p) = a.ansprechpartner.as_ref().filter(|p| name_angegeben(p)) {
        schreibe_personname(
            out,
            "xpsw:nameNatuerlichePerson",
            p,
            [
                "anzeigender.ansprechpartner.familienname",
                "anzeigender.ansprechpartner.geburtsname",
                "anzeigender.ansprechpartner.vornamen",
            ],
        )?;
    }
    out.end("xpsw:namen")?;
    out.end("xpsw:anzeigender")
}

/// Refuses a time of death given both as a known day and as a period.
pub(super) fn pruefe_todeszeitpunkt(t: Option<&Todeszeitpunkt>) -> Result<(), XmlError> {
    let tag = t
        .and_then(|t| t.todestag.as_ref())
        .is_some_and(|t| t.angegeben());
    let zeitraum = t
        .and_then(|t| t.sterbezeitraum.as_ref())
        .is_some_and(|z| z.angegeben());
    if tag && zeitraum {
        return Err(ungueltig(
            "sterbefall.todeszeitpunkt",
            "entweder den Todestag oder den Sterbezeitraum angeben, nicht beides",
        ));
    }
    Ok(())
}

/// The `todestag` choice: known day and time, or the period of death.
pub(super) fn schreibe_todestag(out: &mut XmlOut, t: &Todeszeitpunkt) -> Result<(), XmlError> {
    out.start("xpsw:todestag", &[])?;
    match t.sterbezeitraum.as_ref().filter(|z| z.angegeben()) {
        Some(z) if !t.todestag.as_ref().is_some_and(|t| t.angegeben()) => {
            out.start("xpsw:sterbezeitraum", &[])?;
            datum_opt(
                out,
                "xpsw:letzterTagLebend",
                P_LETZTER_TAG,
                &z.letzter_tag_lebend,
            )?;
            uhrzeit_opt(
                out,
                "xpsw:letzterTagLebendUhrzeit",
                P_LETZTE_UHRZEIT,
                &z.letzter_tag_lebend_uhrzeit,
            )?;
            datum_opt(
                out,
                "xpsw:mitSicherheitTotTag",
                P_TOT_TAG,
                &z.mit_sicherheit_tot_tag,
            )?;
            uhrzeit_opt(
                out,
                "xpsw:mitSicherheitTotUhrzeit",
                P_TOT_UHRZEIT,
                &z.mit_sicherheit_tot_uhrzeit,
            )?;
            out.end("xpsw:sterbezeitraum")?;
        }
        _ => {
            let tag = t.todestag.clone().unwrap_or_default();
            let zp = zerlege_zeitpunkt(P_ZEITPUNKT, gesetzt(&tag.zeitpunkt).unwrap_or_default())?;
            let exakt = tag.uhrzeit_exakt.ok_or(XmlError::MissingField(P_EXAKT))?;
            out.start("xpsw:todestag", &[])?;
            out.wert("xpsw:todestag", &zp.tag)?;
            out.wert_mit_attributen(
                "xpsw:todeszeit",
                &[("exakt", if exakt { "true" } else { "false" })],
                &zp.uhrzeit,
            )?;
            out.end("xpsw:todestag")?;
        }
    }
    out.end("xpsw:todestag")
}

fn uhrzeit_opt(
    out: &mut XmlOut,
    element: &str,
    feld: &'static str,
    wert: &Option<String>,
) -> Result<(), XmlError> {
    if let Some(v) = gesetzt(wert) {
        pruefe_uhrzeit(feld, v)?;
        out.wert(element, v)?;
    }
    Ok(())
}

/// Children of a place of death (`Anz2StA.Ereignisort.Detail` / `Ereignisort`) in schema
/// order; the caller opens and closes the element.
pub(super) fn schreibe_ortsangaben(out: &mut XmlOut, o: &Sterbeort) -> Result<(), XmlError> {
    text_opt(
        out,
        "xpsw:strasse",
        "sterbefall.sterbeort.strasse",
        &o.strasse,
    )?;
    text_opt(
        out,
        "xpsw:hausnummer",
        "sterbefall.sterbeort.hausnummer",
        &o.hausnummer,
    )?;
    text_opt(out, "xpsw:ort", P_STERBEORT_ORT, &o.ort)?;
    text_opt(
        out,
        "xpsw:ortsteil",
        "sterbefall.sterbeort.ortsteil",
        &o.ortsteil,
    )
}

/// `sterbefall` of 084020 and 084021 (`Portal2StA.Sterbefall`).
pub(super) fn schreibe_sterbefall(out: &mut XmlOut, s: &Sterbefall) -> Result<(), XmlError> {
    out.start("xpsw:sterbefall", &[])?;
    schreibe_todestag(out, &s.todeszeitpunkt.clone().unwrap_or_default())?;
    out.start("xpsw:sterbeort", &[])?;
    schreibe_ortsangaben(out, &s.sterbeort.clone().unwrap_or_default())?;
    out.end("xpsw:sterbeort")?;
    out.end("xpsw:sterbefall")
}
