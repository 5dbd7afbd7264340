//! Receipt PDFs ("Empfangsbestätigung") handed back by an authority once it confirmed a delivery.
//!
//! The PDF is deliberately plain: one A4 page, the builtin Helvetica fonts (nothing embedded, so
//! the output stays small and deterministic) and one labelled line per fact an integrator may have
//! to prove later: which message (report type in words with its code, UUID and SHA-256 of the
//! exact bytes), from whom, for which report, when (in the office's local time beside UTC).
//! Rendering the same [`ReceiptFields`] twice gives byte-identical PDFs.

use chrono::{DateTime, Datelike, Timelike, Utc};
use meldewerk_xml::local_time::LocalZone;
use pdf_writer::{Content, Date, Finish, Name, Pdf, Rect, Ref, Str, TextStr};

/// Everything printed on a receipt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiptFields {
    /// Name of the confirming authority, e.g. `Standesamt Berlin-Mitte (simuliert)`.
    pub authority: String,
    /// The report type in words with its message type code, e.g. `Geburtsanzeige (081020)`
    /// (`meldewerk_xml::xpersonenstand::nachrichtentyp_in_worten`).
    pub report_type: String,
    /// Who sent the message: the author's name and identifier from the message header, e.g.
    /// `meldewerk (sap:000000001)`.
    pub sender: String,
    /// Module path segment of the report, e.g. `birthnotice`.
    pub module: String,
    /// The integrator's report id the message belongs to.
    pub report_id: String,
    /// Message UUID from the message header.
    pub message_uuid: String,
    /// Lower-case hex SHA-256 of the exact bytes the authority received; lets anyone check later
    /// that a stored message is the one this receipt confirms.
    pub message_sha256_hex: String,
    /// When the sender handed the message over: the creation time in its header, or else when it
    /// was delivered.
    pub submitted_at: DateTime<Utc>,
    /// When the authority received the message.
    pub received_at: DateTime<Utc>,
    /// When the authority confirmed receipt.
    pub acknowledged_at: DateTime<Utc>,
    /// The authority's time zone: every time is printed in it beside UTC.
    pub time_zone: LocalZone,
    /// The transport's reference of the delivery.
    pub transport_ref: String,
    /// `true` for receipts from a simulator: the page then carries a prominent
    /// "TEST / MOCK RECEIPT" marker so it can never be mistaken for a real confirmation.
    pub mock: bool,
}

/// A4 portrait, in PDF points.
const PAGE_WIDTH: f32 = 595.0;
const PAGE_HEIGHT: f32 = 842.0;
const MARGIN: f32 = 56.0;
const TEXT_WIDTH: f32 = PAGE_WIDTH - 2.0 * MARGIN;

/// Values longer than this many wrapped lines are cut (marked with an ellipsis) so that even
/// absurd inputs cannot push the layout off the single page.
const MAX_VALUE_LINES: usize = 3;

const FONT_REGULAR: Name<'static> = Name(b"F1");
const FONT_BOLD: Name<'static> = Name(b"F2");

/// Lower-case hex SHA-256 of `bytes`, as a receipt prints the digest of a message.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, bytes)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Renders the receipt as a one-page PDF.
pub fn render_receipt(fields: &ReceiptFields) -> Vec<u8> {
    let catalog_id = Ref::new(1);
    let page_tree_id = Ref::new(2);
    let page_id = Ref::new(3);
    let regular_id = Ref::new(4);
    let bold_id = Ref::new(5);
    let content_id = Ref::new(6);
    let info_id = Ref::new(7);

    let mut pdf = Pdf::new();
    pdf.catalog(catalog_id).pages(page_tree_id);
    pdf.pages(page_tree_id).kids([page_id]).count(1);

    let mut page = pdf.page(page_id);
    page.media_box(Rect::new(0.0, 0.0, PAGE_WIDTH, PAGE_HEIGHT));
    page.parent(page_tree_id);
    page.contents(content_id);
    {
        let mut resources = page.resources();
        let mut fonts = resources.fonts();
        fonts.pair(FONT_REGULAR, regular_id);
        fonts.pair(FONT_BOLD, bold_id);
    }
    page.finish();

    // WinAnsiEncoding is what makes single-byte umlauts render as umlauts with the builtin fonts.
    pdf.type1_font(regular_id)
        .base_font(Name(b"Helvetica"))
        .encoding_predefined(Name(b"WinAnsiEncoding"));
    pdf.type1_font(bold_id)
        .base_font(Name(b"Helvetica-Bold"))
        .encoding_predefined(Name(b"WinAnsiEncoding"));

    let content = layout(fields);
    pdf.stream(content_id, &content.finish());

    let title = format!("Empfangsbestätigung {}", fields.report_id);
    let mut info = pdf.document_info(info_id);
    info.title(TextStr(&title));
    info.author(TextStr(&fields.authority));
    info.producer(TextStr("meldewerk"));
    // The acknowledgement time rather than "now", so rendering stays deterministic.
    info.creation_date(pdf_date(fields.acknowledged_at));
    info.finish();

    pdf.finish()
}

