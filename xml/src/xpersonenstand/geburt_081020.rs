//! Message `portal2StA.Geburt.081020`: birth notice by a hospital to the registry office.
//!
//! Element order and namespace qualification follow `Anz2StA.Template.Geburtsanzeige`:
//! elements declared in the XPersonenstand schema are qualified (`xpsw:`), everything
//! inherited from the XÖV/XInneres building blocks (header, addresses, code and name
//! children) is unqualified.

use super::header::{schreibe_kopf, schreibe_wurzel_start, Nachrichtentyp};
use super::modell::{
    AnschriftMutter, Ereignisort, Gebaeudeanschrift, Geburtsanzeige, Kind, MutterStandard,
    PersonName,
};
use super::werte::{
    gesetzt, pruefe_postleitzahl, pruefe_tagesdatum, pruefe_uhrzeit, zerlege_hausnummer,
};
use super::xml_out::{pruefe_text, XmlOut};
use super::{Nachrichtenkopf, XmlError};
use crate::codelisten::GESCHLECHT;

const TYP: Nachrichtentyp = Nachrichtentyp {
    code: "081020",
    name: "portal2StA.Geburt.081020",
};

/// Writes a birth notice as XPersonenstand 26.11 message 081020 (UTF-8, indented).
///
/// Fails with [`XmlError::MissingField`] for the first path of
/// [`Geburtsanzeige::missing_for_dispatch`] or a missing header field, and with
/// [`XmlError::InvalidValue`] for values the schema would reject (dates, times, postal
/// codes, house numbers, characters outside DIN 91379) or contradictory fields (mother's
/// real data in a confidential birth, stillbirth details without `totgeburt`).
pub fn write_geburt_081020(
    kopf: &Nachrichtenkopf,
    anzeige: &Geburtsanzeige,
) -> Result<String, XmlError> {
    if let Some(pfad) = anzeige.missing_for_dispatch().first() {
        return Err(XmlError::MissingField(pfad));
    }
    pruefe_widersprueche(anzeige)?;
    let standesamt = gesetzt(&anzeige.standesamt_kennung);
    if let Some(k) = standesamt {
        // Checked here so the error names the form field, not the header.
        pruefe_text("standesamtKennung", k)?;
    }

    let mut out = XmlOut::new()?;
    schreibe_wurzel_start(&mut out, &TYP, kopf)?;
    schreibe_kopf(&mut out, &TYP, kopf, standesamt)?;
    schreibe_inhalt(&mut out, anzeige)?;
    out.end(&format!("xpsw:{}", TYP.name))?;
    out.fertig()
}

fn ungueltig(field: &'static str, reason: &str) -> XmlError {
    XmlError::InvalidValue {
        field,
        reason: reason.to_owned(),
    }
}

impl MutterStandard {
    fn angegeben(&self) -> bool {
        gesetzt(&self.geburtsdatum).is_some()
            || self.anschrift.as_ref().is_some_and(|a| {
                gesetzt(&a.strasse).is_some()
                    || gesetzt(&a.hausnummer).is_some()
                    || gesetzt(&a.postleitzahl).is_some()
                    || gesetzt(&a.wohnort).is_some()
            })
            || self.name.as_ref().is_some_and(|n| {
                gesetzt(&n.vornamen).is_some()
                    || gesetzt(&n.familienname).is_some()
                    || gesetzt(&n.geburtsname).is_some()
            })
    }
}

