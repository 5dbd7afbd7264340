//! Value checks for the simple types of the schema closure. The web layer validates
//! formats too, but a memento or a stored draft may bypass it, and an invalid message is
//! only noticed days later by the registry office; so the writer checks again.

use chrono::{DateTime, NaiveDate};

use super::XmlError;

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
    let b = wert.as_bytes();
    let form_ok = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    // chrono alone would also accept single-digit months and days.
    if !form_ok || NaiveDate::parse_from_str(wert, "%Y-%m-%d").is_err() {
        return Err(ungueltig(
            field,
            format!("'{wert}' is not a calendar date in the form YYYY-MM-DD"),
        ));
    }
    Ok(())
}

/// Time of day `HH:mm`. The schema pattern would also admit `A`/`B` in the hour and
/// hours up to 29; the module's contract is a real 24-hour time, so those are refused.
pub(crate) fn pruefe_uhrzeit(field: &'static str, wert: &str) -> Result<(), XmlError> {
    let b = wert.as_bytes();
    let ziffern = |i: usize, j: usize| -> Option<u32> {
        b[i..j]
            .iter()
            .all(u8::is_ascii_digit)
            .then(|| wert[i..j].parse().ok())
            .flatten()
    };
    let ok = b.len() == 5
        && b[2] == b':'
        && matches!(ziffern(0, 2), Some(h) if h < 24)
        && matches!(ziffern(3, 5), Some(m) if m < 60);
    if !ok {
        return Err(ungueltig(
            field,
            format!("'{wert}' is not a time of day in the form HH:mm"),
        ));
    }
    Ok(())
}

/// `Meldeanschrift.Postleitzahl`: at most five characters, digits (and spaces) only.
pub(crate) fn pruefe_postleitzahl(field: &'static str, wert: &str) -> Result<(), XmlError> {
    if wert.chars().count() > 5 || !wert.chars().all(|c| c.is_ascii_digit() || c == ' ') {
        return Err(ungueltig(
            field,
            format!("'{wert}' is not a postal code of at most five digits"),
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
    let ende = wert
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(wert.len());
    let (nummer, rest) = wert.split_at(ende);
    let zusatz = rest.trim();
    let zusatz_ok = zusatz.chars().count() <= 4
        && zusatz
            .chars()
            .all(|c| c.is_alphabetic() || c.is_ascii_digit() || matches!(c, '.' | '/' | ' '));
    if nummer.is_empty() || nummer.len() > 4 || !zusatz_ok {
        return Err(ungueltig(
            field,
            format!(
                "'{wert}' is not a house number (up to four digits, optionally followed by \
                 up to four letters, digits, '.' or '/')"
            ),
        ));
    }
    Ok(Hausnummer {
        nummer,
        zusatz: (!zusatz.is_empty()).then_some(zusatz),
    })
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
    let b = wert.as_bytes();
    // chrono also admits a lowercase `t` or a space as separator; the contract does not.
    let form_ok = b.len() >= 20 && b[10] == b'T' && pruefe_tagesdatum(field, &wert[..10]).is_ok();
    match DateTime::parse_from_rfc3339(wert) {
        Ok(zeitpunkt) if form_ok => Ok(OrtsZeitpunkt {
            tag: zeitpunkt.format("%Y-%m-%d").to_string(),
            uhrzeit: zeitpunkt.format("%H:%M").to_string(),
        }),
        _ => Err(ungueltig(
            field,
            format!(
                "'{wert}' is not a date-time with offset in the form YYYY-MM-DDThh:mm:ss+hh:mm"
            ),
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
