//! Checking the input before anything is written: bounds, the DIN 91379 repertoire of each
//! element's data type, and what the schema requires. The writer then only writes what passed,
//! so a message that is produced is complete and every refusal names the field at fault.

use uuid::Uuid;

use super::model::{Anschrift, Dokumentangabe, EmpfaengerArt, Familienstand, Uebermittlung};
use crate::xpersonenstand::din91379::{erstes_zeichen_ausserhalb, Datentyp};

/// Longest free text of one field (names, addresses, references, titles), in characters.
/// Real values are far shorter; the bound keeps a message (and its court's display) sane.
pub const MAX_TEXT_CHARS: usize = 255;
/// Most documents one message carries.
pub const MAX_DOKUMENTE: usize = 100;
/// Longest MIME type, in characters (RFC 6838 allows 127 for each of its two parts).
pub const MAX_MIME_TYPE_CHARS: usize = 255;

/// Why a message could not be written. Every variant but [`WriteError::Xml`] is the input's
/// fault; `field` names it as the memento does (`betroffener.name.nachname`,
/// `dokumente[1].dateiname`), and no variant carries the value itself.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WriteError {
    /// A value the schema requires is absent or blank.
    #[error("{field} is required")]
    Missing {
        /// The field at fault.
        field: String,
    },
    /// A value longer than its bound.
    #[error("{field} has {chars} characters, more than the {max} allowed")]
    TooLong {
        /// The field at fault.
        field: String,
        /// Its length in characters.
        chars: usize,
        /// The bound.
        max: usize,
    },
    /// A character outside the DIN 91379 data type of the element the value goes to.
    #[error(
        "{field} contains the character {character:?} (U+{code:04X}), which XJustiz does not \
         allow there (DIN 91379)",
        code = u32::from(*character)
    )]
    Character {
        /// The field at fault.
        field: String,
        /// The first character refused.
        character: char,
    },
    /// A value of the wrong shape (not a UUID, not a MIME type, a file name with a path).
    #[error("{field} {reason}")]
    Invalid {
        /// The field at fault.
        field: String,
        /// What is wrong, in words.
        reason: &'static str,
    },
    /// No document: the form's PDF must be the first.
    #[error("dokumente is empty; the form's PDF must be the first document")]
    NoDocuments,
    /// More documents than [`MAX_DOKUMENTE`].
    #[error("dokumente has {0} entries, more than the {MAX_DOKUMENTE} allowed")]
    TooManyDocuments(usize),
    /// Two documents with the same file name (compared case-insensitively): the message
    /// references the attachments by name.
    #[error("dokumente[{0}].dateiname repeats the file name of an earlier document")]
    DuplicateFileName(usize),
    /// The XML writer failed (not expected: it writes into memory).
    #[error("writing the XML failed: {0}")]
    Xml(String),
}

impl WriteError {
    /// The field at fault, under the memento's name (`betroffener.name.nachname`), when the
    /// error has one.
    pub fn field(&self) -> Option<&str> {
        match self {
            WriteError::Missing { field }
            | WriteError::TooLong { field, .. }
            | WriteError::Character { field, .. }
            | WriteError::Invalid { field, .. } => Some(field),
            _ => None,
        }
    }
}

/// An address that passed the checks; at least one part is present.
pub(super) struct GepruefteAnschrift<'a> {
    pub(super) strasse: Option<&'a str>,
    pub(super) plz: Option<&'a str>,
    pub(super) stadt: Option<&'a str>,
}

/// A document that passed the checks.
pub(super) struct GepruefterDokument<'a> {
    pub(super) dateiname: &'a str,
    pub(super) bezeichnung: &'a str,
}

