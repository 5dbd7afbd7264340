//! Plain-text PDF documents checked with real tools: `qpdf --check`, `pdfinfo` and `pdftotext`.

mod common;

use chrono::{DateTime, TimeZone, Utc};
use meldewerk_transports::pdf::{TextDocument, MAX_PAGES};

/// A4 and the margins the writer keeps, in points.
const PAGE_WIDTH: f32 = 595.0;
const PAGE_HEIGHT: f32 = 842.0;
const MARGIN: f32 = 56.0;

fn created() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 20, 9, 30, 0).unwrap()
}

fn document() -> TextDocument {
    TextDocument::new("Antrag auf Betreuung", "Amtsgericht Köln", created())
}

/// Writes `bytes` to a file of `dir`, checks it with `qpdf --check` and returns its path.
fn checked(dir: &tempfile::TempDir, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.path().join("document.pdf");
    std::fs::write(&path, bytes).unwrap();
    common::assert_qpdf_check(&path);
    path
}

/// The page count `pdfinfo` reports.
fn pages(path: &std::path::Path) -> usize {
    let output = common::run_tool("pdfinfo", &[path.to_str().unwrap()]);
    assert!(output.status.success(), "pdfinfo failed");
    let info = String::from_utf8(output.stdout).unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("Pages:"))
        .unwrap_or_else(|| panic!("no page count:\n{info}"))
        .trim()
        .parse()
        .unwrap()
}

/// The text of page `page` (1-based) as `pdftotext -layout` extracts it.
fn page_text(path: &std::path::Path, page: usize) -> String {
    let page = page.to_string();
    let output = common::run_tool(
        "pdftotext",
        &[
            "-layout",
            "-enc",
            "UTF-8",
            "-f",
            &page,
            "-l",
            &page,
            path.to_str().unwrap(),
            "-",
        ],
    );
    assert!(output.status.success(), "pdftotext failed");
    String::from_utf8(output.stdout).unwrap()
}