/// Writes the page content top to bottom.
fn layout(fields: &ReceiptFields) -> Content {
    let mut page = PageText::new();

    page.paragraph(&fields.authority, FONT_BOLD, 12.0, 2);
    page.gap(10.0);
    page.paragraph("Empfangsbestätigung", FONT_BOLD, 22.0, 1);
    page.gap(6.0);

    if fields.mock {
        page.set_rgb(0.75, 0.0, 0.0);
        page.paragraph("TEST / MOCK RECEIPT", FONT_BOLD, 16.0, 1);
        page.paragraph(
            "Von einem Simulator erzeugt – keine echte Behörde, keine rechtliche Wirkung.",
            FONT_BOLD,
            10.0,
            2,
        );
        page.set_rgb(0.0, 0.0, 0.0);
        page.gap(6.0);
    }

    let intro = format!(
        "Die unten bezeichnete Nachricht ist eingegangen; ihr Empfang wird hiermit bestätigt. \
         Zeiten in Ortszeit ({}) und in UTC (ISO\u{a0}8601).",
        fields.time_zone
    );
    page.paragraph(&intro, FONT_REGULAR, 10.0, 3);
    page.gap(10.0);

    let time = |at: DateTime<Utc>| fields.time_zone.show_with_utc(at);
    let rows: [(&str, String); 11] = [
        ("Meldung (Report-ID)", fields.report_id.clone()),
        ("Meldungsart", fields.report_type.clone()),
        ("Absender", fields.sender.clone()),
        ("Modul", fields.module.clone()),
        ("Nachrichten-UUID", fields.message_uuid.clone()),
        (
            "SHA-256 der übermittelten Nachricht",
            fields.message_sha256_hex.clone(),
        ),
        ("Übermittelt", time(fields.submitted_at)),
        ("Eingegangen", time(fields.received_at)),
        ("Bestätigt", time(fields.acknowledged_at)),
        ("Transportreferenz", fields.transport_ref.clone()),
        ("Behörde", fields.authority.clone()),
    ];
    for (label, value) in &rows {
        page.paragraph(label, FONT_BOLD, 9.0, 1);
        page.paragraph(value, FONT_REGULAR, 11.0, MAX_VALUE_LINES);
        page.gap(7.0);
    }

    page.gap(10.0);
    page.paragraph("Erstellt mit meldewerk.", FONT_REGULAR, 8.0, 1);

    page.content
}

/// Tracks the baseline while writing wrapped paragraphs downwards.
struct PageText {
    content: Content,
    /// Baseline of the next line.
    y: f32,
}

impl PageText {
    fn new() -> Self {
        Self {
            content: Content::new(),
            y: PAGE_HEIGHT - MARGIN,
        }
    }

    fn gap(&mut self, points: f32) {
        self.y -= points;
    }

    fn set_rgb(&mut self, r: f32, g: f32, b: f32) {
        self.content.set_fill_rgb(r, g, b);
    }

    /// Writes `text` wrapped to the text width, at most `max_lines` lines.
    fn paragraph(&mut self, text: &str, font: Name, size: f32, max_lines: usize) {
        let bold = font == FONT_BOLD;
        let leading = size * 1.25;
        for line in wrap(text, size, bold, TEXT_WIDTH, max_lines) {
            self.y -= size;
            self.content
                .begin_text()
                .set_font(font, size)
                .next_line(MARGIN, self.y)
                .show(Str(&line))
                .end_text();
            self.y -= leading - size;
        }
    }
}

/// Splits `text` into WinAnsi-encoded lines no wider than `max_width`: at spaces where possible,
/// inside a word when the word alone is too wide (hex digests, UUIDs, references).
fn wrap(text: &str, size: f32, bold: bool, max_width: f32, max_lines: usize) -> Vec<Vec<u8>> {
    let bytes = to_win_ansi(text);
    let fits = |line: &[u8]| text_width(line, size, bold) <= max_width;

    let mut lines: Vec<Vec<u8>> = Vec::new();
    let mut rest: &[u8] = &bytes;
    while !rest.is_empty() {
        if fits(rest) {
            lines.push(rest.to_vec());
            break;
        }
        // Longest prefix that fits, at least one byte so that the loop always makes progress.
        let mut end = 1;
        while end < rest.len() && fits(&rest[..end + 1]) {
            end += 1;
        }
        let cut = match rest[..=end].iter().rposition(|&b| b == b' ') {
            Some(space) if space > 0 => space,
            _ => end,
        };
        lines.push(rest[..cut].to_vec());
        rest = &rest[cut..];
        while rest.first() == Some(&b' ') {
            rest = &rest[1..];
        }
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

/// Width of WinAnsi-encoded `text` in points. Uses the Helvetica metrics for ASCII; everything
/// else gets a generous width, and bold is over-estimated, because the only use is to keep lines
/// on the page: too wide is harmless, too narrow would run off the edge.
fn text_width(text: &[u8], size: f32, bold: bool) -> f32 {
    let units: u32 = text.iter().map(|&b| helvetica_width(b)).sum();
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

fn pdf_date(at: DateTime<Utc>) -> Date {
    // The PDF date type only holds years 0..=9999; chrono's range is wider.
    let year = u16::try_from(at.year().clamp(0, 9999)).unwrap_or(0);
    Date::new(year)
        .month(at.month() as u8)
        .day(at.day() as u8)
        .hour(at.hour() as u8)
        .minute(at.minute() as u8)
        .second(at.second().min(59) as u8)
        .utc_offset_hour(0)
        .utc_offset_minute(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_hex_matches_known_vector() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

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

    #[test]
    fn wrap_prefers_spaces_and_caps_lines() {
        let lines = wrap("eins zwei drei vier", 10.0, false, 60.0, 10);
        assert_eq!(lines[0], b"eins zwei".to_vec());
        let capped = wrap(&"wort ".repeat(200), 10.0, false, 100.0, 2);
        assert_eq!(capped.len(), 2);
        assert_eq!(capped[1].last(), Some(&0x85));
        assert!(text_width(&capped[1], 10.0, false) <= 100.0);
    }
}
