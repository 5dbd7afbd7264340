//! The three death-notice messages: reading a slot into its model, and writing
//! `portal2StA.Sterbefall.084020`, `.084021` or `.084040`.

use meldewerk_xml::xpersonenstand::{
    Nachricht, Nachrichtenkopf, SterbefallBestatter, SterbefallEinrichtung, Todesbescheinigung,
    XmlError,
};
use serde_json::{Map, Value};

use crate::xpersonenstand::Content;

/// The slot names, in the order of the module's forms.
pub(super) const SLOTS: [&str; 3] = ["Einrichtung", "Bestatter", "Todesbescheinigung"];

/// One death notice: the content of the slot that was given, as its typed model (the
/// undertaker's, much the largest, boxed).
pub(super) enum Meldung {
    /// Slot `Einrichtung`, message 084020.
    Einrichtung(SterbefallEinrichtung),
    /// Slot `Bestatter`, message 084021.
    Bestatter(Box<SterbefallBestatter>),
    /// Slot `Todesbescheinigung`, message 084040.
    Todesbescheinigung(Todesbescheinigung),
}

/// The slot `content` (a request, a memento or a form's content) carries, when it carries
/// exactly one.
pub(super) fn slot_in(content: &Value) -> Option<&'static str> {
    let mut given = SLOTS
        .into_iter()
        .filter(|slot| content.get(slot).is_some_and(Value::is_object));
    let slot = given.next()?;
    given.next().is_none().then_some(slot)
}

/// In the form a yes/no is a checkbox, which browsers send only when it is ticked. Where the
/// message needs the answer once a time is given (`todeszeit/@exakt`, `uhrzeit/@exakt`), an
/// unticked box beside a given time therefore means "not exact".
fn unticked_means_no(slot: &mut Map<String, Value>) {
    let pairs: [(&[&str], &str, &str); 2] = [
        (
            &["sterbefall", "todeszeitpunkt", "todestag"],
            "zeitpunkt",
            "uhrzeitExakt",
        ),
        (&["angabenLeichenschau"], "uhrzeit", "uhrzeitExakt"),
    ];
    for (at, time, flag) in pairs {
        let group = at.iter().try_fold(&mut *slot, |node, step| {
            node.get_mut(*step)?.as_object_mut()
        });
        if let Some(group) = group {
            if group.get(time).is_some_and(Value::is_string) && !group.contains_key(flag) {
                group.insert(flag.to_owned(), Value::Bool(false));
            }
        }
    }
}

impl Content for Meldung {
    /// Reads the slot of a form (`prefix` `Einrichtung.`) or, for a stored submission, the one
    /// slot it carries; an absent slot is an empty one (a form posted with every input empty).
    fn read(content: &Value, prefix: &str) -> Result<Meldung, String> {
        let slot = match prefix.strip_suffix('.') {
            Some(slot) => slot,
            None => slot_in(content).ok_or("the content carries no single report slot")?,
        };
        let mut object = content
            .get(slot)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        unticked_means_no(&mut object);
        let value = Value::Object(object);
        let read = match slot {
            "Einrichtung" => serde_json::from_value(value).map(Meldung::Einrichtung),
            "Bestatter" => serde_json::from_value(value).map(Meldung::Bestatter),
            _ => serde_json::from_value(value).map(Meldung::Todesbescheinigung),
        };
        read.map_err(|e| e.to_string())
    }
}

impl Nachricht for Meldung {
    fn pflichtfelder_offen(&self) -> Vec<&'static str> {
        match self {
            Meldung::Einrichtung(m) => m.missing_for_dispatch(),
            Meldung::Bestatter(m) => m.missing_for_dispatch(),
            Meldung::Todesbescheinigung(m) => m.missing_for_dispatch(),
        }
    }

    /// The death-notice contract names no registry office, so the configured one receives it.
    fn schreibe(&self, kopf: &Nachrichtenkopf) -> Result<String, XmlError> {
        match self {
            Meldung::Einrichtung(m) => m.schreibe(kopf),
            Meldung::Bestatter(m) => m.schreibe(kopf),
            Meldung::Todesbescheinigung(m) => m.schreibe(kopf),
        }
    }
}
