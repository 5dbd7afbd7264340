//! The elements of 081021 after the header, in schema order. Mandatory values are
//! unwrapped with `unwrap_or_default` only where `missing_for_dispatch` has already
//! guaranteed their presence.

use super::modell::{
    AllgemeinerName, AngabenEreignis, AnschriftInland, BehoerdeMitAnschrift, EreignisortErweitert,
    Geburtsdaten, Geschlecht, PostalischeInlandsanschrift, Staatsangehoerigkeit,
};
use super::pfade::{
    self, AllgemeinerNamePfade, AnschriftPfade, EreignisPfade, InlandPfade, NamePfade, OrtPfade,
    StaatPfade,
};
use super::ungueltig;
use crate::codelisten::{GESCHLECHT, NAMENSART, STAATSANGEHOERIGKEIT};
use crate::xpersonenstand::header::{
    LISTURI_VERZEICHNISDIENST, VERSION_VERZEICHNISDIENST, VERZEICHNISDIENST_DVDV,
};
use crate::xpersonenstand::kontakt::schreibe_kontakte;
use crate::xpersonenstand::werte::{
    gesetzt, pruefe_postleitzahl, pruefe_tagesdatum, pruefe_uhrzeit_personenstand,
    pruefe_zeitpunkt, zerlege_hausnummer,
};
use crate::xpersonenstand::xml_out::XmlOut;
use crate::xpersonenstand::{PersonName, XmlError};

/// `Identifikation.Ereignis.Zeichen` has the pattern `.{1,100}`.
const ZEICHEN_MAX: usize = 100;

pub(super) fn schreibe_inhalt(out: &mut XmlOut, d: &Geburtsdaten) -> Result<(), XmlError> {
    schreibe_postanschrift(
        out,
        "anschrift.autor",
        d.anschrift_autor.as_ref(),
        &pfade::ANSCHRIFT_AUTOR,
    )?;
    if let Some(v) = gesetzt(&d.ansprechpartner) {
        out.text("xpsw:ansprechpartner", "ansprechpartner", v)?;
    }
    schreibe_vorgangsidentifikation(out, d)?;

    let angaben = d.geburtsangaben.clone().unwrap_or_default();
    out.start("xpsw:geburtsangaben", &[])?;
    schreibe_ort(out, angaben.ort.as_ref(), &pfade::GEBURTSORT)?;
    let tag = gesetzt(&angaben.tag).unwrap_or_default();
    pruefe_tagesdatum("geburtsangaben.tag", tag)?;
    out.wert("xpsw:tag", tag)?;
    let uhrzeit = gesetzt(&angaben.uhrzeit).unwrap_or_default();
    pruefe_uhrzeit_personenstand("geburtsangaben.uhrzeit", uhrzeit)?;
    out.wert("xpsw:uhrzeit", uhrzeit)?;
    out.end("xpsw:geburtsangaben")?;

    schreibe_kind(out, d)?;
    schreibe_mutter(out, d)?;
    if let Some(e) = d.elternteil2.as_ref().filter(|e| e.angegeben()) {
        out.start("xpsw:elternteil2", &[])?;
        schreibe_elternteil(
            out,
            Elternteil {
                namen: e.namen.as_ref(),
                geburt: e.geburt.as_ref(),
                geschlecht: e.geschlecht,
                staat: e.staatsangehoerigkeit.as_ref(),
                weitere: e.weitere_staatsangehoerigkeit.as_ref(),
                anschrift: e.anschrift.as_ref(),
            },
            &pfade::ELTERNTEIL2,
        )?;
        out.end("xpsw:elternteil2")?;
    }
    if d.eltern_verheiratet == Some(true) {
        out.wert("xpsw:elternVerheiratet", "true")?;
    }
    if let Some(ehe) = d.ehe.as_ref().filter(|e| e.angegeben()) {
        out.start("xpsw:ehe", &[])?;
        if let Some(e) = ehe.ereignis.as_ref().filter(|e| e.angegeben()) {
            schreibe_ereignis(out, "xpsw:ereignis", Some(e), &pfade::EHE_EREIGNIS)?;
        }
        if let Some(n) = ehe.kinder_der_ehe {
            out.wert("xpsw:kinderDerEhe", &n.to_string())?;
        }
        if let Some(n) = ehe.totgeburten_der_ehe {
            out.wert("xpsw:totgeburtenDerEhe", &n.to_string())?;
        }
        out.end("xpsw:ehe")?;
    }
    if let Some(k) = d.vorangegangenes_kind.as_ref().filter(|k| k.angegeben()) {
        out.start("xpsw:vorangegangenesKind", &[])?;
        schreibe_personname(out, k.namen.as_ref(), &pfade::VORANGEGANGENES_KIND_NAMEN)?;
        schreibe_ereignis(
            out,
            "xpsw:geburt",
            k.geburt.as_ref(),
            &pfade::VORANGEGANGENES_KIND_GEBURT,
        )?;
        out.end("xpsw:vorangegangenesKind")?;
    }
    schreibe_kontakte(
        out,
        "xpsw:kontaktdaten",
        d.kontaktdaten.as_deref(),
        &pfade::KONTAKTDATEN,
    )?;
    schreibe_urkundenbestellung(out, d)?;
    let auftrag = gesetzt(&d.auftragsnummer).unwrap_or_default();
    out.text("xpsw:auftragsnummer", "auftragsnummer", auftrag)?;
    if let Some(z) = gesetzt(&d.zuordnung_geburtsanzeige) {
        out.text("xpsw:zuordnungGeburtsanzeige", "zuordnungGeburtsanzeige", z)?;
    }
    if d.zustimmung_elterngeldstelle == Some(true) {
        out.wert("xpsw:zustimmungElterngeldstelle", "true")?;
    }
    if let Some(b) = d
        .zustaendige_elterngeldstelle
        .as_ref()
        .filter(|b| b.angegeben())
    {
        schreibe_elterngeldstelle(out, b)?;
    }
    Ok(())
}

