//! Text for the builtin Helvetica fonts: WinAnsi encoding, glyph widths and line wrapping.
//!
//! The builtin fonts need no embedding (small, deterministic output) but only speak a single-byte
//! encoding; WinAnsiEncoding (Windows-1252) is the one that covers German.

/// Splits `text` into WinAnsi-encoded lines no wider than `max_width`: at spaces where possible,
/// inside a word when the word alone is too wide (hex digests, UUIDs, references), a glyph
/// alone wider than the line on a line of its own. More than `max_lines` lines are cut, the last
/// one ending in an ellipsis. Always at least one (maybe empty) line.
pub(super) fn wrap(
    text: &str,
    size: f32,
    bold: bool,
    max_width: f32,
    max_lines: usize,
) -> Vec<Vec<u8>> {
    let bytes = to_win_ansi(text);
    let fits = |line: &[u8]| text_width(line, size, bold) <= max_width;

    let mut lines: Vec<Vec<u8>> = Vec::new();
    let mut rest: &[u8] = &bytes;
    // One line beyond the cap is enough to know that the text is cut; wrapping the rest of an
    // absurdly long text would only cost time.
    while !rest.is_empty() && lines.len() <= max_lines {
        // The longest prefix that fits, its width summed as it grows (widths only add up, so
        // the first byte that does not fit ends it): measuring every prefix anew made a long
        // paragraph cost the square of its length.
        let mut units = 0;
        let fitting = rest
            .iter()
            .take_while(|&&byte| {
                units += helvetica_width(byte);
                width(units, size, bold) <= max_width
            })
            .count();
        // At least one byte, so that the loop always makes progress.
        let (line, after) = break_line(rest, fitting.max(1));
        lines.push(line.to_vec());
        rest = after;
    }

    if lines.len() > max_lines {
        lines.truncate(max_lines);
        if let Some(last) = lines.last_mut() {
            // 0x85 is the horizontal ellipsis in WinAnsi.
            last.push(0x85);
            while last.len() > 1 && !fits(last) {
                last.remove(last.len() - 2);
            }
        }
    }
    if lines.is_empty() {
        lines.push(Vec::new());
    }
    lines
}

/// Breaks `rest`, whose first `end` bytes fit on a line and whose byte `end` does not: after its
/// last space up to `end` (a space at `end` included), else at `end`. The line, and what follows
/// the spaces after it. `end` is the whole of `rest` when it all fits, or when a single glyph
/// wider than the line is all that is left.
fn break_line(rest: &[u8], end: usize) -> (&[u8], &[u8]) {
    if end >= rest.len() {
        return (rest, &[]);
    }
    let cut = match rest[..=end].iter().rposition(|&b| b == b' ') {
        Some(space) if space > 0 => space,
        _ => end,
    };
    let (line, mut after) = rest.split_at(cut);
    while after.first() == Some(&b' ') {
        after = &after[1..];
    }
    (line, after)
}

/// Width of WinAnsi-encoded `text` in points. Uses the Helvetica metrics for ASCII; everything
/// else gets a generous width, and bold is over-estimated, because the only use is to keep lines
/// on the page: too wide is harmless, too narrow would run off the edge.
pub(super) fn text_width(text: &[u8], size: f32, bold: bool) -> f32 {
    width(text.iter().map(|&b| helvetica_width(b)).sum(), size, bold)
}

/// Width in points of glyphs measuring `units` (1/1000 em) together.
fn width(units: u32, size: f32, bold: bool) -> f32 {
    let factor = if bold { 1.25 } else { 1.0 };
    units as f32 * factor * size / 1000.0
}

/// Helvetica glyph widths (1/1000 em) from the standard AFM.
fn helvetica_width(byte: u8) -> u32 {
    const ASCII: [u16; 95] = [
        278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278,
        278, // ' '../
        556, 556, 556, 556, 556, 556, 556, 556, 556, 556, // 0..9
        278, 278, 584, 584, 584, 556, 1015, // :..@
        667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, // A..M
        722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, // N..Z
        278, 278, 278, 469, 556, 333, // [..`
        556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, // a..m
        556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, // n..z
        334, 260, 334, 584, // {..~
    ];
    match byte {
        32..=126 => u32::from(ASCII[usize::from(byte - 32)]),
        0xE4 | 0xF6 | 0xFC => 556, // ä ö ü
        0xC4 => 667,               // Ä
        0xD6 => 778,               // Ö
        0xDC => 722,               // Ü
        0xDF => 611,               // ß
        _ => 1000,
    }
}

/// Encodes `text` in WinAnsiEncoding (Windows-1252); characters it cannot represent become `?`.
pub(crate) fn to_win_ansi(text: &str) -> Vec<u8> {
    text.chars().map(win_ansi_byte).collect()
}

