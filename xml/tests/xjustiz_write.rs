//! The outgoing 0005005 (`write_uebermittlung`): every variant valid against the XJustiz 3.6.2
//! schemas (xmllint), text escaped, optional input left out without empty elements, the same
//! bytes for the same input, read back by our own reader, and every kind of bad input refused
//! with an error naming the field. tests/xjustiz_pyxjustiz.rs checks the same variants with
//! pyxjustiz.

mod common;

use common::uebermittlung::*;
use common::xjustiz::xmllint_xjustiz;
use meldewerk_xml::xjustiz::*;

#[test]
fn every_variant_is_valid_against_the_xjustiz_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let mut fehler = Vec::new();
    for (name, _, path, xml) in schreibe_alle(dir.path()) {
        let (ok, text) = xmllint_xjustiz(&path);
        if !ok {
            fehler.push(format!(
                "{name}:\n{text}\n{}",
                String::from_utf8_lossy(&xml)
            ));
        }
    }
    assert!(fehler.is_empty(), "{}", fehler.join("\n\n"));
}

#[test]
fn text_is_escaped_and_blank_optional_values_write_no_element() {
    let xml = String::from_utf8(write_uebermittlung(&voll()).unwrap()).unwrap();
    for erwartet in [
        "<tns:sonstige>Klinikum Nord &lt;Sozialdienst&gt; &amp; Partner</tns:sonstige>",
        "<tns:aktenzeichen>SD-2026/17 &lt;&amp;&gt;</tns:aktenzeichen>",
        "<tns:nachname>Müller-Weiß d&apos;Ávila</tns:nachname>",
        "<tns:familienstand listVersionID=\"2.0\">",
        "<code>010</code>",
        "<tns:geburtsdatum>1948-02-29</tns:geburtsdatum>",
        "<tns:erstellungszeitpunkt>2026-11-23T22:40:00+01:00</tns:erstellungszeitpunkt>",
    ] {
        assert!(xml.contains(erwartet), "missing {erwartet:?} in\n{xml}");
    }
    let (_, u) = varianten()
        .into_iter()
        .find(|(n, _)| n == "leere_optionale_werte")
        .unwrap();
    let xml = String::from_utf8(write_uebermittlung(&u).unwrap()).unwrap();
    for fehlt in [
        "<tns:vorname",
        "<tns:postleitzahl",
        "<tns:strasse",
        "<tns:anschriftenzusatz",
        "<tns:aktenzeichen>",
        "<tns:aktenzeichen.freitext",
        "<tns:verbindung></tns:verbindung>",
        "/>",
        "></tns:",
    ] {
        assert!(!xml.contains(fehlt), "{fehlt:?} written in\n{xml}");
    }
    assert!(xml.contains("<tns:ort>Hamburg</tns:ort>"));
    assert!(xml.contains("<tns:aktenzeichen.neu>true</tns:aktenzeichen.neu>"));
    // The recipient's empty address is absent: one anschrift only, the person's.
    assert_eq!(xml.matches("<tns:anschrift>").count(), 1, "{xml}");
}

#[test]
fn familienstand_is_written_as_its_gds_familienstand_code() {
    for (f, code) in [
        (Familienstand::Ledig, "007"),
        (Familienstand::Verheiratet, "009"),
        (Familienstand::Geschieden, "001"),
        (Familienstand::Verwitwet, "010"),
    ] {
        let mut u = minimal();
        u.betroffener.familienstand = Some(f);
        let xml = String::from_utf8(write_uebermittlung(&u).unwrap()).unwrap();
        let start = xml.find("<tns:familienstand").unwrap();
        let ende = xml.find("</tns:familienstand>").unwrap();
        assert!(
            xml[start..ende].contains(&format!("<code>{code}</code>")),
            "{f:?}: {}",
            &xml[start..ende]
        );
    }
}

#[test]
fn the_same_input_gives_the_same_bytes_and_distinct_document_ids() {
    let a = write_uebermittlung(&voll()).unwrap();
    assert_eq!(a, write_uebermittlung(&voll()).unwrap());
    let summary = read_message(&a).unwrap();
    let ids: Vec<_> = summary
        .dokumente
        .iter()
        .map(|d| d.id.clone().unwrap())
        .collect();
    assert_eq!(ids.len(), 3);
    assert!(ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2]);
    let mut andere = voll();
    andere.nachricht.eigene_nachrichten_id = "3f2a1b4c-5d6e-4f70-8a91-b2c3d4e5f608".into();
    let b = read_message(&write_uebermittlung(&andere).unwrap()).unwrap();
    assert!(b
        .dokumente
        .iter()
        .all(|d| !ids.contains(d.id.as_ref().unwrap())));
}