/// `PostalischeInlandsanschrift`: a choice, exactly one branch.
fn schreibe_postanschrift(
    out: &mut XmlOut,
    element: &str,
    a: Option<&PostalischeInlandsanschrift>,
    p: &AnschriftPfade,
) -> Result<(), XmlError> {
    let gebaeude = a
        .and_then(|a| a.gebaeude.as_ref())
        .filter(|g| g.angegeben());
    let postfach = a
        .and_then(|a| a.postfach.as_ref())
        .filter(|f| f.angegeben());
    out.start(element, &[])?;
    match (gebaeude, postfach) {
        (Some(_), Some(_)) => {
            return Err(ungueltig(
                p.basis,
                "genau eines angeben: Gebäude oder Postfach",
            ))
        }
        (None, Some(f)) => {
            out.start("postfach", &[])?;
            if let Some(v) = gesetzt(&f.postfach) {
                out.text("postfach", p.postfach[0], v)?;
            }
            let wohnort = gesetzt(&f.wohnort).unwrap_or_default();
            out.text("wohnort", p.postfach[1], wohnort)?;
            let plz = gesetzt(&f.postleitzahl).unwrap_or_default();
            pruefe_postleitzahl(p.postfach[2], plz)?;
            out.wert("postleitzahl", plz)?;
            out.end("postfach")?;
        }
        (g, None) => {
            let g = g.cloned().unwrap_or_default();
            out.start("gebaeude", &[])?;
            schreibe_hausnummer(out, gesetzt(&g.hausnummer), p.gebaeude[2])?;
            let plz = gesetzt(&g.postleitzahl).unwrap_or_default();
            pruefe_postleitzahl(p.gebaeude[0], plz)?;
            out.wert("postleitzahl", plz)?;
            out.text(
                "strasse",
                p.gebaeude[1],
                gesetzt(&g.strasse).unwrap_or_default(),
            )?;
            out.text(
                "wohnort",
                p.gebaeude[3],
                gesetzt(&g.wohnort).unwrap_or_default(),
            )?;
            if let Some(v) = gesetzt(&g.wohnort_frueherer_gemeindename) {
                out.text("wohnortFruehererGemeindename", p.gebaeude[4], v)?;
            }
            if let Some(v) = gesetzt(&g.zusatzangaben) {
                out.text("zusatzangaben", p.gebaeude[5], v)?;
            }
            out.end("gebaeude")?;
        }
    }
    out.end(element)
}

/// `hausnummer` + `hausnummerBuchstabeZusatzziffer` of the Meldeanschrift family.
fn schreibe_hausnummer(
    out: &mut XmlOut,
    wert: Option<&str>,
    feld: &'static str,
) -> Result<(), XmlError> {
    if let Some(h) = wert {
        let h = zerlege_hausnummer(feld, h)?;
        out.wert("hausnummer", h.nummer)?;
        if let Some(z) = h.zusatz {
            out.text("hausnummerBuchstabeZusatzziffer", feld, z)?;
        }
    }
    Ok(())
}

