//! Reading the header (`nachrichtenkopf.g2g`) of a received message back, as a receiving office
//! does before it confirms receipt: which message type it is, who sent it and when the sender
//! created it.

use chrono::{DateTime, Utc};
use quick_xml::events::Event;
use quick_xml::Reader;

use crate::codelisten::NACHRICHTENTYP;

/// A message type in words with its code, as receipts and pages name it:
/// `Geburtsanzeige (081020)`; an unknown code stays a code (`Nachrichtentyp 099999`).
pub fn nachrichtentyp_in_worten(code: &str) -> String {
    match NACHRICHTENTYP.bezeichnung(code) {
        Some(name) => format!("{name} ({code})"),
        None => format!("Nachrichtentyp {code}"),
    }
}

/// What a receiver reads from a message's header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kopfangaben {
    /// Code of the message type (`nachrichtentyp/code`), e.g. `081020`.
    pub nachrichtentyp: String,
    /// When the sender created the message (`erstellungszeitpunkt`), if it reads as a date-time.
    pub erstellungszeitpunkt: Option<DateTime<Utc>>,
    /// Directory identifier of the sender (`autor/kennung`), e.g. `sap:000000001`.
    pub autor_kennung: String,
    /// Name of the sender (`autor/name`).
    pub autor_name: String,
}

/// The header of the XPersonenstand message `xml`; `None` when the bytes are no XML with a
/// `nachrichtenkopf.g2g` naming a message type. Reading stops at the header's end, so the size
/// of the rest of the message does not matter.
pub fn lies_kopf(xml: &[u8]) -> Option<Kopfangaben> {
    let mut reader = Reader::from_reader(xml);
    reader.config_mut().trim_text(true);
    // Local names of the open elements from the header down.
    let mut pfad: Vec<Vec<u8>> = Vec::new();
    let mut im_kopf = false;
    let mut kopf = Kopfangaben {
        nachrichtentyp: String::new(),
        erstellungszeitpunkt: None,
        autor_kennung: String::new(),
        autor_name: String::new(),
    };
    loop {
        match reader.read_event().ok()? {
            Event::Start(e) => {
                let name = e.local_name().as_ref().to_vec();
                if name == b"nachrichtenkopf.g2g" {
                    im_kopf = true;
                } else if im_kopf {
                    pfad.push(name);
                }
            }
            Event::End(e) if im_kopf => {
                if e.local_name().as_ref() == b"nachrichtenkopf.g2g" {
                    break;
                }
                pfad.pop();
            }
            Event::Text(t) if im_kopf => {
                let text = t.unescape().ok()?.into_owned();
                let pfad: Vec<&[u8]> = pfad.iter().map(Vec::as_slice).collect();
                match pfad.as_slice() {
                    [b"identifikation.nachricht", b"nachrichtentyp", b"code"] => {
                        kopf.nachrichtentyp = text;
                    }
                    [b"identifikation.nachricht", b"erstellungszeitpunkt"] => {
                        kopf.erstellungszeitpunkt = DateTime::parse_from_rfc3339(&text)
                            .ok()
                            .map(|at| at.with_timezone(&Utc));
                    }
                    [b"autor", b"kennung"] => kopf.autor_kennung = text,
                    [b"autor", b"name"] => kopf.autor_name = text,
                    _ => {}
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    (!kopf.nachrichtentyp.is_empty()).then_some(kopf)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NACHRICHT: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<xpsw:portal2StA.Geburt.081020 xmlns:xpsw="http://xpsw.domap.de/xpsw2611" version="26.11">
  <nachrichtenkopf.g2g>
    <identifikation.nachricht>
      <nachrichtenUUID>4f1c2a8e-9d3b-4b6f-8e2a-1c0d5e7f9a3b</nachrichtenUUID>
      <nachrichtentyp listURI="urn:xoev-de:xpersonenstand:codelist:nachrichtentyp">
        <code>081020</code><name>portal2StA.Geburt.081020</name>
      </nachrichtentyp>
      <erstellungszeitpunkt>2026-11-25T09:15:00.250Z</erstellungszeitpunkt>
    </identifikation.nachricht>
    <leser><kennung>psw:11000000</kennung><name>Standesamt</name></leser>
    <autor><kennung>sap:000000001</kennung><name>meldewerk &amp; Co</name></autor>
  </nachrichtenkopf.g2g>
  <xpsw:nameEinrichtung>Klinikum</xpsw:nameEinrichtung>
</xpsw:portal2StA.Geburt.081020>"#;

    #[test]
    fn the_header_is_read_back() {
        let kopf = lies_kopf(NACHRICHT.as_bytes()).unwrap();
        assert_eq!(kopf.nachrichtentyp, "081020");
        assert_eq!(kopf.autor_kennung, "sap:000000001");
        assert_eq!(kopf.autor_name, "meldewerk & Co");
        assert_eq!(
            kopf.erstellungszeitpunkt.unwrap().to_rfc3339(),
            "2026-11-25T09:15:00.250+00:00"
        );
    }

    #[test]
    fn no_header_no_answer() {
        assert_eq!(lies_kopf(b"<a><b/></a>"), None);
        assert_eq!(lies_kopf(b"not xml <"), None);
        assert_eq!(lies_kopf(b""), None);
    }

    #[test]
    fn types_in_words() {
        assert_eq!(
            nachrichtentyp_in_worten("081020"),
            "Geburtsanzeige (081020)"
        );
        assert_eq!(
            nachrichtentyp_in_worten("084021"),
            "Sterbefallanzeige des Bestatters (084021)"
        );
        assert_eq!(nachrichtentyp_in_worten("099999"), "Nachrichtentyp 099999");
    }
}
