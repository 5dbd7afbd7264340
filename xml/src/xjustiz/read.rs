//! Reading an incoming `xjustiz_nachricht.xml` with quick-xml, bounded in size, depth and text
//! length, refusing any DOCTYPE.
//!
//! Elements are matched by local name (any prefix, any default namespace): the messages come from
//! many court products, and the paths read are specific enough that a foreign namespace cannot
//! alias them. Paths are relative to the root element, which must be an XJustiz message
//! (`nachricht.*`).

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use super::summary::{AktenzeichenSource, Beteiligter, Dokument, MessageSummary};

/// Largest message read, in bytes (8 MiB). The XML carries only metadata (the documents travel
/// as attachments), so real messages are a few kilobytes; this bounds memory and time.
pub const MAX_MESSAGE_BYTES: usize = 8 * 1024 * 1024;
/// Deepest element nesting read (the root is depth 1). XJustiz 3.6 nests about 15 levels.
pub const MAX_DEPTH: usize = 64;
/// Longest text value (one element's text, after entity references), in bytes (64 KiB).
pub const MAX_TEXT_BYTES: usize = 64 * 1024;
/// Most attributes on one element: XJustiz uses at most a few (plus namespace declarations),
/// and the parser's duplicate check is quadratic in their number.
pub const MAX_ATTRIBUTES: usize = 32;
/// Most parties, documents, and file names per message read; beyond is an error rather than an
/// unbounded list (an empty `<dokument/>` costs 11 bytes of input but a whole entry).
pub const MAX_ENTRIES: usize = 10_000;

/// Why a message could not be read. Every variant is the message's fault (hostile or broken
/// input); the text is safe to show an operator (it carries no message content but names).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ReadError {
    /// The input is larger than [`MAX_MESSAGE_BYTES`].
    #[error("the message has {0} bytes, more than the {MAX_MESSAGE_BYTES} read")]
    TooLarge(usize),
    /// The input is not UTF-8 (XJustiz requires UTF-8).
    #[error("the message is not valid UTF-8 (at byte {0})")]
    InvalidUtf8(usize),
    /// The XML declaration names an encoding other than UTF-8.
    #[error("the message declares the encoding {0:?}; only UTF-8 is read")]
    UnsupportedEncoding(String),
    /// A DOCTYPE: refused outright, because it is how entity declarations (entity expansion
    /// bombs) and external references (files, URLs) enter a document; XJustiz never uses one.
    #[error("the message has a DOCTYPE (entity declarations and external references are refused)")]
    Doctype,
    /// Elements nested deeper than [`MAX_DEPTH`].
    #[error("the message nests elements deeper than {MAX_DEPTH} levels")]
    TooDeep,
    /// One text value longer than [`MAX_TEXT_BYTES`].
    #[error("the element {element:?} has a text longer than {MAX_TEXT_BYTES} bytes")]
    TextTooLong {
        /// Local name of the element.
        element: String,
    },
    /// An element with more than [`MAX_ATTRIBUTES`] attributes.
    #[error("the element {element:?} has more than {MAX_ATTRIBUTES} attributes")]
    TooManyAttributes {
        /// Local name of the element.
        element: String,
    },
    /// More than [`MAX_ENTRIES`] parties, documents or file names.
    #[error("the message lists more than {MAX_ENTRIES} {0}")]
    TooManyEntries(&'static str),
    /// The input ends inside an element (or has no element at all).
    #[error("the message ends before its root element is closed")]
    Truncated,
    /// The root element is not an XJustiz message (`nachricht.*`).
    #[error("the root element {0:?} is not an XJustiz message")]
    NotXJustiz(String),
    /// The XML is malformed: mismatched tags, a second root, text outside the root, an unknown
    /// entity reference, a broken attribute.
    #[error("malformed XML at byte {position}: {reason}")]
    Malformed {
        /// Byte offset the parser stopped at.
        position: u64,
        /// The parser's description.
        reason: String,
    },
}