/// `Identifikation.Ereignis`; the JSON nests `ereignis { zeitpunkt, zeichen }`, the schema
/// has the flat children `ereignis.zeitpunkt` and `ereignis.zeichen`.
fn schreibe_vorgangsidentifikation(out: &mut XmlOut, d: &Geburtsdaten) -> Result<(), XmlError> {
    let Some(e) = d
        .vorgangsidentifikation
        .as_ref()
        .filter(|v| v.angegeben())
        .and_then(|v| v.ereignis.as_ref())
    else {
        return Ok(());
    };
    let zeitpunkt = gesetzt(&e.zeitpunkt).unwrap_or_default();
    pruefe_zeitpunkt("vorgangsidentifikation.ereignis.zeitpunkt", zeitpunkt)?;
    let zeichen = gesetzt(&e.zeichen).unwrap_or_default();
    if zeichen.chars().count() > ZEICHEN_MAX {
        return Err(ungueltig(
            "vorgangsidentifikation.ereignis.zeichen",
            "darf höchstens 100 Zeichen lang sein",
        ));
    }
    out.start("xpsw:vorgangsidentifikation", &[])?;
    out.wert("ereignis.zeitpunkt", zeitpunkt)?;
    out.text(
        "ereignis.zeichen",
        "vorgangsidentifikation.ereignis.zeichen",
        zeichen,
    )?;
    out.end("xpsw:vorgangsidentifikation")
}

/// `Ereignisort`; mandatory wherever it occurs, but all its children are optional, so an
/// absent place still yields an (empty) element.
fn schreibe_ort(
    out: &mut XmlOut,
    ort: Option<&EreignisortErweitert>,
    p: &OrtPfade,
) -> Result<(), XmlError> {
    let Some(o) = ort.filter(|o| o.angegeben()) else {
        return out.leer("xpsw:ort");
    };
    out.start("xpsw:ort", &[])?;
    let werte = [
        ("xpsw:strasse", &o.strasse),
        ("xpsw:hausnummer", &o.hausnummer),
        ("xpsw:ort", &o.ort),
        ("xpsw:ortsteil", &o.ortsteil),
        ("xpsw:kreisbezeichnung", &o.kreisbezeichnung),
    ];
    for ((element, wert), feld) in werte.into_iter().zip(p) {
        if let Some(v) = gesetzt(wert) {
            out.text(element, feld, v)?;
        }
    }
    out.end("xpsw:ort")
}

/// `Anz2StA.Geburt.AngabenEreignis`: place (possibly empty) and day.
fn schreibe_ereignis(
    out: &mut XmlOut,
    element: &str,
    e: Option<&AngabenEreignis>,
    p: &EreignisPfade,
) -> Result<(), XmlError> {
    out.start(element, &[])?;
    schreibe_ort(out, e.and_then(|e| e.ort.as_ref()), &p.ort)?;
    let tag = e.and_then(|e| gesetzt(&e.tag)).unwrap_or_default();
    pruefe_tagesdatum(p.tag, tag)?;
    out.wert("xpsw:tag", tag)?;
    out.end(element)
}

fn schreibe_geschlecht(out: &mut XmlOut, g: Geschlecht) -> Result<(), XmlError> {
    out.code("xpsw:geschlecht", &GESCHLECHT, g.code())
}

fn schreibe_kind(out: &mut XmlOut, d: &Geburtsdaten) -> Result<(), XmlError> {
    let kind = d.kind.as_ref();
    let geschlecht = kind
        .and_then(|k| k.geschlecht)
        .ok_or(XmlError::MissingField("kind.geschlecht"))?;
    out.start("xpsw:kind", &[])?;
    schreibe_geschlecht(out, geschlecht)?;
    let name = kind.and_then(|k| k.name.as_ref());
    let familienname = name
        .and_then(|n| n.familienname.as_ref())
        .filter(|n| n.angegeben());
    let vornamen = name
        .and_then(|n| n.vornamen.as_ref())
        .filter(|n| n.angegeben());
    if familienname.is_some() || vornamen.is_some() {
        out.start("xpsw:namen", &[])?;
        if let Some(n) = familienname {
            schreibe_allgemeiner_name(out, "xpsw:familienname", n, &pfade::KIND_FAMILIENNAME)?;
        }
        if let Some(n) = vornamen {
            schreibe_allgemeiner_name(out, "xpsw:vornamen", n, &pfade::KIND_VORNAMEN)?;
        }
        out.end("xpsw:namen")?;
    }
    out.end("xpsw:kind")
}

