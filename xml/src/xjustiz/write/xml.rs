//! The XML of a checked message, with quick-xml (which escapes every text and attribute).
//!
//! XJustiz elements carry the prefix `tns:` (the schemas are `elementFormDefault="qualified"`);
//! the `code` child of a code element is unqualified, as the code-list schemas declare it.

use std::io;

use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use quick_xml::Writer;
use ring::digest::{digest, SHA256};
use uuid::Builder;

use super::check::{Geprueft, GepruefteAnschrift};

const NS_XJUSTIZ: &str = "http://www.xjustiz.de";
const ROOT: &str = "tns:nachricht.gds.uebermittlungSchriftgutobjekte.0005005";
/// The version the schemas fix in `nachrichtenkopf/@xjustizVersion`.
const XJUSTIZ_VERSION: &str = "3.6.2";

/// Version 2.0 of GDS.Familienstand, 2.3 of GDS.Telekommunikationsart and 2.5 of
/// GDS.Bestandteiltyp: fixed by the schema for these code lists.
const FAMILIENSTAND_VERSION: &str = "2.0";
const TELEKOMMUNIKATIONSART_VERSION: &str = "2.3";
const BESTANDTEILTYP_VERSION: &str = "2.5";
/// GDS.Telekommunikationsart `008`, "Rechtsverbindlicher elektronischer Kommunikationsweg":
/// a SAFE-ID; `007`, "Telefon".
const SAFE_ID: &str = "008";
const TELEFON: &str = "007";
/// GDS.Bestandteiltyp `001`, "Original".
const ORIGINAL: &str = "001";
/// GDS.Dokumentklasse (a code type 3 list, not in the schemas): `003` "Klage, Antrag" for the
/// form, `005` "Anlage" for every further document, list version 1.3. See docs/decisions.md.
const DOKUMENTKLASSE_VERSION: &str = "1.3";
const DOKUMENTKLASSE_FORMULAR: &str = "003";
const DOKUMENTKLASSE_ANLAGE: &str = "005";
/// GDS.Gerichte (code type 3) version written with a court's XJustiz-ID.
const GERICHTE_VERSION: &str = "3.3";

/// Numbers of the three parties: `beteiligtennummer` and `rollennummer` alike.
const BETROFFENER: &str = "1";
const ABSENDER: &str = "2";
const EMPFAENGER: &str = "3";
/// `instanznummer` of the court, when the recipient is one.
const INSTANZ: &str = "1";

/// Name of the software in `herstellerinformation`.
const PRODUKT: &str = "meldewerk";

pub(super) fn schreibe(g: &Geprueft) -> io::Result<Vec<u8>> {
    let mut out = Out {
        w: Writer::new_with_indent(Vec::new(), b' ', 2),
    };
    out.w
        .write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    out.w.write_event(Event::Start(
        BytesStart::new(ROOT).with_attributes([("xmlns:tns", NS_XJUSTIZ)]),
    ))?;
    nachrichtenkopf(&mut out, g)?;
    grunddaten(&mut out, g)?;
    schriftgutobjekte(&mut out, g)?;
    out.w.write_event(Event::End(BytesEnd::new(ROOT)))?;
    Ok(out.w.into_inner())
}

fn nachrichtenkopf(out: &mut Out, g: &Geprueft) -> io::Result<()> {
    out.start_mit("nachrichtenkopf", &[("xjustizVersion", XJUSTIZ_VERSION)])?;
    out.text("erstellungszeitpunkt", &g.erstellungszeitpunkt)?;

    out.start("absender")?;
    out.start("informationen")?;
    out.start("auswahl_kommunikationspartner")?;
    out.text("sonstige", g.absender_name)?;
    out.end("auswahl_kommunikationspartner")?;
    verweis(out, "ref.rollennummer", ABSENDER)?;
    out.end("informationen")?;
    out.text_opt("aktenzeichen", g.absender_aktenzeichen)?;
    out.text("eigeneNachrichtenID", &g.nachrichten_id)?;
    out.end("absender")?;

    out.start("empfaenger")?;
    out.start("informationen")?;
    out.start("auswahl_kommunikationspartner")?;
    match g.gericht {
        Some(Some(id)) => out.code("gericht", GERICHTE_VERSION, id)?,
        _ => out.text("sonstige", g.empfaenger_name)?,
    }
    out.end("auswahl_kommunikationspartner")?;
    match g.gericht {
        Some(_) => verweis(out, "ref.instanznummer", INSTANZ)?,
        None => verweis(out, "ref.rollennummer", EMPFAENGER)?,
    }
    out.end("informationen")?;
    out.start("auswahl_aktenzeichen")?;
    match g.empfaenger_aktenzeichen {
        Some(az) => out.text("aktenzeichen.freitext", az)?,
        // A form starts a matter the court has no reference for yet.
        None => out.text("aktenzeichen.neu", "true")?,
    }
    out.end("auswahl_aktenzeichen")?;
    out.end("empfaenger")?;

    out.start("herstellerinformation")?;
    out.text("nameDesProdukts", PRODUKT)?;
    out.text("herstellerDesProdukts", PRODUKT)?;
    out.text("version", env!("CARGO_PKG_VERSION"))?;
    out.end("herstellerinformation")?;
    out.end("nachrichtenkopf")
}

