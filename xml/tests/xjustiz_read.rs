//! Reading incoming XJustiz messages: hand-built 0005005 fixtures (valid against the XJustiz
//! 3.6.2 schemas, checked here with xmllint) and every kind of hostile or broken input.

mod common;

use std::path::PathBuf;

use meldewerk_xml::xjustiz::*;

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/xjustiz")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

const FIXTURES: [&str; 3] = [
    "betreuung_beschluss.xml",
    "absender_aktenzeichen.xml",
    "ohne_aktenzeichen.xml",
];

/// `xmllint --schema` of a fixture against the XJustiz 0005 message schema: (valid, output).
fn xmllint(name: &str) -> (bool, String) {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/xjustiz")
        .join(name);
    common::xjustiz::xmllint_xjustiz(&file)
}

#[test]
fn the_fixtures_are_valid_xjustiz_0005005_messages() {
    for name in FIXTURES {
        let (ok, text) = xmllint(name);
        assert!(
            ok,
            "{name} is not valid against the XJustiz schemas:\n{text}"
        );
    }
}

#[test]
fn reads_the_recipients_case_reference_the_parties_and_the_documents() {
    let summary = read_message(&fixture("betreuung_beschluss.xml")).unwrap();
    assert_eq!(
        summary.nachrichtentyp,
        "nachricht.gds.uebermittlungSchriftgutobjekte.0005005"
    );
    assert_eq!(summary.aktenzeichen.as_deref(), Some("BV-2026/0815"));
    assert_eq!(
        summary.aktenzeichen_source,
        Some(AktenzeichenSource::Empfaenger)
    );
    assert_eq!(
        summary.nachrichten_id.as_deref(),
        Some("6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b")
    );
    assert_eq!(
        summary.erstellungszeitpunkt.as_deref(),
        Some("2026-11-20T09:30:00+01:00")
    );
    let party = |nummer: Option<&str>, rolle: &str, name: &str| Beteiligter {
        beteiligtennummer: nummer.map(str::to_owned),
        rolle: Some(rolle.into()),
        name: Some(name.into()),
    };
    assert_eq!(
        summary.beteiligte,
        [
            party(Some("1"), "Betroffener", "Jörg Müller-Weiß"),
            party(Some("2"), "Betreuer", "Betreuungsverein Mitte e. V."),
            party(None, "Verfahrenspfleger", "Kanzlei Schmidt & Partner"),
        ]
    );
    assert_eq!(
        summary.dokumente,
        [
            Dokument {
                id: Some("0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d".into()),
                anzeigename: Some("Beschluss über die Bestellung eines Betreuers".into()),
                dokumentklasse: Some("Beschluss".into()),
                dateinamen: vec!["Beschluss_50_XVII_123-26.pdf".into()],
            },
            Dokument {
                id: Some("1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e".into()),
                anzeigename: None,
                dokumentklasse: Some("Anschreiben".into()),
                dateinamen: vec!["Anschreiben.pdf".into(), "Anschreiben.pdf.p7s".into()],
            },
        ]
    );
}

#[test]
fn falls_back_to_the_senders_case_reference_and_keeps_file_names_as_written() {
    let summary = read_message(&fixture("absender_aktenzeichen.xml")).unwrap();
    assert_eq!(summary.aktenzeichen.as_deref(), Some("12 XIV 77/26 (L)"));
    assert_eq!(
        summary.aktenzeichen_source,
        Some(AktenzeichenSource::Absender)
    );
    assert!(summary.beteiligte.is_empty());
    assert_eq!(summary.dokumente.len(), 1);
    assert_eq!(
        summary.dokumente[0].anzeigename.as_deref(),
        Some("Ladung zur Anhörung")
    );
    // Read, not trusted: the archive gives it a safe stored name.
    assert_eq!(summary.dokumente[0].dateinamen, ["../../etc/passwd"]);
}

#[test]
fn a_message_without_case_reference_parties_or_documents_reads_as_empty() {
    let summary = read_message(&fixture("ohne_aktenzeichen.xml")).unwrap();
    assert_eq!(summary.aktenzeichen, None);
    assert_eq!(summary.aktenzeichen_source, None);
    assert!(summary.beteiligte.is_empty());
    assert!(summary.dokumente.is_empty());
    assert!(summary.nachrichten_id.is_some());
    // The bare root of another message type reads too: every field absent.
    let bare = read_message(b"<nachricht.gds.basisnachricht.0005006/>").unwrap();
    assert_eq!(bare.nachrichtentyp, "nachricht.gds.basisnachricht.0005006");
    assert_eq!(bare.aktenzeichen, None);
}