/// `AllgemeinerName.Personenstandswesen`: the choice `name` / `nichtVorhanden`, then the
/// optional name type.
fn schreibe_allgemeiner_name(
    out: &mut XmlOut,
    element: &str,
    n: &AllgemeinerName,
    p: &AllgemeinerNamePfade,
) -> Result<(), XmlError> {
    let name = gesetzt(&n.name);
    if n.nicht_vorhanden == Some(false) {
        return Err(ungueltig(
            p[2],
            "nur true ist zulässig; sonst den Namen angeben",
        ));
    }
    if name.is_some() && n.nicht_vorhanden.is_some() {
        return Err(ungueltig(
            p[0],
            "genau eines angeben: den Namen oder dass keiner vorhanden ist",
        ));
    }
    let art = gesetzt(&n.namensart_code);
    if let Some(a) = art {
        NAMENSART.pruefe(p[3], a)?;
    }
    out.start(element, &[])?;
    match name {
        Some(v) => out.text("name", p[1], v)?,
        None => out.wert("nichtVorhanden", "true")?,
    }
    if let Some(a) = art {
        out.start("xpsw:namensart", &[])?;
        out.code("xpsw:code", &NAMENSART, a)?;
        out.end("xpsw:namensart")?;
    }
    out.end(element)
}

/// `PersonName` with plain strings: family name and given names mandatory (checked by
/// `missing_for_dispatch`), birth name optional.
fn schreibe_personname(
    out: &mut XmlOut,
    name: Option<&PersonName>,
    p: &NamePfade,
) -> Result<(), XmlError> {
    let name = name.cloned().unwrap_or_default();
    out.start("xpsw:namen", &[])?;
    let teile = [
        ("xpsw:familienname", &name.familienname),
        ("xpsw:geburtsname", &name.geburtsname),
        ("xpsw:vornamen", &name.vornamen),
    ];
    for ((element, wert), feld) in teile.into_iter().zip(p) {
        if let Some(v) = gesetzt(wert) {
            out.start(element, &[])?;
            out.text("name", feld, v)?;
            out.end(element)?;
        }
    }
    out.end("xpsw:namen")
}

/// The fields `mutter` and `elternteil2` share (`Anz2StA.Geburt.Elternteil.Erweitert`).
struct Elternteil<'a> {
    namen: Option<&'a PersonName>,
    geburt: Option<&'a AngabenEreignis>,
    geschlecht: Option<Geschlecht>,
    staat: Option<&'a Staatsangehoerigkeit>,
    weitere: Option<&'a Staatsangehoerigkeit>,
    anschrift: Option<&'a AnschriftInland>,
}

fn schreibe_elternteil(
    out: &mut XmlOut,
    e: Elternteil<'_>,
    p: &pfade::ElternteilPfade,
) -> Result<(), XmlError> {
    schreibe_personname(out, e.namen, &p.namen)?;
    if let Some(g) = e.geburt.filter(|g| g.angegeben()) {
        schreibe_ereignis(out, "xpsw:geburt", Some(g), &p.geburt)?;
    }
    let geschlecht = e.geschlecht.ok_or(XmlError::MissingField(p.geschlecht))?;
    schreibe_geschlecht(out, geschlecht)?;
    let staat = e.staat.cloned().unwrap_or_default();
    schreibe_staat(
        out,
        "xpsw:staatsangehoerigkeit",
        &staat,
        &p.staatsangehoerigkeit,
    )?;
    if let Some(w) = e.weitere.filter(|w| w.angegeben()) {
        schreibe_staat(
            out,
            "xpsw:weitereStaatsangehoerigkeit",
            w,
            &p.weitere_staatsangehoerigkeit,
        )?;
    }
    if let Some(a) = e.anschrift.filter(|a| a.angegeben()) {
        schreibe_anschrift_inland(out, a, &p.anschrift)?;
    }
    Ok(())
}

fn schreibe_mutter(out: &mut XmlOut, d: &Geburtsdaten) -> Result<(), XmlError> {
    let m = d.mutter.clone().unwrap_or_default();
    out.start("xpsw:mutter", &[])?;
    schreibe_elternteil(
        out,
        Elternteil {
            namen: m.namen.as_ref(),
            geburt: m.geburt.as_ref(),
            geschlecht: m.geschlecht,
            staat: m.staatsangehoerigkeit.as_ref(),
            weitere: m.weitere_staatsangehoerigkeit.as_ref(),
            anschrift: m.anschrift.as_ref(),
        },
        &pfade::MUTTER,
    )?;
    if let Some(n) = m.anzahl_totgeburten {
        out.wert("xpsw:anzahlTotgeburten", &n.to_string())?;
    }
    if let Some(datum) = gesetzt(&m.geburtsdatum_vorheriges_kind) {
        pruefe_tagesdatum("mutter.geburtsdatumVorherigesKind", datum)?;
        out.wert("xpsw:geburtsdatumVorherigesKind", datum)?;
    }
    if let Some(n) = m.anzahl_kinder {
        out.wert("xpsw:anzahlKinder", &n.to_string())?;
    }
    out.end("xpsw:mutter")
}