/// `auswahl_verweisGrunddaten`: the header's pointer to the party (or court instance).
fn verweis(out: &mut Out, art: &str, nummer: &str) -> io::Result<()> {
    out.start("auswahl_verweisGrunddaten")?;
    if art == "ref.instanznummer" {
        out.text(art, nummer)?;
    } else {
        // Type.GDS.Ref.Rollennummer wraps the number in an element of the same name.
        out.start(art)?;
        out.text(art, nummer)?;
        out.end(art)?;
    }
    out.end("auswahl_verweisGrunddaten")
}

fn grunddaten(out: &mut Out, g: &Geprueft) -> io::Result<()> {
    out.start("grunddaten")?;
    out.start("verfahrensdaten")?;
    if let Some(gericht) = g.gericht {
        out.start("instanzdaten")?;
        out.text("instanznummer", INSTANZ)?;
        out.start("auswahl_instanzbehoerde")?;
        match gericht {
            Some(id) => out.code("gericht", GERICHTE_VERSION, id)?,
            // The court without an XJustiz-ID is the recipient party, with name and address.
            None => {
                out.start("beteiligter")?;
                out.text("ref.beteiligtennummer", EMPFAENGER)?;
                out.end("beteiligter")?;
            }
        }
        out.end("auswahl_instanzbehoerde")?;
        kommunikation(out, SAFE_ID, g.empfaenger_safe_id)?;
        out.end("instanzdaten")?;
    }

    beteiligung_start(out, BETROFFENER, "Betroffene Person")?;
    out.start("natuerlichePerson")?;
    out.start("vollerName")?;
    out.text_opt("vorname", g.vorname)?;
    out.text("nachname", g.nachname)?;
    out.end("vollerName")?;
    if let Some(datum) = &g.geburtsdatum {
        out.start("geburt")?;
        out.text("geburtsdatum", datum)?;
        out.end("geburt")?;
    }
    if let Some(f) = g.familienstand {
        out.code("familienstand", FAMILIENSTAND_VERSION, f.code())?;
    }
    if let Some(a) = &g.anschrift {
        anschrift(out, a)?;
    }
    if let Some(aufenthalt) = g.aufenthalt {
        // Free text ("Klinikum Nord, Station 4, Zimmer 12") fits no address part but the
        // addition; the flag says it is where the person is now.
        out.start("anschrift")?;
        out.text("anschriftenzusatz", aufenthalt)?;
        out.text("derzeitigerAufenthalt", "true")?;
        out.end("anschrift")?;
    }
    if let Some(telefon) = g.telefon {
        kommunikation(out, TELEFON, telefon)?;
    }
    out.end("natuerlichePerson")?;
    beteiligung_end(out)?;

    beteiligung_start(out, ABSENDER, "Absender")?;
    organisation(out, g.absender_name, None, g.absender_safe_id)?;
    beteiligung_end(out)?;

    beteiligung_start(out, EMPFAENGER, "Empfänger")?;
    organisation(
        out,
        g.empfaenger_name,
        g.empfaenger_adresse.as_ref(),
        g.empfaenger_safe_id,
    )?;
    beteiligung_end(out)?;

    out.end("verfahrensdaten")?;
    out.end("grunddaten")
}

/// Opens a `beteiligung` up to `auswahl_beteiligter`. The role is named in words
/// (`sonstigeBezeichnung`); see docs/decisions.md on why no GDS.Rollenbezeichnung code.
fn beteiligung_start(out: &mut Out, nummer: &str, rolle: &str) -> io::Result<()> {
    out.start("beteiligung")?;
    out.start("rolle")?;
    out.text("rollennummer", nummer)?;
    out.start("auswahl_bezeichnung")?;
    out.text("sonstigeBezeichnung", rolle)?;
    out.end("auswahl_bezeichnung")?;
    out.end("rolle")?;
    out.start("beteiligter")?;
    out.text("beteiligtennummer", nummer)?;
    out.start("auswahl_beteiligter")
}

fn beteiligung_end(out: &mut Out) -> io::Result<()> {
    out.end("auswahl_beteiligter")?;
    out.end("beteiligter")?;
    out.end("beteiligung")
}

