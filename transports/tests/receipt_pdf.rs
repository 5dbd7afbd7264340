//! The receipt PDF checked with real tools: `qpdf --check` and `pdftotext`.

mod common;

use chrono::{TimeZone, Utc};
use meldewerk_transports::receipt::{render_receipt, ReceiptFields};
use meldewerk_xml::local_time::LocalZone;

fn fields(mock: bool) -> ReceiptFields {
    ReceiptFields {
        authority: "Standesamt Berlin-Mitte (simuliert)".to_owned(),
        report_type: "Geburtsanzeige (081020)".to_owned(),
        sender: "meldewerk (sap:000000001)".to_owned(),
        module: "birthnotice".to_owned(),
        report_id: "GEB-2024-000123".to_owned(),
        message_uuid: "4f1c2a8e-9d3b-4b6f-8e2a-1c0d5e7f9a3b".to_owned(),
        message_sha256_hex: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
            .to_owned(),
        submitted_at: Utc.with_ymd_and_hms(2024, 5, 1, 11, 59, 58).unwrap(),
        received_at: Utc.with_ymd_and_hms(2024, 5, 1, 12, 0, 0).unwrap(),
        acknowledged_at: Utc.with_ymd_and_hms(2024, 5, 1, 12, 0, 2).unwrap(),
        time_zone: LocalZone::BERLIN,
        transport_ref: "0b7e8a51-3c2d-4e9f-a1b2-c3d4e5f60718".to_owned(),
        mock,
    }
}

fn write_pdf(dir: &tempfile::TempDir, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.path().join("receipt.pdf");
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn receipt_passes_qpdf_and_shows_every_identifier() {
    let fields = fields(true);
    let dir = tempfile::tempdir().unwrap();
    let path = write_pdf(&dir, &render_receipt(&fields));

    common::assert_qpdf_check(&path);
    let text = common::pdf_text(&path);
    let squeezed = common::squeeze(&text);

    assert!(
        text.contains("Empfangsbestätigung"),
        "title missing:\n{text}"
    );
    assert!(
        text.contains("übermittelten Nachricht"),
        "umlaut label missing:\n{text}"
    );
    assert!(
        text.contains("TEST / MOCK RECEIPT"),
        "mock marker missing:\n{text}"
    );
    for value in [
        &fields.report_id,
        &fields.message_uuid,
        &fields.message_sha256_hex,
        &fields.transport_ref,
        &fields.module,
    ] {
        assert!(
            squeezed.contains(value.as_str()),
            "{value} missing:\n{text}"
        );
    }
    for line in [
        "Meldungsart",
        "Geburtsanzeige (081020)",
        "Absender",
        "meldewerk (sap:000000001)",
        "Zeiten in Ortszeit (Europe/Berlin) und in UTC",
    ] {
        assert!(
            squeezed.contains(&common::squeeze(line)),
            "{line} missing:\n{text}"
        );
    }
    // Local time (summer time on 1 May) beside UTC, each under its label.
    for (label, time) in [
        (
            "Übermittelt",
            "01.05.2024, 13:59:58 Uhr (UTC+02:00) = 2024-05-01T11:59:58Z",
        ),
        (
            "Eingegangen",
            "01.05.2024, 14:00:00 Uhr (UTC+02:00) = 2024-05-01T12:00:00Z",
        ),
        (
            "Bestätigt",
            "01.05.2024, 14:00:02 Uhr (UTC+02:00) = 2024-05-01T12:00:02Z",
        ),
    ] {
        assert!(
            squeezed.contains(&common::squeeze(&format!("{label}{time}"))),
            "{label}: {time} missing:\n{text}"
        );
    }
}

#[test]
fn real_receipt_has_no_mock_marker() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_pdf(&dir, &render_receipt(&fields(false)));
    common::assert_qpdf_check(&path);
    assert!(!common::pdf_text(&path).contains("MOCK"));
}

#[test]
fn receipt_has_info_dictionary() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_pdf(&dir, &render_receipt(&fields(true)));
    let output = common::run_tool("pdfinfo", &["-enc", "UTF-8", path.to_str().unwrap()]);
    assert!(output.status.success(), "pdfinfo failed");
    let info = String::from_utf8(output.stdout).unwrap();
    assert!(
        info.contains("Empfangsbestätigung GEB-2024-000123"),
        "{info}"
    );
    assert!(info.contains("meldewerk"), "{info}");
    assert!(
        info.lines()
            .any(|l| l.starts_with("Pages:") && l.ends_with(" 1")),
        "{info}"
    );
}

