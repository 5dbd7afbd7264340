//! Message `portal2StA.Geburt.081021`: the parents' supplementary data to the birth notice
//! of an institution (module `birthdata`).
//!
//! Element order and namespace qualification follow the element declaration in
//! `xpersonenstand-nachrichten-portale.xsd`: elements declared in the XPersonenstand
//! schema are qualified (`xpsw:`), everything inherited from the XÖV/XInneres building
//! blocks (header, addresses, contact channels, authority, code and name children) is
//! unqualified.

mod modell;
mod pfade;
mod pflichtfelder;
mod schreiben;

pub use modell::{
    AllgemeinerName, AngabenEhe, AngabenElternteil2, AngabenEreignis, AngabenGeburt, AngabenMutter,
    AnschriftInland, BehoerdeMitAnschrift, EreignisortErweitert, Geburtsdaten, Geschlecht,
    InlandsanschriftGebaeude, InlandsanschriftPostfach, Kontakt, Neugeborenes,
    PersonNameVeraenderung, PostalischeInlandsanschrift, Staatsangehoerigkeit, Urkundenanforderung,
    VorangegangenesKind, Vorgangsereignis, Vorgangsidentifikation,
};

use super::header::{schreibe_kopf, schreibe_wurzel_start, Nachrichtentyp};
use super::xml_out::XmlOut;
use super::{Nachrichtenkopf, XmlError};

const TYP: Nachrichtentyp = Nachrichtentyp {
    code: "081021",
    name: "portal2StA.Geburt.081021",
};

/// Writes the parents' supplementary birth data as XPersonenstand 26.11 message 081021
/// (UTF-8, indented).
///
/// Fails with [`XmlError::MissingField`] for the first path of
/// [`Geburtsdaten::missing_for_dispatch`] or a missing header field, and with
/// [`XmlError::InvalidValue`] for values the schema would reject (dates, date-times,
/// times, postal codes, house numbers, code values, counts below their minimum, characters
/// outside DIN 91379), for choices with both branches given, for `false` in a field that
/// only admits `true`, and for `ehe` without `elternVerheiratet: true`.
pub fn write_geburt_081021(
    kopf: &Nachrichtenkopf,
    daten: &Geburtsdaten,
) -> Result<String, XmlError> {
    if let Some(pfad) = daten.missing_for_dispatch().first() {
        return Err(XmlError::MissingField(pfad));
    }
    pruefe_widersprueche(daten)?;

    let mut out = XmlOut::new()?;
    schreibe_wurzel_start(&mut out, &TYP, kopf)?;
    schreibe_kopf(&mut out, &TYP, kopf, None)?;
    schreiben::schreibe_inhalt(&mut out, daten)?;
    out.end(&format!("xpsw:{}", TYP.name))?;
    out.fertig()
}

fn ungueltig(field: &'static str, reason: &str) -> XmlError {
    XmlError::InvalidValue {
        field,
        reason: reason.to_owned(),
    }
}

/// Refuses `false` where the schema declares `fixed="true"`: the contract admits only
/// `true`, and absence is the way to say no.
fn nur_wahr(wert: Option<bool>, field: &'static str) -> Result<(), XmlError> {
    if wert == Some(false) {
        return Err(ungueltig(
            field,
            "nur true ist zulässig; sonst die Angabe weglassen",
        ));
    }
    Ok(())
}

/// Cross-field rules; value formats are checked while writing.
fn pruefe_widersprueche(d: &Geburtsdaten) -> Result<(), XmlError> {
    nur_wahr(d.eltern_verheiratet, "elternVerheiratet")?;
    nur_wahr(d.zustimmung_elterngeldstelle, "zustimmungElterngeldstelle")?;
    if d.ehe.as_ref().is_some_and(|e| e.angegeben()) && d.eltern_verheiratet != Some(true) {
        return Err(ungueltig(
            "ehe",
            "Angaben zur Ehe sind nur zulässig, wenn die Eltern verheiratet sind",
        ));
    }
    if d.mutter.as_ref().and_then(|m| m.anzahl_kinder) == Some(0) {
        return Err(ungueltig("mutter.anzahlKinder", "muss mindestens 1 sein"));
    }
    if d.ehe.as_ref().and_then(|e| e.kinder_der_ehe) == Some(0) {
        return Err(ungueltig("ehe.kinderDerEhe", "muss mindestens 1 sein"));
    }
    Ok(())
}