fn organisation(
    out: &mut Out,
    name: &str,
    adresse: Option<&GepruefteAnschrift>,
    safe_id: &str,
) -> io::Result<()> {
    out.start("organisation")?;
    out.start("bezeichnung")?;
    out.text("bezeichnung.aktuell", name)?;
    out.end("bezeichnung")?;
    if let Some(a) = adresse {
        anschrift(out, a)?;
    }
    kommunikation(out, SAFE_ID, safe_id)?;
    out.end("organisation")
}

fn anschrift(out: &mut Out, a: &GepruefteAnschrift) -> io::Result<()> {
    out.start("anschrift")?;
    out.text_opt("strasse", a.strasse)?;
    out.text_opt("postleitzahl", a.plz)?;
    out.text_opt("ort", a.stadt)?;
    out.end("anschrift")
}

/// A `telekommunikation` element (in `instanzdaten` the same type).
fn kommunikation(out: &mut Out, art: &str, verbindung: &str) -> io::Result<()> {
    out.start("telekommunikation")?;
    out.code("telekommunikationsart", TELEKOMMUNIKATIONSART_VERSION, art)?;
    out.text("verbindung", verbindung)?;
    out.end("telekommunikation")
}

fn schriftgutobjekte(out: &mut Out, g: &Geprueft) -> io::Result<()> {
    out.start("schriftgutobjekte")?;
    for (i, d) in g.dokumente.iter().enumerate() {
        let nummer = (i + 1).to_string();
        out.start("dokument")?;
        out.start("identifikation")?;
        out.text("id", &dokument_id(&g.nachrichten_id, i))?;
        out.text("nummerImUebergeordnetenContainer", &nummer)?;
        out.end("identifikation")?;
        out.start("xjustiz.fachspezifischeDaten")?;
        let klasse = if i == 0 {
            DOKUMENTKLASSE_FORMULAR
        } else {
            DOKUMENTKLASSE_ANLAGE
        };
        out.code("dokumentklasse", DOKUMENTKLASSE_VERSION, klasse)?;
        out.text("anzeigename", d.bezeichnung)?;
        out.start("person")?;
        out.text("ref.beteiligtennummer", BETROFFENER)?;
        out.end("person")?;
        out.start("datei")?;
        out.text("dateiname", d.dateiname)?;
        out.code("bestandteil", BESTANDTEILTYP_VERSION, ORIGINAL)?;
        out.end("datei")?;
        out.end("xjustiz.fachspezifischeDaten")?;
        if i == 0 {
            out.text_opt("erstellungszeitpunkt", g.melde_zeitpunkt.as_deref())?;
        }
        out.end("dokument")?;
    }
    out.end("schriftgutobjekte")
}

/// A document's id: a version 8 UUID from SHA-256 of the message id and the position, so that
/// a message written again (a retry) is the same bytes and ids stay unique per message.
fn dokument_id(nachrichten_id: &str, index: usize) -> String {
    let eingabe = format!("meldewerk xjustiz dokument {nachrichten_id} {index}");
    let hash = digest(&SHA256, eingabe.as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&hash.as_ref()[..16]);
    Builder::from_custom_bytes(bytes)
        .into_uuid()
        .hyphenated()
        .to_string()
}

/// quick-xml's writer with the `tns:` prefix added to every XJustiz element name.
struct Out {
    w: Writer<Vec<u8>>,
}

impl Out {
    fn start(&mut self, name: &str) -> io::Result<()> {
        self.start_mit(name, &[])
    }

    fn start_mit(&mut self, name: &str, attrs: &[(&str, &str)]) -> io::Result<()> {
        let start = BytesStart::new(format!("tns:{name}")).with_attributes(attrs.iter().copied());
        self.w.write_event(Event::Start(start))
    }

    fn end(&mut self, name: &str) -> io::Result<()> {
        self.w
            .write_event(Event::End(BytesEnd::new(format!("tns:{name}"))))
    }

    /// `<tns:name>value</tns:name>`; the value is escaped.
    fn text(&mut self, name: &str, value: &str) -> io::Result<()> {
        self.w
            .create_element(format!("tns:{name}"))
            .write_text_content(BytesText::new(value))?;
        Ok(())
    }

    /// Nothing at all for an absent value: no empty element.
    fn text_opt(&mut self, name: &str, value: Option<&str>) -> io::Result<()> {
        match value {
            Some(v) => self.text(name, v),
            None => Ok(()),
        }
    }

    /// `<tns:name listVersionID=".."><code>..</code></tns:name>`.
    fn code(&mut self, name: &str, version: &str, code: &str) -> io::Result<()> {
        self.start_mit(name, &[("listVersionID", version)])?;
        self.w
            .create_element("code")
            .write_text_content(BytesText::new(code))?;
        self.end(name)
    }
}