fn pruefe_widersprueche(a: &Geburtsanzeige) -> Result<(), XmlError> {
    let vertraulich = a.vertrauliche_geburt == Some(true);
    let mutter = a.mutter.as_ref();
    // The whole point of a confidential birth is that the mother's identity does not
    // reach the registry office; refusing is safer than silently dropping the data.
    if vertraulich
        && mutter
            .and_then(|m| m.standard.as_ref())
            .is_some_and(|s| s.angegeben())
    {
        return Err(ungueltig(
            "mutter.standard",
            "muss bei einer vertraulichen Geburt leer bleiben; das Pseudonym gehört zu den Angaben der vertraulichen Geburt",
        ));
    }
    let pseudonym = mutter.and_then(|m| m.vertraulich.as_ref());
    if !vertraulich
        && pseudonym
            .is_some_and(|v| gesetzt(&v.vornamen).is_some() || gesetzt(&v.familienname).is_some())
    {
        return Err(ungueltig(
            "mutter.vertraulich",
            "ein Pseudonym ist nur bei einer vertraulichen Geburt zulässig",
        ));
    }
    if let Some(t) = a.totgeburt_angaben.as_ref().filter(|t| t.angegeben()) {
        if a.totgeburt != Some(true) {
            return Err(ungueltig(
                "totgeburtAngaben",
                "Angaben zur Totgeburt sind nur bei einer Totgeburt zulässig",
            ));
        }
        // Both are xs:positiveInteger.
        if t.schwangerschaftswoche == Some(0) {
            return Err(ungueltig(
                "totgeburtAngaben.schwangerschaftswoche",
                "muss mindestens 1 sein",
            ));
        }
        if t.geburtsgewicht == Some(0) {
            return Err(ungueltig(
                "totgeburtAngaben.geburtsgewicht",
                "muss mindestens 1 Gramm betragen",
            ));
        }
    }
    Ok(())
}

/// Everything after the header. Mandatory values are unwrapped with `unwrap_or_default`
/// only where `missing_for_dispatch` has already guaranteed their presence.
fn schreibe_inhalt(out: &mut XmlOut, a: &Geburtsanzeige) -> Result<(), XmlError> {
    out.start("anschrift.autor", &[])?;
    let gebaeude = a.anschrift_autor.as_ref().and_then(|x| x.gebaeude.as_ref());
    schreibe_gebaeude(out, gebaeude.cloned().unwrap_or_default())?;
    out.end("anschrift.autor")?;

    if let Some(v) = gesetzt(&a.ansprechpartner) {
        out.text("xpsw:ansprechpartner", "ansprechpartner", v)?;
    }
    let name = gesetzt(&a.name_einrichtung).unwrap_or_default();
    out.text("xpsw:nameEinrichtung", "nameEinrichtung", name)?;

    let angaben = a.geburtsangaben.clone().unwrap_or_default();
    out.start("xpsw:geburtsangaben", &[])?;
    schreibe_ereignisort(out, angaben.ort.as_ref())?;
    let tag = gesetzt(&angaben.tag).unwrap_or_default();
    pruefe_tagesdatum("geburtsangaben.tag", tag)?;
    out.wert("xpsw:tag", tag)?;
    let uhrzeit = gesetzt(&angaben.uhrzeit).unwrap_or_default();
    pruefe_uhrzeit("geburtsangaben.uhrzeit", uhrzeit)?;
    out.wert("xpsw:uhrzeit", uhrzeit)?;
    out.end("xpsw:geburtsangaben")?;

    if a.totgeburt == Some(true) {
        out.wert("xpsw:totgeburt", "true")?;
    }
    if let Some(t) = a.totgeburt_angaben.as_ref().filter(|t| t.angegeben()) {
        out.start("xpsw:totgeburtAngaben", &[])?;
        if let Some(w) = t.schwangerschaftswoche {
            out.wert("xpsw:schwangerschaftswoche", &w.to_string())?;
        }
        let gewicht = t.geburtsgewicht.unwrap_or_default();
        out.wert("xpsw:geburtsgewicht", &gewicht.to_string())?;
        out.end("xpsw:totgeburtAngaben")?;
    }

    schreibe_kind(out, a.kind.as_ref())?;
    schreibe_mutter(out, a)?;

    if let Some(e) = a.elternteil2.as_ref().filter(|e| e.angegeben()) {
        out.start("xpsw:elternteil2", &[])?;
        schreibe_personname(
            out,
            e.name.as_ref(),
            [
                "elternteil2.name.familienname",
                "elternteil2.name.geburtsname",
                "elternteil2.name.vornamen",
            ],
        )?;
        out.end("xpsw:elternteil2")?;
    }

    if a.vertrauliche_geburt == Some(true) {
        out.wert("xpsw:vertraulicheGeburt", "true")?;
    }
    if let Some(m) = a.mehrlingsgeburt.as_ref().filter(|m| m.angegeben()) {
        out.start("xpsw:mehrlingsgeburt", &[])?;
        for (element, anzahl) in [
            ("xpsw:anzahlKnaben", m.anzahl_knaben),
            ("xpsw:anzahlMaedchen", m.anzahl_maedchen),
            ("xpsw:anzahlUnbestimmt", m.anzahl_unbestimmt),
        ] {
            out.wert(element, &anzahl.unwrap_or_default().to_string())?;
        }
        out.end("xpsw:mehrlingsgeburt")?;
    }
    if let Some(z) = gesetzt(&a.zuordnung_geburtsanzeige) {
        out.text("xpsw:zuordnungGeburtsanzeige", "zuordnungGeburtsanzeige", z)?;
    }
    Ok(())
}