fn wrap(inner: &str) -> Vec<u8> {
    format!(
        "<nachricht.gds.uebermittlungSchriftgutobjekte.0005005 xmlns=\"http://www.xjustiz.de\">\
         {inner}</nachricht.gds.uebermittlungSchriftgutobjekte.0005005>"
    )
    .into_bytes()
}

#[test]
fn refuses_a_doctype_with_entity_declarations() {
    let bomb = "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [<!ENTITY lol \"lol\">\
        <!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">\
        <!ENTITY lol3 \"&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;\">]>\
        <nachricht.x><nachrichtenkopf><absender><aktenzeichen>&lol3;</aktenzeichen>\
        </absender></nachrichtenkopf></nachricht.x>";
    assert_eq!(read_message(bomb.as_bytes()), Err(ReadError::Doctype));
}

#[test]
fn refuses_an_external_entity() {
    let xxe = "<!DOCTYPE n [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]>\
        <nachricht.x><nachrichtenkopf><absender><aktenzeichen>&xxe;</aktenzeichen>\
        </absender></nachrichtenkopf></nachricht.x>";
    assert_eq!(read_message(xxe.as_bytes()), Err(ReadError::Doctype));
    let external_dtd = "<!DOCTYPE n SYSTEM \"http://example.org/evil.dtd\"><nachricht.x/>";
    assert_eq!(
        read_message(external_dtd.as_bytes()),
        Err(ReadError::Doctype)
    );
}

#[test]
fn refuses_an_undeclared_entity_reference() {
    let err = read_message(&wrap("<nachrichtenkopf><absender><aktenzeichen>&xxe;</aktenzeichen></absender></nachrichtenkopf>")).unwrap_err();
    assert!(matches!(err, ReadError::Malformed { .. }), "{err:?}");
    // The five predefined ones and character references are text.
    let ok = read_message(&wrap("<nachrichtenkopf><absender><aktenzeichen>A&amp;B &#x4D;&lt;</aktenzeichen></absender></nachrichtenkopf>")).unwrap();
    assert_eq!(ok.aktenzeichen.as_deref(), Some("A&B M<"));
}

#[test]
fn refuses_nesting_deeper_than_the_bound() {
    let nest = |depth: usize| "<a>".repeat(depth) + &"</a>".repeat(depth);
    // The root is level 1: MAX_DEPTH - 1 levels below it are read.
    assert!(read_message(&wrap(&nest(MAX_DEPTH - 1))).is_ok());
    assert_eq!(
        read_message(&wrap(&nest(MAX_DEPTH))),
        Err(ReadError::TooDeep)
    );
    // Far deeper, and unclosed: refused at the bound, not after reading it all.
    let deep = wrap(&"<a>".repeat(1_000_000));
    assert_eq!(read_message(&deep), Err(ReadError::TooDeep));
}

#[test]
fn refuses_a_message_larger_than_the_bound() {
    let bare = wrap("<!---->");
    let padding = "c".repeat(MAX_MESSAGE_BYTES - bare.len());
    let at_bound = wrap(&format!("<!--{padding}-->"));
    assert_eq!(at_bound.len(), MAX_MESSAGE_BYTES);
    assert!(read_message(&at_bound).is_ok());
    let over = wrap(&format!("<!--{padding}c-->"));
    assert_eq!(
        read_message(&over),
        Err(ReadError::TooLarge(MAX_MESSAGE_BYTES + 1))
    );
}

#[test]
fn refuses_a_text_longer_than_the_bound() {
    let at_bound = "x".repeat(MAX_TEXT_BYTES);
    let ok = read_message(&wrap(&format!(
        "<nachrichtenkopf><absender><aktenzeichen>{at_bound}</aktenzeichen></absender></nachrichtenkopf>"
    )))
    .unwrap();
    assert_eq!(ok.aktenzeichen.map(|a| a.len()), Some(MAX_TEXT_BYTES));
    let err = read_message(&wrap(&format!(
        "<verfahrensnummer>{at_bound}y</verfahrensnummer>"
    )));
    assert_eq!(
        err,
        Err(ReadError::TextTooLong {
            element: "verfahrensnummer".into()
        })
    );
    // Split across CDATA sections, it is still one value.
    let half = "x".repeat(MAX_TEXT_BYTES / 2 + 1);
    let err = read_message(&wrap(&format!(
        "<v><![CDATA[{half}]]><![CDATA[{half}]]></v>"
    )));
    assert_eq!(
        err,
        Err(ReadError::TextTooLong {
            element: "v".into()
        })
    );
}

