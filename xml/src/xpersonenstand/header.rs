//! Root attributes and `nachrichtenkopf.g2g`, shared by all portal-to-registry messages.

use chrono::SecondsFormat;

use super::xml_out::{pruefe_text, XmlOut, NS_XPSW, NS_XSI};
use super::{Behoerde, Nachrichtenkopf, XmlError};
use crate::codelisten::ERREICHBARKEIT;

/// Fixed by the schema (`version` and `standard` attributes have `fixed` values).
const VERSION: &str = "26.11";
const STANDARD: &str = "XPersonenstand";
/// Value of the `test` attribute; the schema leaves the content to bilateral agreement,
/// the reference samples use `test`.
const TEST_WERT: &str = "test";

const LISTURI_NACHRICHTENTYP: &str = "urn:xoev-de:xpersonenstand:codelist:nachrichtentyp";
pub(crate) const LISTURI_VERZEICHNISDIENST: &str = "urn:xoev-de:kosit:codeliste:verzeichnisdienst";
/// Version of the directory-service code list used by the reference samples.
pub(crate) const VERSION_VERZEICHNISDIENST: &str = "3";
/// Registry offices and portals are addressed through the DVDV.
pub(crate) const VERZEICHNISDIENST_DVDV: &str = "DVDV";

/// Identifies the message type in the header's `nachrichtentyp`.
pub(crate) struct Nachrichtentyp {
    /// Code of the message type list, e.g. `081020`.
    pub(crate) code: &'static str,
    /// Root element name, which doubles as the code's `name` column.
    pub(crate) name: &'static str,
}

fn pflicht(field: &'static str, wert: &str) -> Result<(), XmlError> {
    if wert.trim().is_empty() {
        return Err(XmlError::MissingField(field));
    }
    pruefe_text(field, wert)
}

/// Opens the root element with all attributes required by `Nachricht.G2G`.
pub(crate) fn schreibe_wurzel_start(
    out: &mut XmlOut,
    typ: &Nachrichtentyp,
    kopf: &Nachrichtenkopf,
) -> Result<(), XmlError> {
    let p = &kopf.produkt;
    pflicht("kopf.produkt.name", &p.name)?;
    pflicht("kopf.produkt.hersteller", &p.hersteller)?;
    pruefe_text("kopf.produkt.version", &p.version)?;
    let name = format!("xpsw:{}", typ.name);
    let mut attrs = vec![
        ("xmlns:xpsw", NS_XPSW),
        ("xmlns:xsi", NS_XSI),
        ("produkt", p.name.as_str()),
        ("produkthersteller", p.hersteller.as_str()),
    ];
    if !p.version.trim().is_empty() {
        attrs.push(("produktversion", p.version.as_str()));
    }
    attrs.push(("standard", STANDARD));
    if kopf.test {
        attrs.push(("test", TEST_WERT));
    }
    attrs.push(("version", VERSION));
    out.start(&name, &attrs)
}

/// Writes `nachrichtenkopf.g2g`. `leser_kennung` replaces the configured reader's kennung
/// when the notice names a specific registry office.
pub(crate) fn schreibe_kopf(
    out: &mut XmlOut,
    typ: &Nachrichtentyp,
    kopf: &Nachrichtenkopf,
    leser_kennung: Option<&str>,
) -> Result<(), XmlError> {
    // xsi:type mirrors the reference instances; some receivers dispatch on it.
    out.start(
        "nachrichtenkopf.g2g",
        &[("xsi:type", "xpsw:Nachrichtenkopf.G2G")],
    )?;
    out.start(
        "identifikation.nachricht",
        &[("xsi:type", "xpsw:Identifikation.Nachricht")],
    )?;
    out.wert(
        "nachrichtenUUID",
        &kopf.nachrichten_uuid.hyphenated().to_string(),
    )?;
    out.start(
        "nachrichtentyp",
        &[
            ("listURI", LISTURI_NACHRICHTENTYP),
            ("listVersionID", VERSION),
        ],
    )?;
    out.wert("code", typ.code)?;
    out.wert("name", typ.name)?;
    out.end("nachrichtentyp")?;
    out.wert(
        "erstellungszeitpunkt",
        &kopf
            .erstellungszeitpunkt
            .to_rfc3339_opts(SecondsFormat::Millis, true),
    )?;
    out.end("identifikation.nachricht")?;

    let leser_kennung = leser_kennung.unwrap_or(&kopf.leser.kennung);
    schreibe_behoerde(
        out,
        "leser",
        &kopf.leser,
        leser_kennung,
        BehoerdeRolle::Leser,
    )?;
    schreibe_behoerde(
        out,
        "autor",
        &kopf.autor,
        &kopf.autor.kennung,
        BehoerdeRolle::Autor,
    )?;
    out.end("nachrichtenkopf.g2g")
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum BehoerdeRolle {
    Leser,
    Autor,
}

fn schreibe_behoerde(
    out: &mut XmlOut,
    element: &str,
    behoerde: &Behoerde,
    kennung: &str,
    rolle: BehoerdeRolle,
) -> Result<(), XmlError> {
    let (f_kennung, f_name, f_erreichbarkeit, f_kanal, f_wert) = match rolle {
        BehoerdeRolle::Leser => (
            "kopf.leser.kennung",
            "kopf.leser.name",
            "kopf.leser.erreichbarkeit",
            "kopf.leser.erreichbarkeit.kanal",
            "kopf.leser.erreichbarkeit.kennung",
        ),
        BehoerdeRolle::Autor => (
            "kopf.autor.kennung",
            "kopf.autor.name",
            "kopf.autor.erreichbarkeit",
            "kopf.autor.erreichbarkeit.kanal",
            "kopf.autor.erreichbarkeit.kennung",
        ),
    };
    pflicht(f_kennung, kennung)?;
    pflicht(f_name, &behoerde.name)?;
    // Behoerde.Erreichbar (the author's type) requires at least one contact channel.
    if rolle == BehoerdeRolle::Autor && behoerde.erreichbarkeit.is_empty() {
        return Err(XmlError::MissingField(f_erreichbarkeit));
    }
    out.start(element, &[])?;
    out.code_element(
        "verzeichnisdienst",
        LISTURI_VERZEICHNISDIENST,
        VERSION_VERZEICHNISDIENST,
        VERZEICHNISDIENST_DVDV,
    )?;
    out.text("kennung", f_kennung, kennung.trim())?;
    out.text("name", f_name, behoerde.name.trim())?;
    for e in &behoerde.erreichbarkeit {
        pflicht(f_kanal, &e.kanal)?;
        pflicht(f_wert, &e.kennung)?;
        ERREICHBARKEIT.pruefe(f_kanal, e.kanal.trim())?;
        out.start("erreichbarkeit", &[])?;
        out.code("kanal", &ERREICHBARKEIT, e.kanal.trim())?;
        out.text("kennung", f_wert, e.kennung.trim())?;
        out.end("erreichbarkeit")?;
    }
    out.end(element)
}