/// `PostalischeInlandsanschrift.Gebaeudeanschrift`; children in schema order.
pub(crate) fn schreibe_gebaeude(out: &mut XmlOut, g: Gebaeudeanschrift) -> Result<(), XmlError> {
    out.start("gebaeude", &[])?;
    if let Some(h) = gesetzt(&g.hausnummer) {
        let h = zerlege_hausnummer("anschriftAutor.gebaeude.hausnummer", h)?;
        out.wert("hausnummer", h.nummer)?;
        if let Some(z) = h.zusatz {
            out.text(
                "hausnummerBuchstabeZusatzziffer",
                "anschriftAutor.gebaeude.hausnummer",
                z,
            )?;
        }
    }
    let plz = gesetzt(&g.postleitzahl).unwrap_or_default();
    pruefe_postleitzahl("anschriftAutor.gebaeude.postleitzahl", plz)?;
    out.wert("postleitzahl", plz)?;
    let strasse = gesetzt(&g.strasse).unwrap_or_default();
    out.text("strasse", "anschriftAutor.gebaeude.strasse", strasse)?;
    let wohnort = gesetzt(&g.wohnort).unwrap_or_default();
    out.text("wohnort", "anschriftAutor.gebaeude.wohnort", wohnort)?;
    out.end("gebaeude")
}

/// `Ereignisort`; the element is mandatory but all its children are optional, so an
/// absent place still yields an (empty) element.
fn schreibe_ereignisort(out: &mut XmlOut, ort: Option<&Ereignisort>) -> Result<(), XmlError> {
    let Some(ort) = ort.filter(|o| {
        gesetzt(&o.strasse).is_some()
            || gesetzt(&o.hausnummer).is_some()
            || gesetzt(&o.ort).is_some()
    }) else {
        return out.leer("xpsw:ort");
    };
    out.start("xpsw:ort", &[])?;
    for (element, feld, wert) in [
        ("xpsw:strasse", "geburtsangaben.ort.strasse", &ort.strasse),
        (
            "xpsw:hausnummer",
            "geburtsangaben.ort.hausnummer",
            &ort.hausnummer,
        ),
        ("xpsw:ort", "geburtsangaben.ort.ort", &ort.ort),
    ] {
        if let Some(v) = gesetzt(wert) {
            out.text(element, feld, v)?;
        }
    }
    out.end("xpsw:ort")
}

fn schreibe_kind(out: &mut XmlOut, kind: Option<&Kind>) -> Result<(), XmlError> {
    let geschlecht = kind
        .and_then(|k| k.geschlecht)
        .ok_or(XmlError::MissingField("kind.geschlecht"))?;
    out.start("xpsw:kind", &[])?;
    out.code("xpsw:geschlecht", &GESCHLECHT, geschlecht.code())?;
    let name = kind.and_then(|k| k.name.as_ref());
    let familienname = name.and_then(|n| gesetzt(&n.familienname));
    let vornamen = name.and_then(|n| gesetzt(&n.vornamen));
    if familienname.is_some() || vornamen.is_some() {
        out.start("xpsw:namen", &[])?;
        if let Some(f) = familienname {
            schreibe_allgemeiner_name(out, "xpsw:familienname", "kind.name.familienname", f)?;
        }
        if let Some(v) = vornamen {
            schreibe_allgemeiner_name(out, "xpsw:vornamen", "kind.name.vornamen", v)?;
        }
        out.end("xpsw:namen")?;
    }
    out.end("xpsw:kind")
}