/// Reads the case reference, parties and document list of an incoming XJustiz message.
///
/// Time and memory are linear in the input, which is at most [`MAX_MESSAGE_BYTES`]; nothing is
/// fetched or expanded. Absent parts are `None`/empty; broken or hostile input is a
/// [`ReadError`], never a panic.
pub fn read_message(xml: &[u8]) -> Result<MessageSummary, ReadError> {
    if xml.len() > MAX_MESSAGE_BYTES {
        return Err(ReadError::TooLarge(xml.len()));
    }
    let text = std::str::from_utf8(xml).map_err(|e| ReadError::InvalidUtf8(e.valid_up_to()))?;
    let mut reader = Reader::from_str(text);
    reader.config_mut().check_end_names = true;
    let mut state = State::default();
    loop {
        let position = reader.buffer_position();
        let event = reader.read_event().map_err(|e| {
            // A DOCTYPE the parser cannot even delimit (a `<` or `>` inside a quoted literal of
            // its internal subset) is still a DOCTYPE: refused as one, so the operator reads why.
            let rest = usize::try_from(position).ok().and_then(|at| text.get(at..));
            if rest.is_some_and(|rest| rest.trim_start().starts_with("<!DOCTYPE")) {
                ReadError::Doctype
            } else {
                malformed(position, e)
            }
        })?;
        match event {
            Event::Decl(decl) => {
                if let Some(encoding) = decl.encoding() {
                    let encoding = encoding.map_err(|e| malformed(position, e))?;
                    let encoding = String::from_utf8_lossy(&encoding).into_owned();
                    if !matches!(encoding.to_ascii_lowercase().as_str(), "utf-8" | "utf8") {
                        return Err(ReadError::UnsupportedEncoding(bounded(&encoding)));
                    }
                }
            }
            Event::DocType(_) => return Err(ReadError::Doctype),
            Event::Start(start) => state.open(&start, position)?,
            Event::Empty(start) => {
                state.open(&start, position)?;
                state.close()?;
            }
            Event::End(_) => state.close()?,
            Event::Text(t) => {
                let value = t.unescape().map_err(|e| malformed(position, e))?;
                state.text(&value, position)?;
            }
            Event::CData(c) => {
                let raw = c.into_inner();
                let value = String::from_utf8_lossy(&raw);
                state.text(&value, position)?;
            }
            Event::Comment(_) | Event::PI(_) => {}
            Event::Eof => break,
        }
    }
    if !state.path.is_empty() || state.summary.nachrichtentyp.is_empty() {
        return Err(ReadError::Truncated);
    }
    state.finish();
    Ok(state.summary)
}

fn malformed(position: u64, e: impl std::fmt::Display) -> ReadError {
    ReadError::Malformed {
        position,
        reason: bounded(&e.to_string()),
    }
}

/// At most 200 characters of a string taken from the input, for error texts.
fn bounded(s: &str) -> String {
    s.chars().take(200).collect()
}

/// The reader's position and what it collected so far.
#[derive(Default)]
struct State {
    /// Local names from the root down to the current element.
    path: Vec<String>,
    /// Text of the current element (reset at every start tag).
    text: String,
    summary: MessageSummary,
    empfaenger_aktenzeichen: Option<String>,
    absender_aktenzeichen: Option<String>,
    /// The party being read, with its name parts.
    party: Option<(Beteiligter, Option<String>, Option<String>)>,
    /// Depth of the `dokument` element being read, if inside one.
    document_depth: Option<usize>,
}

const BETEILIGUNG: [&str; 3] = ["grunddaten", "verfahrensdaten", "beteiligung"];

impl State {
    fn open(&mut self, start: &BytesStart, position: u64) -> Result<(), ReadError> {
        if self.path.len() >= MAX_DEPTH {
            return Err(ReadError::TooDeep);
        }
        let local = start.local_name();
        let name = String::from_utf8_lossy(local.as_ref()).into_owned();
        // None is read, but a broken or repeated attribute makes the document malformed. Counted
        // first without checks, so that the quadratic duplicate check runs on few.
        if start
            .attributes()
            .with_checks(false)
            .nth(MAX_ATTRIBUTES)
            .is_some()
        {
            return Err(ReadError::TooManyAttributes {
                element: bounded(&name),
            });
        }
        for attribute in start.attributes() {
            attribute.map_err(|e| malformed(position, e))?;
        }
        if self.path.is_empty() {
            if !self.summary.nachrichtentyp.is_empty() {
                return Err(ReadError::Malformed {
                    position,
                    reason: "a second root element".into(),
                });
            }
            if !name.starts_with("nachricht.") {
                return Err(ReadError::NotXJustiz(bounded(&name)));
            }
            self.summary.nachrichtentyp = name.clone();
        }
        self.path.push(name);
        self.text.clear();
        let rel = self.relative();
        if rel == BETEILIGUNG {
            if self.summary.beteiligte.len() >= MAX_ENTRIES {
                return Err(ReadError::TooManyEntries("parties"));
            }
            self.party = Some(Default::default());
        } else if rel.first().map(String::as_str) == Some("schriftgutobjekte")
            && rel.last().map(String::as_str) == Some("dokument")
            && self.document_depth.is_none()
        {
            if self.summary.dokumente.len() >= MAX_ENTRIES {
                return Err(ReadError::TooManyEntries("documents"));
            }
            self.summary.dokumente.push(Dokument::default());
            self.document_depth = Some(self.path.len());
        }
        Ok(())
    }