#[test]
fn our_reader_reads_back_case_reference_parties_and_documents() {
    let dir = tempfile::tempdir().unwrap();
    for (name, u, _, xml) in schreibe_alle(dir.path()) {
        let s = read_message(&xml).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            s.nachrichtentyp,
            "nachricht.gds.uebermittlungSchriftgutobjekte.0005005"
        );
        let (az, quelle) = match (
            wert(&u.empfaenger.aktenzeichen),
            wert(&u.absender.aktenzeichen),
        ) {
            (Some(az), _) => (Some(az), Some(AktenzeichenSource::Empfaenger)),
            (None, Some(az)) => (Some(az), Some(AktenzeichenSource::Absender)),
            (None, None) => (None, None),
        };
        assert_eq!(s.aktenzeichen.as_deref(), az, "{name}");
        assert_eq!(s.aktenzeichen_source, quelle, "{name}");
        assert_eq!(
            s.nachrichten_id.as_deref(),
            Some(u.nachricht.eigene_nachrichten_id.as_str())
        );
        let person = match wert(&u.betroffener.vorname) {
            Some(v) => format!("{v} {}", u.betroffener.nachname),
            None => u.betroffener.nachname.clone(),
        };
        let namen: Vec<_> = s
            .beteiligte
            .iter()
            .map(|b| b.name.clone().unwrap())
            .collect();
        assert_eq!(
            namen,
            [person, u.absender.name.clone(), u.empfaenger.name.clone()],
            "{name}"
        );
        let nummern: Vec<_> = s
            .beteiligte
            .iter()
            .map(|b| b.beteiligtennummer.clone().unwrap())
            .collect();
        assert_eq!(nummern, ["1", "2", "3"]);
        let dateien: Vec<_> = s.dokumente.iter().map(|d| d.dateinamen.clone()).collect();
        let erwartet: Vec<_> = u
            .dokumente
            .iter()
            .map(|d| vec![d.dateiname.clone()])
            .collect();
        assert_eq!(dateien, erwartet, "{name}");
        let titel: Vec<_> = s.dokumente.iter().map(|d| d.anzeigename.clone()).collect();
        let erwartet: Vec<_> = u
            .dokumente
            .iter()
            .map(|d| Some(d.bezeichnung.clone()))
            .collect();
        assert_eq!(titel, erwartet, "{name}");
        let klassen: Vec<_> = s
            .dokumente
            .iter()
            .map(|d| d.dokumentklasse.clone().unwrap())
            .collect();
        assert_eq!(klassen[0], "003", "the form is the Antrag");
        assert!(
            klassen[1..].iter().all(|k| k == "005"),
            "the rest are Anlagen"
        );
    }
}

/// Writes `u` and returns the error's text; panics when it is written.
fn fehler(u: &Uebermittlung) -> (WriteError, String) {
    let e = write_uebermittlung(u).expect_err("the input should be refused");
    let text = e.to_string();
    (e, text)
}