/// `Code.Staatsangehoerigkeit`: a choice between a Destatis key and free text.
fn schreibe_staat(
    out: &mut XmlOut,
    element: &str,
    s: &Staatsangehoerigkeit,
    p: &StaatPfade,
) -> Result<(), XmlError> {
    let code = gesetzt(&s.code);
    let frei = gesetzt(&s.nicht_gelisteter_wert);
    out.start(element, &[])?;
    match (code, frei) {
        (Some(_), Some(_)) => {
            return Err(ungueltig(
                p[0],
                "genau eines angeben: einen Code oder einen nicht gelisteten Wert",
            ))
        }
        (Some(c), None) => {
            // Destatis keys, not ISO codes such as `DE`.
            STAATSANGEHOERIGKEIT.pruefe(p[1], c)?;
            out.code("xpsw:code", &STAATSANGEHOERIGKEIT, c)?;
        }
        (None, Some(f)) => out.text("xpsw:nichtGelisteterWert", p[2], f)?,
        (None, None) => return Err(XmlError::MissingField(p[1])),
    }
    out.end(element)
}

/// `Anschrift.Inland`; unqualified children in schema order.
fn schreibe_anschrift_inland(
    out: &mut XmlOut,
    a: &AnschriftInland,
    p: &InlandPfade,
) -> Result<(), XmlError> {
    out.start("xpsw:anschrift", &[])?;
    schreibe_hausnummer(out, gesetzt(&a.hausnummer), p[1])?;
    if let Some(plz) = gesetzt(&a.postleitzahl) {
        pruefe_postleitzahl(p[2], plz)?;
        out.wert("postleitzahl", plz)?;
    }
    if let Some(s) = gesetzt(&a.strasse) {
        out.text("strasse", p[0], s)?;
    }
    if let Some(w) = gesetzt(&a.wohnort) {
        out.text("wohnort", p[3], w)?;
    }
    out.end("xpsw:anschrift")
}

/// `Urkundenanforderung.ArtDerUrkunde.Basis`; mandatory element with only optional
/// children, so no order yields an empty element.
fn schreibe_urkundenbestellung(out: &mut XmlOut, d: &Geburtsdaten) -> Result<(), XmlError> {
    let u = d.urkundenbestellung.clone().unwrap_or_default();
    let anzahlen = [
        ("xpsw:anzahlStandardformat", u.anzahl_standardformat),
        ("xpsw:anzahlStammbuchformat", u.anzahl_stammbuchformat),
        ("xpsw:anzahlCIEC16", u.anzahl_ciec16),
        ("xpsw:anzahlCIEC34", u.anzahl_ciec34),
    ];
    if anzahlen.iter().all(|(_, n)| n.is_none()) {
        return out.leer("xpsw:urkundenbestellung");
    }
    out.start("xpsw:urkundenbestellung", &[])?;
    for (element, anzahl) in anzahlen {
        if let Some(n) = anzahl {
            out.wert(element, &n.to_string())?;
        }
    }
    out.end("xpsw:urkundenbestellung")
}

/// `BehoerdeMitAnschrift`; the directory service has no JSON field and is always the
/// DVDV, like the header's authorities.
fn schreibe_elterngeldstelle(out: &mut XmlOut, b: &BehoerdeMitAnschrift) -> Result<(), XmlError> {
    out.start("xpsw:zustaendigeElterngeldstelle", &[])?;
    out.code_element(
        "verzeichnisdienst",
        LISTURI_VERZEICHNISDIENST,
        VERSION_VERZEICHNISDIENST,
        VERZEICHNISDIENST_DVDV,
    )?;
    let kennung = gesetzt(&b.kennung).unwrap_or_default();
    out.text("kennung", "zustaendigeElterngeldstelle.kennung", kennung)?;
    let name = gesetzt(&b.name).unwrap_or_default();
    out.text("name", "zustaendigeElterngeldstelle.name", name)?;
    schreibe_kontakte(
        out,
        "erreichbarkeit",
        b.erreichbarkeit.as_deref(),
        &pfade::ELTERNGELDSTELLE_ERREICHBARKEIT,
    )?;
    if let Some(a) = b.anschrift.as_ref().filter(|a| a.angegeben()) {
        schreibe_postanschrift(
            out,
            "anschrift",
            Some(a),
            &pfade::ELTERNGELDSTELLE_ANSCHRIFT,
        )?;
    }
    out.end("xpsw:zustaendigeElterngeldstelle")
}
