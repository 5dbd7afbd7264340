//! Character repertoire of DIN 91379 "Datentyp C", which every free-text element and
//! attribute of XPersonenstand uses. Checking it here lets the writer name the offending
//! field instead of shipping a message the registry office's schema validation rejects.

/// Returns the first character (or combining sequence start) outside Datentyp C.
pub(crate) fn erstes_unzulaessiges_zeichen(text: &str) -> Option<char> {
    erstes_zeichen_ausserhalb(text, Datentyp::C)
}

/// The DIN 91379 data types XJustiz uses. A ⊂ B ⊂ C share C's combining sequences and differ
/// only in ASCII and Latin-1 characters (and `€`), so each is C less a few ranges. D adds
/// Greek and Cyrillic letters to C but drops the control characters and the no-break space;
/// it is checked as C less those, which refuses those scripts (a narrower, never a wider set).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Datentyp {
    /// Names of natural persons.
    A,
    /// Street and place names.
    B,
    /// Free text in general.
    C,
    /// Names of organisations (checked as described above).
    D,
}

impl Datentyp {
    /// Characters of Datentyp C this type does not allow, as inclusive ranges.
    fn ausgenommen(self) -> &'static [(char, char)] {
        match self {
            Datentyp::A => NICHT_IN_A,
            Datentyp::B => NICHT_IN_B,
            Datentyp::C => &[],
            Datentyp::D => NICHT_IN_D,
        }
    }
}

// Generated from the `datatypeA`, `datatypeB` and `datatypeD` patterns of
// din-norm-91379-datatypes.xsd (2022-08) as their difference to `datatypeC`.
const NICHT_IN_A: &[(char, char)] = &[
    ('\u{0009}', '\u{000A}'),
    ('\u{000D}', '\u{000D}'),
    ('!', '&'),
    ('(', '+'),
    ('/', '@'),
    ('[', '_'),
    ('{', '}'),
    ('\u{00A0}', '\u{00A7}'),
    ('\u{00A9}', '\u{00AC}'),
    ('\u{00AE}', '\u{00B3}'),
    ('\u{00B5}', '\u{00B6}'),
    ('\u{00B8}', '\u{00BF}'),
    ('\u{00D7}', '\u{00D7}'),
    ('\u{00F7}', '\u{00F7}'),
    ('\u{20AC}', '\u{20AC}'),
];
const NICHT_IN_B: &[(char, char)] = &[
    ('\u{0009}', '\u{000A}'),
    ('\u{000D}', '\u{000D}'),
    ('\u{00A0}', '\u{00A0}'),
    ('\u{00A4}', '\u{00A4}'),
    ('\u{00A6}', '\u{00A6}'),
    ('\u{00B8}', '\u{00B8}'),
    ('\u{00BC}', '\u{00BE}'),
];
const NICHT_IN_D: &[(char, char)] = &[
    ('\u{0009}', '\u{000A}'),
    ('\u{000D}', '\u{000D}'),
    ('\u{00A0}', '\u{00A0}'),
];

/// Returns the first character (or combining sequence start) outside the given data type.
pub(crate) fn erstes_zeichen_ausserhalb(text: &str, typ: Datentyp) -> Option<char> {
    let ausgenommen = typ.ausgenommen();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let danach = &rest[c.len_utf8()..];
        // Combining sequences are only normative after specific base letters, so a
        // decomposed "a\u{0301}" is rejected exactly as the schema pattern rejects it. Every
        // sequence is a base letter followed by a combining mark, so only text where one follows
        // is searched for them (the search compares 146 sequences; most text has no such mark).
        if danach.chars().next().is_some_and(ist_kombinationszeichen) {
            if let Some(seq) = SEQUENZEN.iter().find(|s| rest.starts_with(*s)) {
                rest = &rest[seq.len()..];
                continue;
            }
        }
        if !ist_einzelzeichen(c)
            || ausgenommen
                .iter()
                .any(|(von, bis)| (*von..=*bis).contains(&c))
        {
            return Some(c);
        }
        rest = danach;
    }
    None
}