    fn text(&mut self, value: &str, position: u64) -> Result<(), ReadError> {
        if self.path.is_empty() {
            if value.trim().is_empty() {
                return Ok(());
            }
            return Err(ReadError::Malformed {
                position,
                reason: "text outside the root element".into(),
            });
        }
        if self.text.len() + value.len() > MAX_TEXT_BYTES {
            let element = self.path.last().cloned().unwrap_or_default();
            return Err(ReadError::TextTooLong {
                element: bounded(&element),
            });
        }
        self.text.push_str(value);
        Ok(())
    }

    /// Path below the root element.
    fn relative(&self) -> &[String] {
        self.path.get(1..).unwrap_or(&[])
    }

    fn close(&mut self) -> Result<(), ReadError> {
        let value = std::mem::take(&mut self.text);
        let value = Some(value.trim().to_owned()).filter(|v| !v.is_empty());
        // Taken out while matching, so that the collected state can be changed meanwhile.
        let path = std::mem::take(&mut self.path);
        let result = match self.document_depth {
            Some(depth) => self.close_in_document(&path, depth, value),
            None => {
                let rel: Vec<&str> = path.iter().skip(1).map(String::as_str).collect();
                self.close_outside_document(&rel, value);
                Ok(())
            }
        };
        self.path = path;
        self.path.pop();
        result
    }

    fn close_outside_document(&mut self, rel: &[&str], value: Option<String>) {
        match rel {
            ["nachrichtenkopf", "erstellungszeitpunkt"] => {
                self.summary.erstellungszeitpunkt = value
            }
            ["nachrichtenkopf", "absender", "aktenzeichen"] => self.absender_aktenzeichen = value,
            ["nachrichtenkopf", "absender", "eigeneNachrichtenID"] => {
                self.summary.nachrichten_id = value
            }
            ["nachrichtenkopf", "empfaenger", "auswahl_aktenzeichen", "aktenzeichen.freitext"] => {
                self.empfaenger_aktenzeichen = value
            }
            [a, b, c] if [*a, *b, *c] == BETEILIGUNG => {
                if let Some((mut party, vorname, nachname)) = self.party.take() {
                    let person: Vec<String> = vorname.into_iter().chain(nachname).collect();
                    if !person.is_empty() {
                        party.name = Some(person.join(" "));
                    }
                    self.summary.beteiligte.push(party);
                }
            }
            [a, b, c, rest @ ..] if [*a, *b, *c] == BETEILIGUNG => {
                let Some((party, vorname, nachname)) = self.party.as_mut() else {
                    return;
                };
                match rest {
                    ["rolle", "rollenbezeichnung", "code"] if party.rolle.is_none() => {
                        party.rolle = value
                    }
                    ["beteiligter", "beteiligtennummer"] => party.beteiligtennummer = value,
                    ["beteiligter", "auswahl_beteiligter", "natuerlichePerson", "vollerName", "vorname"] => {
                        *vorname = value
                    }
                    ["beteiligter", "auswahl_beteiligter", "natuerlichePerson", "vollerName", "nachname"] => {
                        *nachname = value
                    }
                    ["beteiligter", "auswahl_beteiligter", "organisation" | "ra.kanzlei", "bezeichnung", "bezeichnung.aktuell"] => {
                        party.name = value
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    fn close_in_document(
        &mut self,
        path: &[String],
        depth: usize,
        value: Option<String>,
    ) -> Result<(), ReadError> {
        let below: Vec<&str> = path[depth..].iter().map(String::as_str).collect();
        let file_names: usize = self
            .summary
            .dokumente
            .iter()
            .map(|d| d.dateinamen.len())
            .sum();
        let Some(document) = self.summary.dokumente.last_mut() else {
            return Ok(());
        };
        match below.as_slice() {
            ["identifikation", "id"] => document.id = value,
            ["xjustiz.fachspezifischeDaten", "anzeigename"] => document.anzeigename = value,
            ["xjustiz.fachspezifischeDaten", "dokumentklasse", "code"] => {
                document.dokumentklasse = value
            }
            ["xjustiz.fachspezifischeDaten", "datei", "dateiname"] => {
                if let Some(name) = value {
                    if file_names >= MAX_ENTRIES {
                        return Err(ReadError::TooManyEntries("file names"));
                    }
                    document.dateinamen.push(name);
                }
            }
            [] => self.document_depth = None,
            _ => {}
        }
        Ok(())
    }

    /// Picks the case reference: the recipient's free text, else the sender's.
    fn finish(&mut self) {
        if let Some(az) = self.empfaenger_aktenzeichen.take() {
            self.summary.aktenzeichen = Some(az);
            self.summary.aktenzeichen_source = Some(AktenzeichenSource::Empfaenger);
        } else if let Some(az) = self.absender_aktenzeichen.take() {
            self.summary.aktenzeichen = Some(az);
            self.summary.aktenzeichen_source = Some(AktenzeichenSource::Absender);
        }
    }
}