/// The input after the checks: trimmed text, blank optional values as `None`.
pub(super) struct Geprueft<'a> {
    pub(super) nachrichten_id: String,
    pub(super) erstellungszeitpunkt: String,
    pub(super) absender_name: &'a str,
    pub(super) absender_aktenzeichen: Option<&'a str>,
    pub(super) absender_safe_id: &'a str,
    pub(super) empfaenger_name: &'a str,
    /// `None` for `Sonstige`; for a court its XJustiz-ID, if known.
    pub(super) gericht: Option<Option<&'a str>>,
    pub(super) empfaenger_safe_id: &'a str,
    pub(super) empfaenger_aktenzeichen: Option<&'a str>,
    pub(super) empfaenger_adresse: Option<GepruefteAnschrift<'a>>,
    pub(super) vorname: Option<&'a str>,
    pub(super) nachname: &'a str,
    pub(super) geburtsdatum: Option<String>,
    pub(super) familienstand: Option<Familienstand>,
    pub(super) anschrift: Option<GepruefteAnschrift<'a>>,
    pub(super) telefon: Option<&'a str>,
    pub(super) aufenthalt: Option<&'a str>,
    pub(super) dokumente: Vec<GepruefterDokument<'a>>,
    pub(super) melde_zeitpunkt: Option<String>,
}

/// `xs:dateTime` with the offset, whole seconds.
const ZEITFORMAT: &str = "%Y-%m-%dT%H:%M:%S%:z";

pub(super) fn pruefe(u: &Uebermittlung) -> Result<Geprueft<'_>, WriteError> {
    let b = &u.betroffener;
    let e = &u.empfaenger;
    let gericht = match &e.art {
        EmpfaengerArt::Sonstige => None,
        EmpfaengerArt::Gericht { xjustiz_id } => Some(optional(
            "empfaenger.xjustizId",
            xjustiz_id.as_deref(),
            Datentyp::C,
        )?),
    };
    Ok(Geprueft {
        nachrichten_id: nachrichten_id(&u.nachricht.eigene_nachrichten_id)?,
        erstellungszeitpunkt: u
            .nachricht
            .erstellungszeitpunkt
            .format(ZEITFORMAT)
            .to_string(),
        absender_name: pflicht("absender.name", &u.absender.name, Datentyp::D)?,
        absender_aktenzeichen: optional(
            "absender.aktenzeichen",
            u.absender.aktenzeichen.as_deref(),
            Datentyp::C,
        )?,
        absender_safe_id: pflicht("absender.safeId", &u.absender.safe_id, Datentyp::C)?,
        empfaenger_name: pflicht("empfaenger.name", &e.name, Datentyp::D)?,
        gericht,
        empfaenger_safe_id: pflicht("empfaenger.safeId", &e.safe_id, Datentyp::C)?,
        empfaenger_aktenzeichen: optional(
            "empfaenger.aktenzeichen",
            e.aktenzeichen.as_deref(),
            Datentyp::C,
        )?,
        empfaenger_adresse: anschrift("empfaenger.adresse", e.adresse.as_ref())?,
        vorname: optional(
            "betroffener.name.vorname",
            b.vorname.as_deref(),
            Datentyp::A,
        )?,
        nachname: pflicht("betroffener.name.nachname", &b.nachname, Datentyp::A)?,
        geburtsdatum: b.geburtsdatum.map(|d| d.format("%Y-%m-%d").to_string()),
        familienstand: b.familienstand,
        anschrift: anschrift("betroffener.anschrift", b.anschrift.as_ref())?,
        telefon: optional(
            "betroffener.anschriftTelefon",
            b.telefon.as_deref(),
            Datentyp::C,
        )?,
        aufenthalt: optional(
            "betroffener.gegenwaertigerAufenthalt",
            b.gegenwaertiger_aufenthalt.as_deref(),
            Datentyp::C,
        )?,
        dokumente: dokumente(&u.dokumente)?,
        melde_zeitpunkt: u.melde_zeitpunkt.map(|t| t.format(ZEITFORMAT).to_string()),
    })
}

fn nachrichten_id(value: &str) -> Result<String, WriteError> {
    let field = "nachricht.eigeneNachrichtenId";
    if value.trim().is_empty() {
        return Err(WriteError::Missing {
            field: field.into(),
        });
    }
    // Only the hyphenated form matches the schema's pattern; braces, URNs and the bare
    // 32 digits that `Uuid::parse_str` also takes would not.
    match Uuid::try_parse(value) {
        Ok(id) if value.len() == 36 => Ok(id.hyphenated().to_string()),
        _ => Err(WriteError::Invalid {
            field: field.into(),
            reason: "is not a UUID in its hyphenated form (8-4-4-4-12 hex digits)",
        }),
    }
}