fn ist_einzelzeichen(c: char) -> bool {
    // Printable ASCII first: nearly every character of a German notice.
    (' '..='~').contains(&c)
        || EINZELZEICHEN
            .iter()
            .any(|(von, bis)| (*von..=*bis).contains(&c))
}

/// Combining Diacritical Marks, the block every sequence's second character comes from.
fn ist_kombinationszeichen(c: char) -> bool {
    ('\u{0300}'..='\u{036F}').contains(&c)
}

// Generated from the `datatypeC` pattern of din-norm-91379-datatypes.xsd (2022-08).
const EINZELZEICHEN: &[(char, char)] = &[
    ('\u{0009}', '\u{000A}'),
    ('\u{000D}', '\u{000D}'),
    ('\u{0020}', '\u{007E}'),
    ('\u{00A0}', '\u{00AC}'),
    ('\u{00AE}', '\u{017E}'),
    ('\u{0187}', '\u{0188}'),
    ('\u{018F}', '\u{018F}'),
    ('\u{0197}', '\u{0197}'),
    ('\u{01A0}', '\u{01A1}'),
    ('\u{01AF}', '\u{01B0}'),
    ('\u{01B7}', '\u{01B7}'),
    ('\u{01CD}', '\u{01DC}'),
    ('\u{01DE}', '\u{01DF}'),
    ('\u{01E2}', '\u{01F0}'),
    ('\u{01F4}', '\u{01F5}'),
    ('\u{01F8}', '\u{01FF}'),
    ('\u{0212}', '\u{0213}'),
    ('\u{0218}', '\u{021B}'),
    ('\u{021E}', '\u{021F}'),
    ('\u{0227}', '\u{0233}'),
    ('\u{0259}', '\u{0259}'),
    ('\u{0268}', '\u{0268}'),
    ('\u{0292}', '\u{0292}'),
    ('\u{02B9}', '\u{02BA}'),
    ('\u{02BE}', '\u{02BF}'),
    ('\u{02C8}', '\u{02C8}'),
    ('\u{02CC}', '\u{02CC}'),
    ('\u{1E02}', '\u{1E03}'),
    ('\u{1E06}', '\u{1E07}'),
    ('\u{1E0A}', '\u{1E11}'),
    ('\u{1E17}', '\u{1E17}'),
    ('\u{1E1C}', '\u{1E2B}'),
    ('\u{1E2F}', '\u{1E37}'),
    ('\u{1E3A}', '\u{1E3B}'),
    ('\u{1E40}', '\u{1E49}'),
    ('\u{1E52}', '\u{1E5B}'),
    ('\u{1E5E}', '\u{1E63}'),
    ('\u{1E6A}', '\u{1E6F}'),
    ('\u{1E80}', '\u{1E87}'),
    ('\u{1E8C}', '\u{1E97}'),
    ('\u{1E9E}', '\u{1E9E}'),
    ('\u{1EA0}', '\u{1EF9}'),
    ('\u{2019}', '\u{2019}'),
    ('\u{2021}', '\u{2021}'),
    ('\u{20AC}', '\u{20AC}'),
];