fn win_ansi_byte(c: char) -> u8 {
    let code = u32::from(c);
    match code {
        0x20..=0x7E => code as u8,
        // Latin-1 matches WinAnsi from U+00A0 on.
        0xA0..=0xFF => code as u8,
        _ => match c {
            '€' => 0x80,
            '‚' => 0x82,
            'ƒ' => 0x83,
            '„' => 0x84,
            '…' => 0x85,
            '†' => 0x86,
            '‡' => 0x87,
            'ˆ' => 0x88,
            '‰' => 0x89,
            'Š' => 0x8A,
            '‹' => 0x8B,
            'Œ' => 0x8C,
            'Ž' => 0x8E,
            '‘' => 0x91,
            '’' => 0x92,
            '“' => 0x93,
            '”' => 0x94,
            '•' => 0x95,
            '–' => 0x96,
            '—' => 0x97,
            '˜' => 0x98,
            '™' => 0x99,
            'š' => 0x9A,
            '›' => 0x9B,
            'œ' => 0x9C,
            'ž' => 0x9E,
            'Ÿ' => 0x9F,
            // Tabs and line breaks inside a value would otherwise print as '?' glyph soup.
            '\t' | '\n' | '\r' => b' ',
            _ => b'?',
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn win_ansi_maps_umlauts_and_replaces_the_rest() {
        assert_eq!(
            to_win_ansi("äöüÄÖÜß"),
            vec![0xE4, 0xF6, 0xFC, 0xC4, 0xD6, 0xDC, 0xDF]
        );
        assert_eq!(
            to_win_ansi("€ – ok"),
            vec![0x80, b' ', 0x96, b' ', b'o', b'k']
        );
        assert_eq!(to_win_ansi("a\u{4E2D}b\u{1F600}"), b"a?b?".to_vec());
    }

    #[test]
    fn wrap_keeps_every_line_within_the_width() {
        let hex = "0123456789abcdef".repeat(8);
        let lines = wrap(&hex, 11.0, false, 200.0, 10);
        assert!(lines.len() > 1);
        for line in &lines {
            assert!(text_width(line, 11.0, false) <= 200.0);
        }
        assert_eq!(lines.concat(), hex.as_bytes());
    }

    /// What `wrap` does by its definition, every prefix measured anew: the longest that fits,
    /// broken as `break_line` breaks it.
    fn wrap_by_definition(text: &str, size: f32, bold: bool, max_width: f32) -> Vec<Vec<u8>> {
        let fits = |line: &[u8]| text_width(line, size, bold) <= max_width;
        let bytes = to_win_ansi(text);
        let mut lines = Vec::new();
        let mut rest: &[u8] = &bytes;
        while !rest.is_empty() {
            if fits(rest) {
                lines.push(rest.to_vec());
                break;
            }
            let mut end = 1;
            while end < rest.len() && fits(&rest[..end + 1]) {
                end += 1;
            }
            let (line, after) = break_line(rest, end);
            lines.push(line.to_vec());
            rest = after;
        }
        if lines.is_empty() {
            lines.push(Vec::new());
        }
        lines
    }

    proptest::proptest! {
        #[test]
        fn wrap_is_its_definition(
            text in "[ a-zA-Z0-9äöüß@W.-]{0,300}",
            size in 4.0f32..30.0,
            bold: bool,
            max_width in 1.0f32..500.0,
            max_lines in 1usize..6,
        ) {
            let defined = wrap_by_definition(&text, size, bold, max_width);
            proptest::prop_assert_eq!(&wrap(&text, size, bold, max_width, usize::MAX), &defined);
            // Capped: the definition's first lines, the last of them marked as cut exactly
            // when lines were left over.
            let capped = wrap(&text, size, bold, max_width, max_lines);
            if defined.len() <= max_lines {
                proptest::prop_assert_eq!(&capped, &defined);
            } else {
                proptest::prop_assert_eq!(capped.len(), max_lines);
                proptest::prop_assert_eq!(&capped[..max_lines - 1], &defined[..max_lines - 1]);
                proptest::prop_assert_eq!(capped[max_lines - 1].last(), Some(&0x85));
            }
        }
    }

    #[test]
    fn a_glyph_wider_than_the_line_stands_alone() {
        assert_eq!(wrap("W", 72.0, true, 10.0, 3), vec![b"W".to_vec()]);
        assert_eq!(
            wrap("WW", 72.0, true, 10.0, 3),
            vec![b"W".to_vec(), b"W".to_vec()]
        );
    }

    #[test]
    fn wrap_prefers_spaces_and_caps_lines() {
        let lines = wrap("eins zwei drei vier", 10.0, false, 60.0, 10);
        assert_eq!(lines[0], b"eins zwei".to_vec());
        let capped = wrap(&"wort ".repeat(200), 10.0, false, 100.0, 2);
        assert_eq!(capped.len(), 2);
        assert_eq!(capped[1].last(), Some(&0x85));
        assert!(text_width(&capped[1], 10.0, false) <= 100.0);
    }

    #[test]
    fn wrap_marks_a_cut_exactly_when_text_is_left_over() {
        // Exactly as many lines as allowed: nothing is cut, so no ellipsis.
        let exact = wrap("eins zwei drei", 10.0, false, 30.0, 3);
        assert_eq!(exact.len(), 3);
        assert_eq!(exact[2], b"drei".to_vec());
        let cut = wrap("eins zwei drei vier", 10.0, false, 30.0, 3);
        assert_eq!(cut.len(), 3);
        assert_eq!(cut[2].last(), Some(&0x85));
    }
}
