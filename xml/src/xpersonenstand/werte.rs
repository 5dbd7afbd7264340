//! Value checks for the simple types of the schema closure. The web layer validates
//! formats too, but a memento or a stored draft may bypass it, and an invalid message is
//! only noticed days later by the registry office; so the writer checks again.

use chrono::DateTime;

use super::XmlError;
use crate::formate;

/// A form field counts as filled only with visible content; blank inputs are "missing".
pub(crate) fn gesetzt(wert: &Option<String>) -> Option<&str> {
    wert.as_deref().map(str::trim).filter(|w| !w.is_empty())
}

fn ungueltig(field: &'static str, reason: impl Into<String>) -> XmlError {
    XmlError::InvalidValue {
        field,
        reason: reason.into(),
    }
}

/// `xida:Tagesdatum`: a real calendar date written exactly as `YYYY-MM-DD`.
pub(crate) fn pruefe_tagesdatum(field: &'static str, wert: &str) -> Result<(), XmlError> {
    if !formate::ist_tagesdatum(wert) {
        return Err(ungueltig(
            field,
            format!("'{wert}' ist kein gültiges Datum der Form JJJJ-MM-TT"),
        ));
    }
    Ok(())
}

/// Time of day `HH:mm`. The schema pattern would also admit `A`/`B` in the hour and
/// hours up to 29; the module's contract is a real 24-hour time, so those are refused.
pub(crate) fn pruefe_uhrzeit(field: &'static str, wert: &str) -> Result<(), XmlError> {
    if !formate::ist_uhrzeit(wert) {
        return Err(ungueltig(
            field,
            format!("'{wert}' ist keine Uhrzeit der Form HH:MM"),
        ));
    }
    Ok(())
}

/// `Meldeanschrift.Postleitzahl` admits at most five digits; a German postcode has exactly five,
/// the rule the web layer applies too.
pub(crate) fn pruefe_postleitzahl(field: &'static str, wert: &str) -> Result<(), XmlError> {
    if !formate::ist_postleitzahl(wert) {
        return Err(ungueltig(
            field,
            format!("'{wert}' ist keine fünfstellige Postleitzahl"),
        ));
    }
    Ok(())
}

/// House number split the way `Meldeanschrift` wants it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Hausnummer<'a> {
    /// Numeric part, `Meldeanschrift.Hausnummer` (up to four digits).
    pub(crate) nummer: &'a str,
    /// Suffix such as `a` or `1/2`, `Meldeanschrift.HausnummerBuchstabeZusatzziffer`.
    pub(crate) zusatz: Option<&'a str>,
}

/// Forms take a house number as one text like `12a`; the registry address type stores
/// digits and suffix in separate elements with tight patterns, so split and check here.
pub(crate) fn zerlege_hausnummer<'a>(
    field: &'static str,
    wert: &'a str,
) -> Result<Hausnummer<'a>, XmlError> {
    match formate::hausnummer(wert) {
        Some((nummer, zusatz)) => Ok(Hausnummer { nummer, zusatz }),
        None => Err(ungueltig(
            field,
            format!(
                "'{wert}' ist keine Hausnummer (bis zu vier Ziffern, danach höchstens vier \
                 Buchstaben, Ziffern, '.' oder '/')"
            ),
        )),
    }
}

/// `UhrzeitPersonenstandswesen` as used by 081021: exactly the schema pattern
/// `[0-2][0-9AB]:[0-5][0-9]`. Unlike [`pruefe_uhrzeit`], the letters `A` and `B` in the
/// second position of the hour and hours up to 29 are admitted, because the `birthdata`
/// contract admits them.
pub(crate) fn pruefe_uhrzeit_personenstand(
    field: &'static str,
    wert: &str,
) -> Result<(), XmlError> {
    if !formate::ist_uhrzeit_xpersonenstand(wert) {
        return Err(ungueltig(
            field,
            format!("'{wert}' entspricht nicht dem Uhrzeitmuster [0-2][0-9AB]:[0-5][0-9]"),
        ));
    }
    Ok(())
}

