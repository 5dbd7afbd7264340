//! Checks every code element of a received message against the lists it names, as a receiving
//! office does: an element with a `listURI` attribute and a `code` child.

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use super::{nach_uri, Codeliste};

/// Most problems one check reports: a forged message cannot make the answer grow without bound.
const MAX_BEFUNDE: usize = 20;

/// A code element that does not fit its list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Codebefund {
    /// The element's path from the root, local names only: `portal2StA.Geburt.081021/kontaktdaten/kanal`.
    pub element: String,
    /// The code as written (cut to 100 characters).
    pub code: String,
    /// The `listURI` the element names.
    pub liste: String,
    /// The `listVersionID` the element names.
    pub version: String,
    /// What is wrong, in German: the receiver's words.
    pub grund: &'static str,
}

impl std::fmt::Display for Codebefund {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: Code '{}' der Liste {} (Version {}): {}",
            self.element, self.code, self.liste, self.version, self.grund
        )
    }
}

/// A code element being read: its path, the list it names and the code text seen so far.
struct Offen {
    tiefe: usize,
    element: String,
    liste: String,
    version: String,
    code: Option<String>,
}

/// The code elements of `xml` whose list is one of [`super::ALLE`] and whose version or code
/// does not fit it (at most 20). Lists not known here are not checked. A message that is not
/// well-formed XML is one problem at its root.
pub fn pruefe_nachricht(xml: &[u8]) -> Vec<Codebefund> {
    let mut reader = Reader::from_reader(xml);
    let mut pfad: Vec<String> = Vec::new();
    let mut offen: Option<Offen> = None;
    let mut befunde = Vec::new();
    let mut buf = Vec::new();
    loop {
        let event = match reader.read_event_into(&mut buf) {
            Ok(event) => event,
            Err(_) => {
                befunde.push(Codebefund {
                    element: pfad.join("/"),
                    code: String::new(),
                    liste: String::new(),
                    version: String::new(),
                    grund: "die Nachricht ist kein wohlgeformtes XML",
                });
                return befunde;
            }
        };
        match event {
            Event::Start(start) => {
                pfad.push(String::from_utf8_lossy(start.local_name().as_ref()).into_owned());
                offen = code_element(&start, &pfad).or(offen);
            }
            Event::Empty(start) => {
                // A code element without its `code` child names no code of its list.
                pfad.push(String::from_utf8_lossy(start.local_name().as_ref()).into_owned());
                if let Some(befund) = code_element(&start, &pfad).and_then(pruefe) {
                    befunde.push(befund);
                    if befunde.len() >= MAX_BEFUNDE {
                        return befunde;
                    }
                }
                pfad.pop();
            }
            Event::Text(text) => {
                let direkt_im_code = offen.as_ref().is_some_and(|o| {
                    pfad.len() == o.tiefe + 1 && pfad.last().is_some_and(|n| n == "code")
                });
                if direkt_im_code {
                    let wert = text.unescape().map(|t| t.into_owned()).unwrap_or_default();
                    if let Some(o) = offen.as_mut() {
                        o.code.get_or_insert_with(String::new).push_str(&wert);
                    }
                }
            }
            Event::End(_) => {
                if offen.as_ref().is_some_and(|o| o.tiefe == pfad.len()) {
                    if let Some(o) = offen.take() {
                        if let Some(befund) = pruefe(o) {
                            befunde.push(befund);
                            if befunde.len() >= MAX_BEFUNDE {
                                return befunde;
                            }
                        }
                    }
                }
                pfad.pop();
            }
            Event::Eof => return befunde,
            _ => {}
        }
        buf.clear();
    }
}

/// The code element `start` opens at `pfad`, if it is one (it names a `listURI`).
fn code_element(start: &BytesStart, pfad: &[String]) -> Option<Offen> {
    let attribut = |wanted: &[u8]| {
        start
            .attributes()
            .flatten()
            .find(|a| a.key.local_name().as_ref() == wanted)
            .and_then(|a| a.unescape_value().ok())
            .map(|v| v.into_owned())
    };
    Some(Offen {
        tiefe: pfad.len(),
        element: pfad.join("/"),
        liste: attribut(b"listURI")?,
        version: attribut(b"listVersionID").unwrap_or_default(),
        code: None,
    })
}

/// The problem of one code element, if it has one.
fn pruefe(o: Offen) -> Option<Codebefund> {
    let liste: &Codeliste = nach_uri(&o.liste)?;
    let code = o.code.unwrap_or_default();
    let grund = if o.version != liste.version {
        "die Liste ist in dieser Version nicht bekannt"
    } else if !liste.enthaelt(code.trim()) {
        "kein Code der Liste"
    } else {
        return None;
    };
    Some(Codebefund {
        element: o.element,
        code: code.chars().take(100).collect(),
        liste: o.liste,
        version: o.version,
        grund,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrong_codes_and_versions_are_named_and_unknown_lists_pass() {
        let xml = br#"<?xml version="1.0"?>
<x:n xmlns:x="urn:x"><x:kontaktdaten><kanal listURI="urn:de:xoev:codeliste:erreichbarkeit" listVersionID="1"><code>E-Mail</code></kanal></x:kontaktdaten>
<kanal listURI="urn:de:xoev:codeliste:erreichbarkeit" listVersionID="1"><code>01</code></kanal>
<x:geschlecht listURI="urn:xoev-de:xinneres:codeliste:geschlecht" listVersionID="2"><code>w</code></x:geschlecht>
<v listURI="urn:xoev-de:kosit:codeliste:verzeichnisdienst" listVersionID="3"><code>DVDV</code></v>
<kanal listURI="urn:de:xoev:codeliste:erreichbarkeit" listVersionID="1"/></x:n>"#;
        let befunde = pruefe_nachricht(xml);
        assert_eq!(befunde.len(), 3, "{befunde:?}");
        assert_eq!(
            befunde[0].to_string(),
            "n/kontaktdaten/kanal: Code 'E-Mail' der Liste urn:de:xoev:codeliste:erreichbarkeit \
             (Version 1): kein Code der Liste"
        );
        assert_eq!(befunde[1].element, "n/geschlecht");
        assert_eq!(
            befunde[1].grund,
            "die Liste ist in dieser Version nicht bekannt"
        );
        assert_eq!(befunde[2].element, "n/kanal");
        assert_eq!(befunde[2].grund, "kein Code der Liste");
        assert_eq!(pruefe_nachricht(b"<a><b></a>").len(), 1);
    }
}
