//! XPersonenstand 26.11 messages (namespace `http://xpsw.domap.de/xpsw2611`).
//!
//! The form content ([`Geburtsanzeige`]) and the engine-supplied header
//! ([`Nachrichtenkopf`]) are kept apart: the first is what a hospital fills in and what a
//! memento carries, the second depends on routing and configuration only.

pub(crate) mod din91379;
mod geburt_081020;
mod geburt_081021;
mod header;
mod kontakt;
mod kopf_lesen;
mod modell;
mod nachricht;
mod pflichtfelder;
mod sterbefall;
mod werte;
mod xml_out;

pub use geburt_081020::write_geburt_081020;
pub use geburt_081021::write_geburt_081021;
pub use geburt_081021::{
    AllgemeinerName, AngabenEhe, AngabenElternteil2, AngabenEreignis, AngabenGeburt, AngabenMutter,
    AnschriftInland, BehoerdeMitAnschrift, EreignisortErweitert, Geburtsdaten, Geschlecht,
    InlandsanschriftGebaeude, InlandsanschriftPostfach, Kontakt, Neugeborenes,
    PersonNameVeraenderung, PostalischeInlandsanschrift, Staatsangehoerigkeit, Urkundenanforderung,
    VorangegangenesKind, Vorgangsereignis, Vorgangsidentifikation,
};
pub use kopf_lesen::{lies_kopf, nachrichtentyp_in_worten, Kopfangaben};
pub use modell::{
    AnschriftAutor, AnschriftMutter, Ereignisort, Gebaeudeanschrift, Geburtsangaben,
    Geburtsanzeige, Kind, KindGeschlecht, KindName, Mehrlingsgeburt, Mutter, MutterStandard,
    MutterVertraulich, PersonName, TotgeburtAngaben, ZweitesElternteil,
};
pub use nachricht::Nachricht;
// Death notices (084020, 084021, 084040), see `sterbefall`.
pub use sterbefall::*;

use chrono::{DateTime, Utc};
use uuid::Uuid;

/// Header data the engine supplies for every message; none of it comes from the form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nachrichtenkopf {
    /// Unique id of this message (`nachrichtenUUID`); a retry of the same delivery keeps it.
    pub nachrichten_uuid: Uuid,
    /// Creation time of the message (`erstellungszeitpunkt`).
    pub erstellungszeitpunkt: DateTime<Utc>,
    /// The receiving civil registry office (`leser`), e.g. kennung `psw:11007007`.
    /// A `standesamtKennung` in the notice replaces its kennung.
    pub leser: Behoerde,
    /// The sending portal (`autor`), e.g. kennung `sap:000000013`. The schema demands at
    /// least one entry in its `erreichbarkeit`.
    pub autor: Behoerde,
    /// The producing software, written as the root attributes `produkt`,
    /// `produkthersteller` and `produktversion`.
    pub produkt: Produkt,
    /// Marks a test message. The schema treats the mere presence of the `test` attribute
    /// as "do not process productively", so `true` writes `test="test"` and `false`
    /// omits the attribute entirely (there is no way to say "not a test" with a value).
    pub test: bool,
}

/// An authority as listed in the DVDV directory (`leser` or `autor` of the header).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Behoerde {
    /// Directory identifier with prefix, e.g. `psw:11007007` (registry office) or
    /// `sap:000000013` (portal).
    pub kennung: String,
    /// Human-readable name of the authority.
    pub name: String,
    /// Contact channels; mandatory (at least one) for the `autor`, optional for the `leser`.
    pub erreichbarkeit: Vec<Erreichbarkeit>,
}

/// One contact channel of an authority (`erreichbarkeit`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Erreichbarkeit {
    /// Code of the XÖV code list `urn:de:xoev:codeliste:erreichbarkeit`, e.g. `01` e-mail,
    /// `02` landline, `03` mobile.
    pub kanal: String,
    /// The address or number itself.
    pub kennung: String,
}

/// The software producing the message, as the receiving side is to see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Produkt {
    /// Product name, normally `meldewerk`.
    pub name: String,
    /// Manufacturer of the product.
    pub hersteller: String,
    /// Product version, normally the crate version of the service.
    pub version: String,
}

/// Why a message could not be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum XmlError {
    /// A field the schema makes mandatory is absent; carries the JSON path as returned
    /// by [`Geburtsanzeige::missing_for_dispatch`] or [`Geburtsdaten::missing_for_dispatch`]
    /// (or `kopf.*` for header fields).
    #[error("mandatory field missing: {0}")]
    MissingField(&'static str),
    /// A field is present but its value would make the message schema-invalid or
    /// contradicts another field.
    #[error("invalid value in {field}: {reason}")]
    InvalidValue {
        /// JSON path of the offending field (or `kopf.*` for header fields).
        field: &'static str,
        /// Explanation in German, the forms' language, suitable for showing next to the field.
        reason: String,
    },
    /// The underlying XML writer failed.
    #[error("writing XML failed: {0}")]
    Write(String),
}

impl From<std::io::Error> for XmlError {
    fn from(e: std::io::Error) -> Self {
        XmlError::Write(e.to_string())
    }
}