/// `xs:dateTime` as a JSON date-time (RFC 3339): `YYYY-MM-DDThh:mm:ss`, optional fraction,
/// then `Z` or an offset. Lower-case `t`/`z`, a space separator and the leap second `60`,
/// which RFC 3339 parsers admit, are refused because `xs:dateTime` does not admit them.
pub(crate) fn pruefe_zeitpunkt(field: &'static str, wert: &str) -> Result<(), XmlError> {
    if !formate::ist_zeitpunkt_mit_offset(wert) {
        return Err(ungueltig(
            field,
            format!("'{wert}' ist kein Zeitpunkt wie 2026-11-02T10:15:00+01:00"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tagesdatum() {
        assert!(pruefe_tagesdatum("f", "2024-02-29").is_ok());
        for falsch in [
            "2023-02-29",
            "2024-2-09",
            "24-02-09",
            "2024-02-09T00",
            "heute",
            "",
        ] {
            assert!(pruefe_tagesdatum("f", falsch).is_err(), "{falsch}");
        }
    }

    #[test]
    fn uhrzeit() {
        for gut in ["00:00", "09:05", "23:59"] {
            assert!(pruefe_uhrzeit("f", gut).is_ok(), "{gut}");
        }
        for falsch in [
            "24:00", "1A:00", "9:05", "09:60", "09-05", "+9:05", "09:05:00", "",
        ] {
            assert!(pruefe_uhrzeit("f", falsch).is_err(), "{falsch}");
        }
    }

    #[test]
    fn postleitzahl() {
        assert!(pruefe_postleitzahl("f", "10117").is_ok());
        assert!(pruefe_postleitzahl("f", "101170").is_err());
        assert!(pruefe_postleitzahl("f", "D-101").is_err());
    }

    #[test]
    fn hausnummer() {
        assert_eq!(
            zerlege_hausnummer("f", "12").unwrap(),
            Hausnummer {
                nummer: "12",
                zusatz: None
            }
        );
        assert_eq!(
            zerlege_hausnummer("f", "12 b").unwrap(),
            Hausnummer {
                nummer: "12",
                zusatz: Some("b")
            }
        );
        assert_eq!(
            zerlege_hausnummer("f", "3 1/2").unwrap().zusatz,
            Some("1/2")
        );
        for falsch in ["a", "12345", "12-14", "7 Hinterhaus"] {
            assert!(zerlege_hausnummer("f", falsch).is_err(), "{falsch}");
        }
    }

    #[test]
    fn uhrzeit_personenstand() {
        for gut in ["00:00", "23:59", "1A:30", "2B:05", "29:59"] {
            assert!(pruefe_uhrzeit_personenstand("f", gut).is_ok(), "{gut}");
        }
        for falsch in [
            "30:00", "1C:00", "9:05", "09:60", "09-05", "09:05:00", "1a:00", "",
        ] {
            assert!(
                pruefe_uhrzeit_personenstand("f", falsch).is_err(),
                "{falsch}"
            );
        }
    }

    #[test]
    fn zeitpunkt() {
        for gut in [
            "2026-11-02T10:15:00Z",
            "2026-11-02T10:15:00.123+01:00",
            "2024-02-29T23:59:59-05:30",
        ] {
            assert!(pruefe_zeitpunkt("f", gut).is_ok(), "{gut}");
        }
        for falsch in [
            "2026-11-02",
            "2026-11-02T10:15:00",
            "2026-11-02 10:15:00Z",
            "2026-11-02t10:15:00Z",
            "2026-11-02T10:15:00z",
            "2023-02-29T10:15:00Z",
            "2026-11-02T10:15:60Z",
            "2026-11-02T10:15Z",
            "",
        ] {
            assert!(pruefe_zeitpunkt("f", falsch).is_err(), "{falsch}");
        }
    }
}

/// Local date (`YYYY-MM-DD`) and time of day (`HH:mm`) of a date-time with offset.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct OrtsZeitpunkt {
    /// Calendar date in the offset the value was given in.
    pub(crate) tag: String,
    /// Time of day in the offset the value was given in; seconds are dropped because the
    /// registry's time types stop at minutes.
    pub(crate) uhrzeit: String,
}

/// Date-time with offset as the contract defines it (`YYYY-MM-DDThh:mm:ss±hh:mm`, RFC 3339;
/// `Z` counts as the offset `+00:00`). A value without offset is refused: the registry
/// records the local date and time of death, which is only defined with the offset.
pub(crate) fn zerlege_zeitpunkt(
    field: &'static str,
    wert: &str,
) -> Result<OrtsZeitpunkt, XmlError> {
    let form_ok = formate::ist_zeitpunkt_mit_offset(wert);
    match DateTime::parse_from_rfc3339(wert) {
        Ok(zeitpunkt) if form_ok => Ok(OrtsZeitpunkt {
            tag: zeitpunkt.format("%Y-%m-%d").to_string(),
            uhrzeit: zeitpunkt.format("%H:%M").to_string(),
        }),
        _ => Err(ungueltig(
            field,
            format!("'{wert}' ist kein Zeitpunkt mit Zeitzone der Form JJJJ-MM-TTThh:mm:ss+hh:mm"),
        )),
    }
}

#[cfg(test)]
mod zeitpunkt_tests {
    use super::*;

    #[test]
    fn zeitpunkt_mit_offset() {
        assert_eq!(
            zerlege_zeitpunkt("f", "2026-11-20T14:30:59+01:00").unwrap(),
            OrtsZeitpunkt {
                tag: "2026-11-20".into(),
                uhrzeit: "14:30".into()
            }
        );
        // The local date of the given offset counts, not the UTC date.
        assert_eq!(
            zerlege_zeitpunkt("f", "2026-11-20T00:15:00+02:00")
                .unwrap()
                .tag,
            "2026-11-20"
        );
        assert!(zerlege_zeitpunkt("f", "2026-11-20T14:30:00Z").is_ok());
        for falsch in [
            "2026-11-20T14:30:00",
            "2026-11-20 14:30:00+01:00",
            "2026-11-20t14:30:00+01:00",
            "2026-11-20T14:30+01:00",
            "2026-02-30T14:30:00+01:00",
            "2026-11-20",
            "",
        ] {
            assert!(zerlege_zeitpunkt("f", falsch).is_err(), "{falsch}");
        }
    }
}