/// Sorted longest first so that the first prefix match is the greedy one.
const SEQUENZEN: &[&str] = &[
    "\u{0043}\u{0328}\u{0306}",
    "\u{004B}\u{035F}\u{0048}",
    "\u{004B}\u{035F}\u{0068}",
    "\u{004C}\u{0325}\u{0304}",
    "\u{0052}\u{0325}\u{0304}",
    "\u{0053}\u{031B}\u{0304}",
    "\u{0063}\u{0328}\u{0306}",
    "\u{006B}\u{035F}\u{0068}",
    "\u{006C}\u{0325}\u{0304}",
    "\u{0072}\u{0325}\u{0304}",
    "\u{0073}\u{031B}\u{0304}",
    "\u{0041}\u{030B}",
    "\u{0043}\u{0300}",
    "\u{0043}\u{0304}",
    "\u{0043}\u{0306}",
    "\u{0043}\u{0308}",
    "\u{0043}\u{0315}",
    "\u{0043}\u{0323}",
    "\u{0043}\u{0326}",
    "\u{0044}\u{0302}",
    "\u{0046}\u{0300}",
    "\u{0046}\u{0304}",
    "\u{0047}\u{0300}",
    "\u{0048}\u{0304}",
    "\u{0048}\u{0326}",
    "\u{0048}\u{0331}",
    "\u{004A}\u{0301}",
    "\u{004A}\u{030C}",
    "\u{004B}\u{0300}",
    "\u{004B}\u{0302}",
    "\u{004B}\u{0304}",
    "\u{004B}\u{0307}",
    "\u{004B}\u{0315}",
    "\u{004B}\u{031B}",
    "\u{004B}\u{0326}",
    "\u{004C}\u{0302}",
    "\u{004C}\u{0325}",
    "\u{004C}\u{0326}",
    "\u{004D}\u{0300}",
    "\u{004D}\u{0302}",
    "\u{004D}\u{0306}",
    "\u{004D}\u{0310}",
    "\u{004E}\u{0302}",
    "\u{004E}\u{0304}",
    "\u{004E}\u{0306}",
    "\u{004E}\u{0326}",
    "\u{0050}\u{0300}",
    "\u{0050}\u{0304}",
    "\u{0050}\u{0315}",
    "\u{0050}\u{0323}",
    "\u{0052}\u{0306}",
    "\u{0052}\u{0325}",
    "\u{0053}\u{0300}",
    "\u{0053}\u{0304}",
    "\u{0053}\u{0331}",
    "\u{0054}\u{0300}",
    "\u{0054}\u{0304}",
    "\u{0054}\u{0308}",
    "\u{0054}\u{0315}",
    "\u{0054}\u{031B}",
    "\u{0055}\u{0307}",
    "\u{005A}\u{0300}",
    "\u{005A}\u{0304}",
    "\u{005A}\u{0306}",
    "\u{005A}\u{0308}",
    "\u{005A}\u{0327}",
    "\u{0061}\u{030B}",
    "\u{0063}\u{0300}",
    "\u{0063}\u{0304}",
    "\u{0063}\u{0306}",
    "\u{0063}\u{0308}",
    "\u{0063}\u{0315}",
    "\u{0063}\u{0323}",
    "\u{0063}\u{0326}",
    "\u{0064}\u{0302}",
    "\u{0066}\u{0300}",
    "\u{0066}\u{0304}",
    "\u{0067}\u{0300}",
    "\u{0068}\u{0304}",
    "\u{0068}\u{0326}",
    "\u{006A}\u{0301}",
    "\u{006B}\u{0300}",
    "\u{006B}\u{0302}",
    "\u{006B}\u{0304}",
    "\u{006B}\u{0307}",
    "\u{006B}\u{0315}",
    "\u{006B}\u{031B}",
    "\u{006B}\u{0326}",
    "\u{006C}\u{0302}",
    "\u{006C}\u{0325}",
    "\u{006C}\u{0326}",
    "\u{006D}\u{0300}",
    "\u{006D}\u{0302}",
    "\u{006D}\u{0306}",
    "\u{006D}\u{0310}",
    "\u{006E}\u{0302}",
    "\u{006E}\u{0304}",
    "\u{006E}\u{0306}",
    "\u{006E}\u{0326}",
    "\u{0070}\u{0300}",
    "\u{0070}\u{0304}",
    "\u{0070}\u{0315}",
    "\u{0070}\u{0323}",
    "\u{0072}\u{0306}",
    "\u{0072}\u{0325}",
    "\u{0073}\u{0300}",
    "\u{0073}\u{0304}",
    "\u{0073}\u{0331}",
    "\u{0074}\u{0300}",
    "\u{0074}\u{0304}",
    "\u{0074}\u{0315}",
    "\u{0074}\u{031B}",
    "\u{0075}\u{0307}",
    "\u{007A}\u{0300}",
    "\u{007A}\u{0304}",
    "\u{007A}\u{0306}",
    "\u{007A}\u{0308}",
    "\u{007A}\u{0327}",
    "\u{00C7}\u{0306}",
    "\u{00DB}\u{0304}",
    "\u{00E7}\u{0306}",
    "\u{00FB}\u{0304}",
    "\u{00FF}\u{0301}",
    "\u{010C}\u{0315}",
    "\u{010C}\u{0323}",
    "\u{010D}\u{0315}",
    "\u{010D}\u{0323}",
    "\u{0113}\u{030D}",
    "\u{012A}\u{0301}",
    "\u{012B}\u{0301}",
    "\u{014D}\u{030D}",
    "\u{017D}\u{0326}",
    "\u{017D}\u{0327}",
    "\u{017E}\u{0326}",
    "\u{017E}\u{0327}",
    "\u{1E32}\u{0304}",
    "\u{1E33}\u{0304}",
    "\u{1E62}\u{0304}",
    "\u{1E63}\u{0304}",
    "\u{1E6C}\u{0304}",
    "\u{1E6D}\u{0304}",
    "\u{1EA0}\u{0308}",
    "\u{1EA1}\u{0308}",
    "\u{1ECC}\u{0308}",
    "\u{1ECD}\u{0308}",
    "\u{1EE4}\u{0304}",
    "\u{1EE4}\u{0308}",
    "\u{1EE5}\u{0304}",
    "\u{1EE5}\u{0308}",
];

