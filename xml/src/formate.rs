//! The formats of dates, times and postcodes, written once: the web layer validates memento
//! requests and form input with these functions, and the message writers check the same values
//! again with them before a message leaves (a stored draft may bypass the web layer, and an
//! invalid message is only noticed days later by the receiving office).

/// `YYYY-MM-DD` naming a real calendar day (`xs:date` without time zone, `xida:Tagesdatum`).
/// The year `0000` is refused, as `xs:date` and FHIR's `date` refuse it.
/// Read by hand: chrono's format-string parser was a visible share of every memento request, and
/// it would also accept single-digit months and days.
pub fn ist_tagesdatum(wert: &str) -> bool {
    let b = wert.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    match (zahl(&b[0..4]), zahl(&b[5..7]), zahl(&b[8..10])) {
        (Some(y), Some(m), Some(d)) => {
            y > 0 && chrono::NaiveDate::from_ymd_opt(y as i32, m, d).is_some()
        }
        _ => false,
    }
}

/// Time of day `HH:mm` on the 24-hour clock (`00:00` to `23:59`).
pub fn ist_uhrzeit(wert: &str) -> bool {
    let b = wert.as_bytes();
    b.len() == 5
        && b[2] == b':'
        && zahl(&b[0..2]).is_some_and(|h| h < 24)
        && zahl(&b[3..5]).is_some_and(|m| m < 60)
}

/// The time pattern of the XPersonenstand schema, `^[0-2][0-9AB]:[0-5][0-9]$`: the letters `A`
/// and `B` are admitted in the second position of the hour.
pub fn ist_uhrzeit_xpersonenstand(wert: &str) -> bool {
    let b = wert.as_bytes();
    b.len() == 5
        && (b'0'..=b'2').contains(&b[0])
        && (b[1].is_ascii_digit() || b[1] == b'A' || b[1] == b'B')
        && b[2] == b':'
        && (b'0'..=b'5').contains(&b[3])
        && b[4].is_ascii_digit()
}

/// A German postcode: exactly five digits.
pub fn ist_postleitzahl(wert: &str) -> bool {
    wert.len() == 5 && wert.bytes().all(|b| b.is_ascii_digit())
}

/// A date-time with an explicit offset, `YYYY-MM-DDThh:mm:ss±hh:mm` (or `Z`), seconds fractions
/// allowed, as RFC 3339 and `xs:dateTime` with time zone have it. Lower-case `t`/`z`, a space
/// separator and the leap second `60`, which RFC 3339 parsers admit, are refused because
/// `xs:dateTime` does not admit them.
pub fn ist_zeitpunkt_mit_offset(wert: &str) -> bool {
    let b = wert.as_bytes();
    b.len() >= 20
        && b[10] == b'T'
        && !wert.contains(['t', 'z'])
        && ist_tagesdatum(&wert[..10])
        && b[17..19].iter().all(u8::is_ascii_digit)
        && &wert[17..19] != "60"
        && chrono::DateTime::parse_from_rfc3339(wert).is_ok()
}

/// A house number as the registry's address type (`Meldeanschrift`) stores it, split into its
/// number (up to four digits) and an optional suffix of at most four letters, digits, `.`, `/`
/// or spaces (`12`, `12a`, `3 1/2`); `None` for anything else (`12-14`, `7 Hinterhaus`). Forms
/// take the house number as one text, so the web layer checks it with this rule too.
pub fn hausnummer(wert: &str) -> Option<(&str, Option<&str>)> {
    let ende = wert
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(wert.len());
    let (nummer, rest) = wert.split_at(ende);
    let zusatz = rest.trim();
    let zusatz_ok = zusatz.chars().count() <= 4
        && zusatz
            .chars()
            .all(|c| c.is_alphabetic() || c.is_ascii_digit() || matches!(c, '.' | '/' | ' '));
    (!nummer.is_empty() && nummer.len() <= 4 && zusatz_ok)
        .then_some((nummer, (!zusatz.is_empty()).then_some(zusatz)))
}

fn zahl(ziffern: &[u8]) -> Option<u32> {
    ziffern.iter().try_fold(0u32, |n, d| {
        d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tagesdatum() {
        assert!(ist_tagesdatum("2024-02-29") && ist_tagesdatum("2026-11-20"));
        assert!(!ist_tagesdatum("2023-02-29") && !ist_tagesdatum("2024-2-01"));
        assert!(!ist_tagesdatum("2024-02-30") && !ist_tagesdatum("20240201"));
        // No year zero in xs:date or FHIR (found by fhir/tests/bundle_properties.rs).
        assert!(!ist_tagesdatum("0000-01-01") && ist_tagesdatum("0001-01-01"));
    }

    #[test]
    fn uhrzeiten() {
        assert!(ist_uhrzeit("00:00") && ist_uhrzeit("23:59"));
        assert!(!ist_uhrzeit("24:00") && !ist_uhrzeit("9:00") && !ist_uhrzeit("09:60"));
        assert!(!ist_uhrzeit("0a:00"));
        assert!(ist_uhrzeit_xpersonenstand("1A:30") && ist_uhrzeit_xpersonenstand("29:59"));
        assert!(ist_uhrzeit_xpersonenstand("0B:00") && ist_uhrzeit_xpersonenstand("23:59"));
        assert!(!ist_uhrzeit_xpersonenstand("30:00") && !ist_uhrzeit_xpersonenstand("1C:00"));
        assert!(!ist_uhrzeit_xpersonenstand("12:60") && !ist_uhrzeit_xpersonenstand("12:3"));
    }

    #[test]
    fn postleitzahl() {
        assert!(ist_postleitzahl("10117") && ist_postleitzahl("01067"));
        assert!(!ist_postleitzahl("1011") && !ist_postleitzahl("101170"));
        assert!(!ist_postleitzahl("1011a") && !ist_postleitzahl("10 17"));
    }

    #[test]
    fn zeitpunkt() {
        assert!(ist_zeitpunkt_mit_offset("2026-11-20T14:30:00+01:00"));
        assert!(ist_zeitpunkt_mit_offset("2026-11-20T14:30:00Z"));
        assert!(ist_zeitpunkt_mit_offset("2026-11-20T14:30:00.5-03:30"));
        assert!(!ist_zeitpunkt_mit_offset("2026-11-20T14:30:00"));
        assert!(!ist_zeitpunkt_mit_offset("2026-11-20 14:30:00+01:00"));
        assert!(!ist_zeitpunkt_mit_offset("2026-02-30T14:30:00+01:00"));
        assert!(!ist_zeitpunkt_mit_offset("2026-11-20t14:30:00z"));
        assert!(!ist_zeitpunkt_mit_offset("2026-12-31T23:59:60Z"));
    }
}
