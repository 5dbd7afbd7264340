//! Safe stored names for a message's attachments: a sender's names are never trusted.
//!
//! The rule (docs/decisions.md): keep the last path component (split on `/` and `\`), replace
//! control characters and the characters Windows refuses (`<>:"|?*`, which also breaks a drive
//! letter `C:`) with `_`, trim spaces and dots at both ends (no `..`, no hidden or
//! trailing-dot names), prefix `_` to Windows device names (`CON`, `NUL`, `COM1`, …), cut the
//! base to [`MAX_BASE_CHARS`] characters keeping a short extension, fall back to `attachment`
//! when nothing is left, and number repeats case-insensitively as `name (2).pdf`. The two
//! reserved names of the archive itself count as taken from the start.

use std::collections::HashSet;

use super::{MESSAGE_FILE, METADATA_FILE};

/// Longest cleaned name before numbering, in characters (the number adds at most ` (NNNNN)`).
pub const MAX_BASE_CHARS: usize = 100;
/// Longest extension kept when a name is cut, in characters (with its dot).
const MAX_EXTENSION_CHARS: usize = 16;
/// The name of an attachment whose name has nothing usable left.
const FALLBACK: &str = "attachment";

/// The stored names for `originals`, in the same order: each safe as one ZIP entry name on every
/// platform, unique case-insensitively, and never one of the archive's own files.
pub fn safe_stored_names<S: AsRef<str>>(originals: &[S]) -> Vec<String> {
    let mut taken: HashSet<String> = [MESSAGE_FILE, METADATA_FILE]
        .iter()
        .map(|n| n.to_lowercase())
        .collect();
    originals
        .iter()
        .map(|original| {
            let clean = clean(original.as_ref());
            let (stem, extension) = split_extension(&clean);
            let mut candidate = clean.clone();
            let mut number = 2u64;
            while !taken.insert(candidate.to_lowercase()) {
                candidate = format!("{stem} ({number}){extension}");
                number += 1;
            }
            candidate
        })
        .collect()
}

/// The cleaned base name of one original (before numbering).
fn clean(original: &str) -> String {
    let last = original.rsplit(['/', '\\']).next().unwrap_or("");
    let replaced: String = last
        .chars()
        .map(|c| {
            if c.is_control() || matches!(c, '<' | '>' | ':' | '"' | '|' | '?' | '*') {
                '_'
            } else {
                c
            }
        })
        .collect();
    let trimmed = replaced.trim_matches(|c: char| c == '.' || c.is_whitespace());
    let mut name = cut(trimmed);
    if name.is_empty() {
        name = FALLBACK.to_owned();
    }
    let device = name
        .split('.')
        .next()
        .unwrap_or("")
        .trim_end()
        .to_ascii_uppercase();
    let is_device = matches!(device.as_str(), "CON" | "PRN" | "AUX" | "NUL")
        || (device.len() == 4
            && (device.starts_with("COM") || device.starts_with("LPT"))
            && device.as_bytes()[3].is_ascii_digit());
    if is_device {
        name.insert(0, '_');
    }
    name
}

/// Cuts a name to [`MAX_BASE_CHARS`] characters, keeping a short extension.
fn cut(name: &str) -> String {
    if name.chars().count() <= MAX_BASE_CHARS {
        return name.to_owned();
    }
    let (stem, extension) = split_extension(name);
    let extension = if extension.chars().count() <= MAX_EXTENSION_CHARS {
        extension
    } else {
        ""
    };
    let keep = MAX_BASE_CHARS - extension.chars().count();
    let stem: String = stem.chars().take(keep).collect();
    let stem = stem.trim_end_matches(|c: char| c == '.' || c.is_whitespace());
    format!("{stem}{extension}")
}

/// `("Beschluss", ".pdf")` of `Beschluss.pdf`; no extension for a name without a dot after its
/// first character.
fn split_extension(name: &str) -> (&str, &str) {
    match name.rfind('.') {
        Some(dot) if dot > 0 => name.split_at(dot),
        _ => (name, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_names_are_cleaned() {
        let names = safe_stored_names(&[
            "../../etc/passwd",
            "/abs/path.pdf",
            "C:\\Windows\\x.pdf",
            "D:evil.pdf",
            "a\u{0}b\nc.pdf",
            "",
            "..",
            "CON.txt",
            "xjustiz_nachricht.xml",
            "MELDEWERK.JSON",
        ]);
        assert_eq!(
            names,
            [
                "passwd",
                "path.pdf",
                "x.pdf",
                "D_evil.pdf",
                "a_b_c.pdf",
                "attachment",
                "attachment (2)",
                "_CON.txt",
                "xjustiz_nachricht (2).xml",
                "MELDEWERK (2).JSON",
            ]
        );
    }

    #[test]
    fn duplicates_are_numbered_case_insensitively() {
        let names = safe_stored_names(&["Brief.pdf", "brief.PDF", "Brief.pdf", "Brief (2).pdf"]);
        assert_eq!(
            names,
            [
                "Brief.pdf",
                "brief (2).PDF",
                "Brief (3).pdf",
                "Brief (2) (2).pdf"
            ]
        );
    }

    #[test]
    fn device_names_of_every_kind_are_prefixed_and_only_those() {
        let names = safe_stored_names(&[
            "COM1.txt",
            "lpt9",
            "Aux.log",
            "nul",
            "COM10.txt",
            "COMA.txt",
            "LPT.txt",
            "CONSOLE",
        ]);
        assert_eq!(
            names,
            [
                "_COM1.txt",
                "_lpt9",
                "_Aux.log",
                "_nul",
                "COM10.txt",
                "COMA.txt",
                "LPT.txt",
                "CONSOLE"
            ]
        );
    }

    #[test]
    fn a_cut_name_ends_in_neither_a_dot_nor_a_space() {
        // Cut after 96 characters (100 less the extension), which end in " .".
        let name = format!("{} .{}.pdf", "a".repeat(94), "b".repeat(300));
        assert_eq!(
            safe_stored_names(&[name]),
            [format!("{}.pdf", "a".repeat(94))]
        );
        // An extension longer than 16 characters is not kept.
        let name = format!("{}.{}", "x".repeat(200), "y".repeat(20));
        assert_eq!(safe_stored_names(&[name]), ["x".repeat(100)]);
    }

    #[test]
    fn overlong_names_keep_their_extension() {
        let long = format!("{}.pdf", "ä".repeat(300));
        let name = &safe_stored_names(&[long])[0];
        assert_eq!(name.chars().count(), MAX_BASE_CHARS);
        assert!(name.ends_with("ä.pdf"));
    }
}