#[test]
fn refuses_invalid_utf8_and_other_encodings() {
    let mut bytes = wrap("<nachrichtenkopf><absender><aktenzeichen>M");
    let at = bytes.len();
    bytes.extend_from_slice(&[0xfc, b'l']);
    assert_eq!(read_message(&bytes), Err(ReadError::InvalidUtf8(at)));
    let latin = b"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><nachricht.x/>";
    assert_eq!(
        read_message(latin),
        Err(ReadError::UnsupportedEncoding("ISO-8859-1".into()))
    );
}

#[test]
fn every_truncation_of_a_real_message_is_an_error() {
    let xml = fixture("betreuung_beschluss.xml");
    let end = xml.iter().rposition(|b| *b == b'>').unwrap() + 1;
    for cut in 0..end {
        let prefix = &xml[..cut];
        // A cut inside a multi-byte character is invalid UTF-8; every other cut is truncated
        // or (inside a tag) malformed. None reads as a message.
        let result = read_message(prefix);
        assert!(
            result.is_err(),
            "a message cut at byte {cut} was read: {result:?}"
        );
    }
    // Cut between two elements: everything read is well-formed, the end is missing.
    let before_grunddaten = xml
        .windows(15)
        .position(|w| w == b"<tns:grunddaten")
        .unwrap();
    assert_eq!(
        read_message(&xml[..before_grunddaten]),
        Err(ReadError::Truncated)
    );
}

#[test]
fn refuses_what_is_not_one_xjustiz_message() {
    assert_eq!(read_message(b""), Err(ReadError::Truncated));
    assert_eq!(
        read_message(b"<?xml version=\"1.0\"?>"),
        Err(ReadError::Truncated)
    );
    assert_eq!(
        read_message(b"<html/>"),
        Err(ReadError::NotXJustiz("html".into()))
    );
    for broken in [
        &b"<nachricht.x/><nachricht.x/>"[..],
        b"<nachricht.x/>trailing",
        b"<nachricht.x><a></b></nachricht.x>",
        b"<nachricht.x><a x=></a></nachricht.x>",
    ] {
        let err = read_message(broken).unwrap_err();
        assert!(
            matches!(err, ReadError::Malformed { .. }),
            "{}: {err:?}",
            String::from_utf8_lossy(broken)
        );
    }
}

#[test]
fn refuses_more_entries_than_the_bound() {
    let many = wrap(&format!(
        "<schriftgutobjekte>{}</schriftgutobjekte>",
        "<dokument/>".repeat(MAX_ENTRIES + 1)
    ));
    assert_eq!(
        read_message(&many),
        Err(ReadError::TooManyEntries("documents"))
    );
}

#[test]
fn refuses_an_element_with_more_attributes_than_the_bound() {
    let attributes = |n: usize| (0..n).map(|i| format!(" a{i}=\"\"")).collect::<String>();
    assert!(read_message(&wrap(&format!("<v{}/>", attributes(MAX_ATTRIBUTES)))).is_ok());
    assert_eq!(
        read_message(&wrap(&format!("<v{}/>", attributes(MAX_ATTRIBUTES + 1)))),
        Err(ReadError::TooManyAttributes {
            element: "v".into()
        })
    );
    // 400,000 of them (4 MB, under the size bound) are refused at the bound, not checked
    // pairwise.
    let many = wrap(&format!("<v{}/>", attributes(400_000)));
    assert!(many.len() < MAX_MESSAGE_BYTES);
    assert_eq!(
        read_message(&many),
        Err(ReadError::TooManyAttributes {
            element: "v".into()
        })
    );
    let err = read_message(&wrap("<v a=\"1\" a=\"2\"/>")).unwrap_err();
    assert!(matches!(err, ReadError::Malformed { .. }), "{err:?}");
}

#[test]
fn reads_documents_inside_an_akte_and_ignores_same_named_elements_elsewhere() {
    let summary = read_message(&wrap(
        "<grunddaten><dokument><xjustiz.fachspezifischeDaten><anzeigename>not a document\
         </anzeigename></xjustiz.fachspezifischeDaten></dokument></grunddaten>\
         <schriftgutobjekte><akte><xjustiz.fachspezifischeDaten><inhalt><dokument>\
         <xjustiz.fachspezifischeDaten><anzeigename>In der Akte</anzeigename><datei>\
         <dateiname>akte.pdf</dateiname></datei></xjustiz.fachspezifischeDaten></dokument>\
         </inhalt></xjustiz.fachspezifischeDaten></akte><dokument/></schriftgutobjekte>",
    ))
    .unwrap();
    assert_eq!(
        summary.dokumente,
        [
            Dokument {
                anzeigename: Some("In der Akte".into()),
                dateinamen: vec!["akte.pdf".into()],
                ..Default::default()
            },
            Dokument::default(),
        ]
    );
}
