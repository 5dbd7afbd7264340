//! Thin layer over quick-xml's `Writer` whose methods return [`XmlError`], so that value
//! checks can abort in the middle of a nested structure with `?` (quick-xml's own
//! `write_inner_content` closures may only fail with `io::Error`).

use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use quick_xml::Writer;

use crate::codelisten::Codeliste;

use super::din91379::erstes_unzulaessiges_zeichen;
use super::XmlError;

/// Namespace of XPersonenstand 26.11; bound to the prefix used by the `xpsw:` names.
pub(crate) const NS_XPSW: &str = "http://xpsw.domap.de/xpsw2611";
/// XML Schema instance namespace, needed for the `xsi:type` attributes in the header.
pub(crate) const NS_XSI: &str = "http://www.w3.org/2001/XMLSchema-instance";

/// Refuses text outside DIN 91379 Datentyp C, the type of every free-text field.
pub(crate) fn pruefe_text(field: &'static str, wert: &str) -> Result<(), XmlError> {
    match erstes_unzulaessiges_zeichen(wert) {
        None => Ok(()),
        Some(c) => Err(XmlError::InvalidValue {
            field,
            reason: format!(
                "das Zeichen {c:?} (U+{:04X}) ist nach DIN 91379 nicht zulässig",
                u32::from(c)
            ),
        }),
    }
}

pub(crate) struct XmlOut {
    w: Writer<Vec<u8>>,
}

impl XmlOut {
    pub(crate) fn new() -> Result<Self, XmlError> {
        let mut w = Writer::new_with_indent(Vec::new(), b' ', 4);
        w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
        Ok(XmlOut { w })
    }

    /// Attribute values must already be checked by the caller where they are not constants.
    pub(crate) fn start(&mut self, name: &str, attrs: &[(&str, &str)]) -> Result<(), XmlError> {
        let start = BytesStart::new(name).with_attributes(attrs.iter().copied());
        self.w.write_event(Event::Start(start))?;
        Ok(())
    }

    pub(crate) fn end(&mut self, name: &str) -> Result<(), XmlError> {
        self.w.write_event(Event::End(BytesEnd::new(name)))?;
        Ok(())
    }

    pub(crate) fn leer(&mut self, name: &str) -> Result<(), XmlError> {
        self.w.create_element(name).write_empty()?;
        Ok(())
    }

    /// Writes `<name>wert</name>` after the Datentyp C check; quick-xml escapes the text.
    pub(crate) fn text(
        &mut self,
        name: &str,
        field: &'static str,
        wert: &str,
    ) -> Result<(), XmlError> {
        pruefe_text(field, wert)?;
        self.w
            .create_element(name)
            .write_text_content(BytesText::new(wert))?;
        Ok(())
    }

    /// Writes an element from a value the crate generated itself (numbers, codes, UUIDs).
    pub(crate) fn wert(&mut self, name: &str, wert: &str) -> Result<(), XmlError> {
        self.w
            .create_element(name)
            .write_text_content(BytesText::new(wert))?;
        Ok(())
    }

    /// Like [`XmlOut::wert`], with attributes (e.g. `exakt` of a time of death).
    pub(crate) fn wert_mit_attributen(
        &mut self,
        name: &str,
        attrs: &[(&str, &str)],
        wert: &str,
    ) -> Result<(), XmlError> {
        self.w
            .create_element(name)
            .with_attributes(attrs.iter().copied())
            .write_text_content(BytesText::new(wert))?;
        Ok(())
    }

    /// A code element of one of our code lists, URI and version taken from the list:
    /// `<name listURI=.. listVersionID=..><code>..</code></name>`. The caller has checked the
    /// code ([`Codeliste::pruefe`]) or takes it from the list itself.
    pub(crate) fn code(
        &mut self,
        name: &str,
        liste: &Codeliste,
        code: &str,
    ) -> Result<(), XmlError> {
        debug_assert!(liste.enthaelt(code), "{code} not in {}", liste.uri);
        self.code_element(name, liste.uri, liste.version, code)
    }

    /// A code element of a list outside [`crate::codelisten`] (the directory service, whose
    /// one value the portal always writes).
    pub(crate) fn code_element(
        &mut self,
        name: &str,
        list_uri: &str,
        list_version: &str,
        code: &str,
    ) -> Result<(), XmlError> {
        self.start(
            name,
            &[("listURI", list_uri), ("listVersionID", list_version)],
        )?;
        self.wert("code", code)?;
        self.end(name)
    }

    pub(crate) fn fertig(self) -> Result<String, XmlError> {
        String::from_utf8(self.w.into_inner()).map_err(|e| XmlError::Write(e.to_string()))
    }
}