#[test]
fn input_the_schema_would_refuse_is_an_error_naming_the_field() {
    let mut u = voll();
    u.betroffener.nachname = "  ".into();
    assert_eq!(
        fehler(&u).0,
        WriteError::Missing {
            field: "betroffener.name.nachname".into()
        }
    );
    assert_eq!(fehler(&u).1, "betroffener.name.nachname is required");

    let mut u = voll();
    u.betroffener.vorname = Some("Anna <&>".into());
    let (e, text) = fehler(&u);
    assert_eq!(
        e,
        WriteError::Character {
            field: "betroffener.name.vorname".into(),
            character: '<'
        }
    );
    assert_eq!(
        text,
        "betroffener.name.vorname contains the character '<' (U+003C), which XJustiz does not \
         allow there (DIN 91379)"
    );

    let mut u = voll();
    u.empfaenger.name = "Amtsgericht Musterstadt – Betreuungsgericht".into();
    assert!(matches!(
        fehler(&u).0,
        WriteError::Character { field, character: '–' } if field == "empfaenger.name"
    ));

    let mut u = voll();
    u.absender.name = "x".repeat(MAX_TEXT_CHARS + 1);
    assert_eq!(
        fehler(&u).1,
        format!("absender.name has 256 characters, more than the {MAX_TEXT_CHARS} allowed")
    );
    u.absender.name = "ä".repeat(MAX_TEXT_CHARS);
    write_uebermittlung(&u).expect("the bound counts characters, not bytes");

    for (id, bad) in [
        ("", false),
        ("kein-uuid", true),
        ("{3f2a1b4c-5d6e-4f70-8a91-b2c3d4e5f607}", true),
        ("3f2a1b4c5d6e4f708a91b2c3d4e5f607", true),
    ] {
        let mut u = voll();
        u.nachricht.eigene_nachrichten_id = id.into();
        let (e, _) = fehler(&u);
        assert_eq!(matches!(e, WriteError::Invalid { .. }), bad, "{id:?}: {e}");
    }
    let mut u = voll();
    u.nachricht.eigene_nachrichten_id = "3F2A1B4C-5D6E-4F70-8A91-B2C3D4E5F607".into();
    let s = read_message(&write_uebermittlung(&u).unwrap()).unwrap();
    assert_eq!(
        s.nachrichten_id.as_deref(),
        Some(NACHRICHTEN_ID),
        "written in lower case"
    );

    let mut u = voll();
    u.empfaenger.safe_id = String::new();
    assert_eq!(fehler(&u).1, "empfaenger.safeId is required");
    let mut u = voll();
    u.empfaenger.adresse.as_mut().unwrap().stadt = Some("Bad ½ Stadt".into());
    assert!(fehler(&u)
        .1
        .starts_with("empfaenger.adresse.stadt contains the character '½'"));
    let mut u = voll();
    u.empfaenger.art = EmpfaengerArt::Gericht {
        xjustiz_id: Some("B\u{1}1".into()),
    };
    assert!(fehler(&u).1.starts_with("empfaenger.xjustizId contains"));
}

#[test]
fn documents_are_refused_when_missing_too_many_ambiguous_or_not_bare_files() {
    let mut u = voll();
    u.dokumente.clear();
    assert_eq!(fehler(&u).0, WriteError::NoDocuments);

    let mut u = voll();
    u.dokumente = (0..=MAX_DOKUMENTE)
        .map(|i| pdf(&format!("{i}.pdf"), "Anlage"))
        .collect();
    assert_eq!(
        fehler(&u).1,
        "dokumente has 101 entries, more than the 100 allowed"
    );
    u.dokumente.pop();
    let xml = write_uebermittlung(&u).expect("exactly the bound is written");
    assert_eq!(read_message(&xml).unwrap().dokumente.len(), MAX_DOKUMENTE);

    let mut u = voll();
    u.dokumente[2].dateiname = "betreuunganregung.PDF".into();
    assert_eq!(fehler(&u).0, WriteError::DuplicateFileName(2));

    for name in ["../etwas.pdf", "ordner/datei.pdf", "C:\\datei.pdf", ".."] {
        let mut u = voll();
        u.dokumente[1].dateiname = name.into();
        let (e, text) = fehler(&u);
        assert!(matches!(e, WriteError::Invalid { .. }), "{name}: {e}");
        assert!(text.starts_with("dokumente[1].dateiname "), "{text}");
    }

    for (mime, text) in [
        ("", "dokumente[0].mimeType is required"),
        (
            "pdf",
            "dokumente[0].mimeType is not a MIME type (type/subtype)",
        ),
        (
            "application/pdf; charset=x",
            "dokumente[0].mimeType is not a MIME type (type/subtype)",
        ),
        (
            "/pdf",
            "dokumente[0].mimeType is not a MIME type (type/subtype)",
        ),
    ] {
        let mut u = voll();
        u.dokumente[0].mime_type = mime.into();
        assert_eq!(fehler(&u).1, text, "{mime:?}");
    }

    let mut u = voll();
    u.dokumente[0].bezeichnung = " ".into();
    assert_eq!(fehler(&u).1, "dokumente[0].bezeichnung is required");
}