#[test]
fn long_values_wrap_and_unmappable_characters_degrade() {
    let mut fields = fields(true);
    // Longer than a line, without spaces, so only hard wrapping keeps it on the page.
    fields.report_id = "R".repeat(90);
    fields.authority = "Standesamt Köln 東京 – Außenstelle Süd".to_owned();
    let dir = tempfile::tempdir().unwrap();
    let path = write_pdf(&dir, &render_receipt(&fields));

    common::assert_qpdf_check(&path);
    let text = common::pdf_text(&path);
    assert!(common::squeeze(&text).contains(&fields.report_id), "{text}");
    assert!(
        text.contains("Standesamt Köln ?? – Außenstelle Süd"),
        "{text}"
    );

    // Every glyph must be inside the page: pdftotext -bbox reports word boxes.
    let output = common::run_tool("pdftotext", &["-bbox", path.to_str().unwrap(), "-"]);
    let html = String::from_utf8_lossy(&output.stdout);
    for x_max in html.split("xMax=\"").skip(1) {
        let value: f32 = x_max.split('"').next().unwrap().parse().unwrap();
        assert!(value <= 595.0 - 40.0, "word ends at x={value}:\n{html}");
    }
}

#[test]
fn rendering_is_deterministic() {
    assert_eq!(render_receipt(&fields(true)), render_receipt(&fields(true)));
}

/// Lower-case hex SHA-256 of `bytes`.
fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(ring::digest::digest(&ring::digest::SHA256, bytes))
}

/// A receipt rendered again later (the simulators render a stored record's receipt on demand)
/// must be the very PDF handed out before: an integrator may have kept its digest. These digests
/// are those of the receipts as they were before the layout moved into `pdf`.
#[test]
fn receipt_bytes_stay_what_they_were() {
    assert_eq!(
        sha256_hex(&render_receipt(&fields(true))),
        "fa5488f32ccbfc367b7f4a13fc8525b80f4096ff085b1af629b4c93aa0718baf"
    );
    assert_eq!(
        sha256_hex(&render_receipt(&fields(false))),
        "96f6310b5a180c7f262f7f63dc62ee364615d5d3261ab5df98fa5a757a564f17"
    );
}

/// With every free-text value at its three-line cap a receipt no longer fits one page: the rest
/// continues on a second page, inside the margins, instead of running into the bottom edge.
#[test]
fn a_receipt_of_overlong_values_continues_on_a_second_page() {
    let mut fields = fields(true);
    fields.authority = "Standesamt Außenstelle ".repeat(20);
    fields.report_id = "R".repeat(400);
    fields.report_type = "T".repeat(400);
    fields.sender = "S".repeat(400);
    fields.module = "M".repeat(400);
    fields.message_uuid = "U".repeat(400);
    fields.message_sha256_hex = "H".repeat(400);
    fields.transport_ref = "X".repeat(400);
    let dir = tempfile::tempdir().unwrap();
    let path = write_pdf(&dir, &render_receipt(&fields));

    common::assert_qpdf_check(&path);
    let output = common::run_tool("pdfinfo", &[path.to_str().unwrap()]);
    let info = String::from_utf8(output.stdout).unwrap();
    assert!(
        info.lines()
            .any(|l| l.starts_with("Pages:") && l.ends_with(" 2")),
        "{info}"
    );
    let text = common::pdf_text(&path);
    for line in ["Transportreferenz", "Behörde", "Erstellt mit meldewerk."] {
        assert!(text.contains(line), "{line} missing:\n{text}");
    }
    let output = common::run_tool("pdftotext", &["-bbox", path.to_str().unwrap(), "-"]);
    let html = String::from_utf8_lossy(&output.stdout);
    for y_max in html.split("yMax=\"").skip(1) {
        let value: f32 = y_max.split('"').next().unwrap().parse().unwrap();
        assert!(value <= 842.0 - 56.0, "word ends at y={value}:\n{html}");
    }
}