#[cfg(test)]
mod tests {
    use super::erstes_unzulaessiges_zeichen as pruefe;

    #[test]
    fn erlaubt_deutsche_texte_und_xml_sonderzeichen() {
        assert_eq!(
            pruefe("Müller-Lüdenscheidt & Söhne <\"Straße\"> 'ẞ' €"),
            None
        );
        assert_eq!(pruefe(""), None);
    }

    #[test]
    fn jede_sequenz_ist_basiszeichen_mit_kombinationszeichen() {
        // What the search's shortcut relies on.
        for seq in super::SEQUENZEN {
            let zweites = seq.chars().nth(1).unwrap();
            assert!(super::ist_kombinationszeichen(zweites), "{seq:?}");
        }
    }

    #[test]
    fn erlaubt_normative_kombinationssequenzen() {
        assert_eq!(pruefe("C\u{0300}"), None);
        assert_eq!(pruefe("L\u{0325}\u{0304}"), None);
    }

    #[test]
    fn lehnt_fremde_schriften_und_lose_kombinationszeichen_ab() {
        assert_eq!(pruefe("Ωmega"), Some('Ω'));
        assert_eq!(pruefe("a\u{0301}"), Some('\u{0301}'));
        assert_eq!(pruefe("x\u{0000}"), Some('\u{0000}'));
        assert_eq!(pruefe("🙂"), Some('🙂'));
    }

    #[test]
    fn namen_strassen_und_organisationen_haben_ihre_eigenen_zeichen() {
        use super::{erstes_zeichen_ausserhalb as in_typ, Datentyp};
        assert_eq!(in_typ("Jörg Müller-Weiß d'Arc", Datentyp::A), None);
        assert_eq!(in_typ("Müller & Söhne", Datentyp::A), Some('&'));
        assert_eq!(in_typ("Anna2", Datentyp::A), Some('2'));
        assert_eq!(in_typ("Hauptstraße 5 <Hinterhaus>", Datentyp::B), None);
        assert_eq!(in_typ("Gasse ½", Datentyp::B), Some('½'));
        assert_eq!(in_typ("Verein <&> e. V. €", Datentyp::D), None);
        assert_eq!(in_typ("Zeile\nZeile", Datentyp::D), Some('\n'));
        assert_eq!(in_typ("Zeile\nZeile", Datentyp::C), None);
    }
}
