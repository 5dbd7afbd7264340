//! What every civil-registry module needs to address an XPersonenstand message: the header
//! addresses from configuration (`[xpersonenstand]`) and the header built from them.

use chrono::Utc;
use meldewerk_xml::xpersonenstand::{Behoerde, Erreichbarkeit, Nachrichtenkopf, Produkt};
use serde::Deserialize;

/// Addresses written into the header of every XPersonenstand message (`[xpersonenstand]`).
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct XPersonenstandSettings {
    /// DVDV identifier of the receiving civil registry office (`leser`).
    pub standesamt_kennung: String,
    /// Name of the receiving civil registry office.
    pub standesamt_name: String,
    /// DVDV identifier of this portal (`autor`).
    pub portal_kennung: String,
    /// Name of this portal.
    pub portal_name: String,
    /// Contact channel of this portal, code of the XÖV list `erreichbarkeit` (`01` e-mail).
    pub portal_kanal: String,
    /// Contact address on that channel, for queries by the registry office.
    pub portal_kontakt: String,
    /// Whether messages carry `test="test"` (marks them as test messages for the office).
    pub test_messages: bool,
}

impl Default for XPersonenstandSettings {
    fn default() -> Self {
        XPersonenstandSettings {
            standesamt_kennung: "psw:11000000".into(),
            standesamt_name: "Standesamt (simuliert)".into(),
            portal_kennung: "sap:000000001".into(),
            portal_name: "meldewerk".into(),
            portal_kanal: "01".into(),
            portal_kontakt: "poststelle@meldewerk.invalid".into(),
            test_messages: true,
        }
    }
}

impl XPersonenstandSettings {
    /// A fresh header (new message UUID, current time). `standesamt_kennung` names another office
    /// than the configured one when a request chose it; its configured name would then be wrong,
    /// so that office is named by its identifier.
    pub fn header(&self, standesamt_kennung: Option<&str>) -> Nachrichtenkopf {
        Nachrichtenkopf {
            nachrichten_uuid: uuid::Uuid::new_v4(),
            erstellungszeitpunkt: Utc::now(),
            leser: match standesamt_kennung {
                Some(kennung) => Behoerde {
                    kennung: kennung.to_owned(),
                    name: format!("Standesamt {kennung}"),
                    erreichbarkeit: Vec::new(),
                },
                None => Behoerde {
                    kennung: self.standesamt_kennung.clone(),
                    name: self.standesamt_name.clone(),
                    erreichbarkeit: Vec::new(),
                },
            },
            autor: Behoerde {
                kennung: self.portal_kennung.clone(),
                name: self.portal_name.clone(),
                erreichbarkeit: vec![Erreichbarkeit {
                    kanal: self.portal_kanal.clone(),
                    kennung: self.portal_kontakt.clone(),
                }],
            },
            produkt: Produkt {
                name: "meldewerk".into(),
                hersteller: "meldewerk".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            test: self.test_messages,
        }
    }
}
