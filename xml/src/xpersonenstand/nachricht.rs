//! [`Nachricht`]: what every XPersonenstand message content offers its senders, so that one
//! piece of code can check and write any of them.

use super::{
    write_geburt_081020, write_geburt_081021, write_sterbefall_084020, write_sterbefall_084021,
    write_sterbefall_084040, Geburtsanzeige, Geburtsdaten, Nachrichtenkopf, SterbefallBestatter,
    SterbefallEinrichtung, Todesbescheinigung, XmlError,
};

/// The content of one XPersonenstand message type.
pub trait Nachricht: Send + Sync + 'static {
    /// Dotted JSON paths of the fields the schema makes mandatory that are still missing.
    fn pflichtfelder_offen(&self) -> Vec<&'static str>;
    /// Writes the message under `kopf`.
    fn schreibe(&self, kopf: &Nachrichtenkopf) -> Result<String, XmlError>;
    /// A receiving office other than the header's, when the content names one.
    fn standesamt_kennung(&self) -> Option<&str> {
        None
    }
}

impl Nachricht for Geburtsanzeige {
    fn pflichtfelder_offen(&self) -> Vec<&'static str> {
        self.missing_for_dispatch()
    }

    fn schreibe(&self, kopf: &Nachrichtenkopf) -> Result<String, XmlError> {
        write_geburt_081020(kopf, self)
    }

    fn standesamt_kennung(&self) -> Option<&str> {
        self.standesamt_kennung.as_deref()
    }
}

/// Implements [`Nachricht`] for a content type with its writer.
macro_rules! nachricht {
    ($($typ:ty => $schreibe:path),* $(,)?) => {
        $(impl Nachricht for $typ {
            fn pflichtfelder_offen(&self) -> Vec<&'static str> {
                self.missing_for_dispatch()
            }

            fn schreibe(&self, kopf: &Nachrichtenkopf) -> Result<String, XmlError> {
                $schreibe(kopf, self)
            }
        })*
    };
}

nachricht! {
    Geburtsdaten => write_geburt_081021,
    SterbefallEinrichtung => write_sterbefall_084020,
    SterbefallBestatter => write_sterbefall_084021,
    Todesbescheinigung => write_sterbefall_084040,
}