/// The non-empty lines of the whole document, `pdftotext -layout`, trimmed.
fn all_lines(path: &std::path::Path) -> Vec<String> {
    (1..=pages(path))
        .flat_map(|page| {
            page_text(path, page)
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Asserts that every word `pdftotext -bbox` finds lies inside the margins of its A4 page.
fn assert_within_margins(path: &std::path::Path) {
    let output = common::run_tool("pdftotext", &["-bbox", path.to_str().unwrap(), "-"]);
    let html = String::from_utf8_lossy(&output.stdout);
    let words: Vec<&str> = html.split("<word ").skip(1).collect();
    assert!(!words.is_empty(), "no words:\n{html}");
    let attribute = |word: &str, name: &str| -> f32 {
        let start = word.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
        word[start..].split('"').next().unwrap().parse().unwrap()
    };
    for word in words {
        let (x_min, x_max) = (attribute(word, "xMin"), attribute(word, "xMax"));
        let (y_min, y_max) = (attribute(word, "yMin"), attribute(word, "yMax"));
        assert!(
            x_min >= MARGIN - 0.5 && x_max <= PAGE_WIDTH - MARGIN + 0.5,
            "word outside the side margins: {word}"
        );
        assert!(
            y_min >= MARGIN - 0.5 && y_max <= PAGE_HEIGHT - MARGIN + 0.5,
            "word outside the top or bottom margin: {word}"
        );
    }
}

#[test]
fn a_long_document_continues_on_further_pages_with_every_line_in_order() {
    let mut doc = document();
    doc.heading("Antrag auf Einrichtung einer Betreuung", 18.0, 2);
    doc.gap(8.0);
    let expected: Vec<String> = (1..=150)
        .map(|n| format!("Zeile {n:03} des Antrags"))
        .collect();
    for line in &expected {
        doc.paragraph(line, 11.0, 1);
    }
    // A paragraph of many lines that cannot fit on what is left of a page.
    let long = (1..=60)
        .map(|n| format!("Wort{n:02}"))
        .collect::<Vec<_>>()
        .join(" ")
        .repeat(3);
    doc.paragraph(&long, 11.0, 100);
    assert!(doc.page_count() > 1);
    let page_count = doc.page_count();

    let dir = tempfile::tempdir().unwrap();
    let path = checked(&dir, &doc.render());
    assert_eq!(pages(&path), page_count);
    assert!(page_count >= 3, "150 lines of 11 pt need three pages");
    assert_within_margins(&path);

    let lines = all_lines(&path);
    assert_eq!(lines[0], "Antrag auf Einrichtung einer Betreuung");
    // Every line, in order: each is found after the one before.
    let mut at = 0;
    for line in &expected {
        let found = lines[at..].iter().position(|l| l == line);
        at += found.unwrap_or_else(|| panic!("{line} missing or out of order: {lines:?}")) + 1;
    }
    // The long paragraph lost nothing on its way across the page break.
    let rest = common::squeeze(&lines[at..].concat());
    assert_eq!(rest, common::squeeze(&long));
}

#[test]
fn a_label_never_ends_a_page_without_its_value() {
    let mut doc = document();
    for n in 1..=200u16 {
        doc.field(&format!("Feld {n:03}"), &format!("Wert {n:03}"), 3);
        // Uneven spacing, so that page ends fall at every point of a field.
        doc.gap(f32::from(n % 7) * 2.0);
    }
    let page_count = doc.page_count();
    let dir = tempfile::tempdir().unwrap();
    let path = checked(&dir, &doc.render());
    assert!(page_count > 2);
    assert_within_margins(&path);
    for page in 1..=page_count {
        let text = page_text(&path, page);
        let last = text.lines().rfind(|l| !l.trim().is_empty()).unwrap();
        assert!(
            last.trim().starts_with("Wert"),
            "page {page} ends with {last:?}"
        );
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap();
        assert!(
            first.trim().starts_with("Feld"),
            "page {page} starts with {first:?}"
        );
    }
}

#[test]
fn umlauts_and_sharp_s_survive_and_the_rest_degrades_to_question_marks() {
    let mut doc = document();
    doc.heading("Größe, Maße und Übergänge", 16.0, 1);
    doc.field("Anschrift", "Äußere Grüngürtelstraße 5, Köln – „Süd“", 2);
    doc.paragraph("Name: Zoë Öztürk 東京", 11.0, 1);
    let dir = tempfile::tempdir().unwrap();
    let path = checked(&dir, &doc.render());
    let text = common::pdf_text(&path);
    for expected in [
        "Größe, Maße und Übergänge",
        "Äußere Grüngürtelstraße 5, Köln – „Süd“",
        "Name: Zoë Öztürk ??",
    ] {
        assert!(text.contains(expected), "{expected} missing:\n{text}");
    }
}

#[test]
fn the_page_bound_holds_and_says_the_text_was_cut() {
    let mut doc = document();
    let paragraph = "Ein sehr langer Absatz, der immer weitergeht. ".repeat(200);
    for _ in 0..100 {
        doc.paragraph(&paragraph, 11.0, usize::MAX);
    }
    doc.paragraph("Dieser Schluss passt nicht mehr hinein.", 11.0, 1);
    assert_eq!(doc.page_count(), MAX_PAGES);
    let bytes = doc.render();
    assert!(bytes.len() < 2_000_000, "{} bytes", bytes.len());

    let dir = tempfile::tempdir().unwrap();
    let path = checked(&dir, &bytes);
    assert_eq!(pages(&path), MAX_PAGES);
    assert_within_margins(&path);
    let last = page_text(&path, MAX_PAGES);
    assert!(
        common::squeeze(&last).contains(&common::squeeze(
            "… Gekürzt: Das Dokument ist auf 50 Seiten begrenzt, der weitere Text fehlt."
        )),
        "{last}"
    );
    assert!(!last.contains("Schluss"), "{last}");
}

#[test]
fn a_lower_page_bound_cuts_earlier_even_after_a_large_gap() {
    let mut doc = TextDocument::with_max_pages("Kurz", "meldewerk", created(), 2);
    for n in 1..=200u16 {
        doc.paragraph(&format!("Zeile {n:03}"), 11.0, 1);
        // On the last page, a gap far larger than the page must not push the notice off it.
        if n == 60 {
            doc.gap(5000.0);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let path = checked(&dir, &doc.render());
    assert_eq!(pages(&path), 2);
    assert_within_margins(&path);
    let lines = all_lines(&path);
    assert_eq!(
        lines.last().map(String::as_str),
        Some("… Gekürzt: Das Dokument ist auf 2 Seiten begrenzt, der weitere Text fehlt.")
    );
    assert!(lines.contains(&"Zeile 060".to_owned()));
    assert!(!lines.contains(&"Zeile 061".to_owned()));
}

#[test]
fn the_colour_carries_over_to_the_next_page() {
    let mut doc = document();
    doc.colour(0.75, 0.0, 0.0);
    for n in 1..=80 {
        doc.paragraph(&format!("Rote Zeile {n}"), 11.0, 1);
    }
    let page_count = doc.page_count();
    assert_eq!(page_count, 2);
    let bytes = doc.render();
    // The content streams are not compressed: every page sets the red fill itself, because a
    // page starts in black.
    let red = b"0.75 0 0 rg";
    let times = bytes.windows(red.len()).filter(|w| w == red).count();
    assert_eq!(times, page_count);
    let dir = tempfile::tempdir().unwrap();
    checked(&dir, &bytes);
}

#[test]
fn an_empty_document_is_one_blank_page_with_its_information() {
    let dir = tempfile::tempdir().unwrap();
    let path = checked(&dir, &document().render());
    assert_eq!(pages(&path), 1);
    let output = common::run_tool("pdfinfo", &["-enc", "UTF-8", path.to_str().unwrap()]);
    let info = String::from_utf8(output.stdout).unwrap();
    assert!(info.contains("Antrag auf Betreuung"), "{info}");
    assert!(info.contains("Amtsgericht Köln"), "{info}");
}

#[test]
fn rendering_is_deterministic() {
    let build = || {
        let mut doc = document();
        doc.heading("Betreuung", 18.0, 1);
        for n in 1..=100 {
            doc.field(&format!("Feld {n}"), &format!("Wert {n} äöüß"), 2);
        }
        doc.render()
    };
    assert_eq!(build(), build());
}
