//! What a court form knows when it is submitted: the input of
//! [`write_uebermittlung`](super::write_uebermittlung). Names follow the memento's fields
//! (spec 03, §2.3); where the schema has its own term, its German term.

use chrono::{DateTime, FixedOffset, NaiveDate};

/// One outgoing `nachricht.gds.uebermittlungSchriftgutobjekte.0005005`: a form's PDF (and any
/// further documents) sent to a court or another recipient about one person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uebermittlung {
    /// The message's own header data.
    pub nachricht: Nachricht,
    /// Who sends (the organisation behind the mailbox account).
    pub absender: Absender,
    /// Who receives.
    pub empfaenger: Empfaenger,
    /// The person the proceeding is about.
    pub betroffener: Betroffener,
    /// The documents sent with the message, the form's PDF first; at least one.
    pub dokumente: Vec<Dokumentangabe>,
    /// The memento's `meldeZeitpunkt`: when the matter was reported. Written as the
    /// `erstellungszeitpunkt` of the first document (the form).
    pub melde_zeitpunkt: Option<DateTime<FixedOffset>>,
}

/// The message's header data that do not come from the form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nachricht {
    /// `eigeneNachrichtenID`: a UUID in its hyphenated form (the schema's pattern); a retry of
    /// the same submission keeps it.
    pub eigene_nachrichten_id: String,
    /// `erstellungszeitpunkt`, written with its offset.
    pub erstellungszeitpunkt: DateTime<FixedOffset>,
}

/// The sender: the organisation whose mailbox account sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Absender {
    /// The organisation's name (`absender.name`).
    pub name: String,
    /// The sender's own case reference (`absender.aktenzeichen`).
    pub aktenzeichen: Option<String>,
    /// The SAFE-ID of the sending account.
    pub safe_id: String,
}

/// The recipient.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Empfaenger {
    /// The recipient's name (`empfaenger.name`), e.g. "Amtsgericht Musterstadt".
    pub name: String,
    /// Court or other recipient (`empfaenger.type`).
    pub art: EmpfaengerArt,
    /// The recipient's SAFE-ID (`empfaenger.safeId`).
    pub safe_id: String,
    /// The court's case reference (`empfaenger.aktenzeichen`); absent for a new matter.
    pub aktenzeichen: Option<String>,
    /// The recipient's postal address (`empfaenger.adresse`).
    pub adresse: Option<Anschrift>,
}

/// The memento's `empfaenger.type`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmpfaengerArt {
    /// A court. Its XJustiz-ID (code list GDS.Gerichte, e.g. `B1101`) when known; the memento
    /// carries none, and without it the court is named as `sonstige` (the schema's free text).
    Gericht {
        /// The court's XJustiz-ID, if known.
        xjustiz_id: Option<String>,
    },
    /// Any other recipient, named as `sonstige`.
    Sonstige,
}

/// A postal address as the forms take it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Anschrift {
    /// Street and house number.
    pub strasse: Option<String>,
    /// Postal code.
    pub plz: Option<String>,
    /// Place.
    pub stadt: Option<String>,
}

/// The person concerned (`betroffener`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Betroffener {
    /// Given name(s).
    pub vorname: Option<String>,
    /// Family name; the schema requires it.
    pub nachname: String,
    /// Date of birth.
    pub geburtsdatum: Option<NaiveDate>,
    /// Marital status.
    pub familienstand: Option<Familienstand>,
    /// Home address.
    pub anschrift: Option<Anschrift>,
    /// Home phone (`anschriftTelefon`).
    pub telefon: Option<String>,
    /// Where the person is now, free text (facility, ward, room).
    pub gegenwaertiger_aufenthalt: Option<String>,
}

/// The memento's four marital states; written as codes of GDS.Familienstand 2.0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Familienstand {
    /// Code `007` "ledig".
    Ledig,
    /// Code `009` "verheiratet".
    Verheiratet,
    /// Code `001` "geschieden oder Ehe aufgehoben".
    Geschieden,
    /// Code `010` "verwitwet".
    Verwitwet,
}

impl Familienstand {
    /// The code of GDS.Familienstand (version 2.0, the one the schema fixes).
    pub fn code(self) -> &'static str {
        match self {
            Familienstand::Ledig => "007",
            Familienstand::Verheiratet => "009",
            Familienstand::Geschieden => "001",
            Familienstand::Verwitwet => "010",
        }
    }
}

/// One document sent with the message; its bytes travel as an attachment of the same name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dokumentangabe {
    /// The attachment's file name, as the message references it (`datei/dateiname`).
    pub dateiname: String,
    /// The attachment's MIME type. Checked, but not written: the Grunddatensatz has no element
    /// for it (the transport carries it with the attachment).
    pub mime_type: String,
    /// The document's title (`anzeigename`).
    pub bezeichnung: String,
}