fn schreibe_mutter(out: &mut XmlOut, a: &Geburtsanzeige) -> Result<(), XmlError> {
    let mutter = a.mutter.clone().unwrap_or_default();
    out.start("xpsw:mutter", &[])?;
    if a.vertrauliche_geburt == Some(true) {
        let v = mutter.vertraulich.unwrap_or_default();
        out.start("xpsw:vertraulich", &[])?;
        let vornamen = gesetzt(&v.vornamen).unwrap_or_default();
        out.text("xpsw:vornamen", "mutter.vertraulich.vornamen", vornamen)?;
        let familienname = gesetzt(&v.familienname).unwrap_or_default();
        out.text(
            "xpsw:familienname",
            "mutter.vertraulich.familienname",
            familienname,
        )?;
        out.end("xpsw:vertraulich")?;
    } else {
        let s = mutter.standard.unwrap_or_default();
        out.start("xpsw:standard", &[])?;
        schreibe_personname(
            out,
            s.name.as_ref(),
            [
                "mutter.standard.name.familienname",
                "mutter.standard.name.geburtsname",
                "mutter.standard.name.vornamen",
            ],
        )?;
        let datum = gesetzt(&s.geburtsdatum).unwrap_or_default();
        pruefe_tagesdatum("mutter.standard.geburtsdatum", datum)?;
        out.wert("xpsw:geburtsdatum", datum)?;
        schreibe_anschrift_mutter(out, s.anschrift.as_ref())?;
        out.end("xpsw:standard")?;
    }
    out.end("xpsw:mutter")
}

/// `PersonName` (family name and given names mandatory, checked by
/// `missing_for_dispatch`); `felder` are the JSON paths of familienname, geburtsname and
/// vornamen for error messages.
fn schreibe_personname(
    out: &mut XmlOut,
    name: Option<&PersonName>,
    felder: [&'static str; 3],
) -> Result<(), XmlError> {
    let name = name.cloned().unwrap_or_default();
    out.start("xpsw:namen", &[])?;
    let familienname = gesetzt(&name.familienname).unwrap_or_default();
    schreibe_allgemeiner_name(out, "xpsw:familienname", felder[0], familienname)?;
    if let Some(g) = gesetzt(&name.geburtsname) {
        schreibe_allgemeiner_name(out, "xpsw:geburtsname", felder[1], g)?;
    }
    let vornamen = gesetzt(&name.vornamen).unwrap_or_default();
    schreibe_allgemeiner_name(out, "xpsw:vornamen", felder[2], vornamen)?;
    out.end("xpsw:namen")
}

/// `AllgemeinerName.Personenstandswesen` with a known name (the `nichtVorhanden` branch
/// is not offered by the form).
pub(crate) fn schreibe_allgemeiner_name(
    out: &mut XmlOut,
    element: &str,
    feld: &'static str,
    wert: &str,
) -> Result<(), XmlError> {
    out.start(element, &[])?;
    out.text("name", feld, wert)?;
    out.end(element)
}

/// `Anschrift.Inland`; mandatory element with only optional children.
fn schreibe_anschrift_mutter(
    out: &mut XmlOut,
    anschrift: Option<&AnschriftMutter>,
) -> Result<(), XmlError> {
    let a = anschrift.cloned().unwrap_or_default();
    let hausnummer = gesetzt(&a.hausnummer);
    let plz = gesetzt(&a.postleitzahl);
    let strasse = gesetzt(&a.strasse);
    let wohnort = gesetzt(&a.wohnort);
    if hausnummer.is_none() && plz.is_none() && strasse.is_none() && wohnort.is_none() {
        return out.leer("xpsw:anschrift");
    }
    out.start("xpsw:anschrift", &[])?;
    if let Some(h) = hausnummer {
        let h = zerlege_hausnummer("mutter.standard.anschrift.hausnummer", h)?;
        out.wert("hausnummer", h.nummer)?;
        if let Some(z) = h.zusatz {
            out.text(
                "hausnummerBuchstabeZusatzziffer",
                "mutter.standard.anschrift.hausnummer",
                z,
            )?;
        }
    }
    if let Some(p) = plz {
        pruefe_postleitzahl("mutter.standard.anschrift.postleitzahl", p)?;
        out.wert("postleitzahl", p)?;
    }
    if let Some(s) = strasse {
        out.text("strasse", "mutter.standard.anschrift.strasse", s)?;
    }
    if let Some(w) = wohnort {
        out.text("wohnort", "mutter.standard.anschrift.wohnort", w)?;
    }
    out.end("xpsw:anschrift")
}