/// A required text: trimmed, not blank, bounded, within the data type.
fn pflicht<'a>(field: &str, value: &'a str, typ: Datentyp) -> Result<&'a str, WriteError> {
    optional(field, Some(value), typ)?.ok_or_else(|| WriteError::Missing {
        field: field.into(),
    })
}

/// An optional text: trimmed; blank counts as absent, so that no empty element is written.
fn optional<'a>(
    field: &str,
    value: Option<&'a str>,
    typ: Datentyp,
) -> Result<Option<&'a str>, WriteError> {
    let Some(value) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    let chars = value.chars().count();
    if chars > MAX_TEXT_CHARS {
        return Err(WriteError::TooLong {
            field: field.into(),
            chars,
            max: MAX_TEXT_CHARS,
        });
    }
    if let Some(character) = erstes_zeichen_ausserhalb(value, typ) {
        return Err(WriteError::Character {
            field: field.into(),
            character,
        });
    }
    Ok(Some(value))
}

/// An address; one without any part is absent.
fn anschrift<'a>(
    field: &str,
    a: Option<&'a Anschrift>,
) -> Result<Option<GepruefteAnschrift<'a>>, WriteError> {
    let Some(a) = a else { return Ok(None) };
    let geprueft = GepruefteAnschrift {
        strasse: optional(
            &format!("{field}.strasse"),
            a.strasse.as_deref(),
            Datentyp::B,
        )?,
        plz: optional(&format!("{field}.plz"), a.plz.as_deref(), Datentyp::C)?,
        stadt: optional(&format!("{field}.stadt"), a.stadt.as_deref(), Datentyp::B)?,
    };
    let leer = geprueft.strasse.is_none() && geprueft.plz.is_none() && geprueft.stadt.is_none();
    Ok((!leer).then_some(geprueft))
}

fn dokumente(dokumente: &[Dokumentangabe]) -> Result<Vec<GepruefterDokument<'_>>, WriteError> {
    if dokumente.is_empty() {
        return Err(WriteError::NoDocuments);
    }
    if dokumente.len() > MAX_DOKUMENTE {
        return Err(WriteError::TooManyDocuments(dokumente.len()));
    }
    let mut geprueft: Vec<GepruefterDokument> = Vec::with_capacity(dokumente.len());
    for (i, d) in dokumente.iter().enumerate() {
        let feld = |name: &str| format!("dokumente[{i}].{name}");
        let dateiname = pflicht(&feld("dateiname"), &d.dateiname, Datentyp::C)?;
        if dateiname.contains(['/', '\\']) || dateiname.chars().any(char::is_control) {
            return Err(WriteError::Invalid {
                field: feld("dateiname"),
                reason: "must be a bare file name (no path, no control characters)",
            });
        }
        if matches!(dateiname, "." | "..") {
            return Err(WriteError::Invalid {
                field: feld("dateiname"),
                reason: "must name a file",
            });
        }
        if geprueft
            .iter()
            .any(|g| g.dateiname.to_lowercase() == dateiname.to_lowercase())
        {
            return Err(WriteError::DuplicateFileName(i));
        }
        mime_type(&feld("mimeType"), &d.mime_type)?;
        let bezeichnung = pflicht(&feld("bezeichnung"), &d.bezeichnung, Datentyp::C)?;
        geprueft.push(GepruefterDokument {
            dateiname,
            bezeichnung,
        });
    }
    Ok(geprueft)
}

/// `type/subtype` of RFC 6838 restricted-name characters, parameters not allowed.
fn mime_type(field: &str, value: &str) -> Result<(), WriteError> {
    let value = value.trim();
    if value.is_empty() {
        return Err(WriteError::Missing {
            field: field.into(),
        });
    }
    let chars = value.chars().count();
    if chars > MAX_MIME_TYPE_CHARS {
        return Err(WriteError::TooLong {
            field: field.into(),
            chars,
            max: MAX_MIME_TYPE_CHARS,
        });
    }
    let teil = |t: &str| {
        !t.is_empty()
            && t.starts_with(|c: char| c.is_ascii_alphanumeric())
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || "!#$&-^_.+".contains(c))
    };
    match value.split_once('/') {
        Some((typ, subtyp)) if teil(typ) && teil(subtyp) => Ok(()),
        _ => Err(WriteError::Invalid {
            field: field.into(),
            reason: "is not a MIME type (type/subtype)",
        }),
    }
}
