//! The outgoing 0005005 (`write_uebermittlung`), checked by tools nobody here wrote: every variant
//! against the XJustiz 3.6.2 schemas with xmllint, parsed back with pyxjustiz's models (generated
//! from the official schemas) and compared with the input, and read back by our own reader. A
//! court message built by pyxjustiz (not by our writer) is read by `read_message`.

mod common;

use std::path::{Path, PathBuf};

use chrono::{DateTime, NaiveDate};
use common::xjustiz::{pyxjustiz, xmllint_xjustiz};
use meldewerk_xml::xjustiz::*;
use serde_json::Value;

/// An optional input value as the writer takes it: trimmed, blank is absent.
fn wert(v: &Option<String>) -> Option<&str> {
    v.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

const NACHRICHTEN_ID: &str = "3f2a1b4c-5d6e-4f70-8a91-b2c3d4e5f607";

fn zeit(s: &str) -> DateTime<chrono::FixedOffset> {
    DateTime::parse_from_rfc3339(s).unwrap()
}

fn pdf(name: &str, titel: &str) -> Dokumentangabe {
    Dokumentangabe {
        dateiname: name.into(),
        mime_type: "application/pdf".into(),
        bezeichnung: titel.into(),
    }
}

/// Every field filled; the recipient a court with its XJustiz-ID.
fn voll() -> Uebermittlung {
    Uebermittlung {
        nachricht: Nachricht {
            eigene_nachrichten_id: NACHRICHTEN_ID.into(),
            erstellungszeitpunkt: zeit("2026-11-24T09:15:30+01:00"),
        },
        absender: Absender {
            name: "Klinikum Nord <Sozialdienst> & Partner".into(),
            aktenzeichen: Some("SD-2026/17 <&>".into()),
            safe_id: "DE.Justiz.0a1b2c3d-klinikum".into(),
        },
        empfaenger: Empfaenger {
            name: "Amtsgericht Musterstadt, Betreuungsgericht".into(),
            art: EmpfaengerArt::Gericht {
                xjustiz_id: Some("B1101".into()),
            },
            safe_id: "DE.Justiz.ag-musterstadt".into(),
            aktenzeichen: Some("50 XVII 123/26".into()),
            adresse: Some(Anschrift {
                strasse: Some("Gerichtsstraße 1".into()),
                plz: Some("12345".into()),
                stadt: Some("Musterstadt".into()),
            }),
        },
        betroffener: Betroffener {
            vorname: Some("Jörg André".into()),
            nachname: "Müller-Weiß d'Ávila".into(),
            geburtsdatum: Some(NaiveDate::from_ymd_opt(1948, 2, 29).unwrap()),
            familienstand: Some(Familienstand::Verwitwet),
            anschrift: Some(Anschrift {
                strasse: Some("Lindenallee 7 <Hinterhaus>".into()),
                plz: Some("54321".into()),
                stadt: Some("Neustadt an der Weinstraße".into()),
            }),
            telefon: Some("+49 6321 12345".into()),
            gegenwaertiger_aufenthalt: Some("Klinikum Nord, Station 4 & 5, Zimmer 12".into()),
        },
        dokumente: vec![
            pdf("BetreuungAnregung.pdf", "Anregung einer Betreuung <Eilt> & Anlagen"),
            pdf("Ärztliches Zeugnis.pdf", "Ärztliches Zeugnis"),
            Dokumentangabe {
                mime_type: "image/jpeg".into(),
                ..pdf("Foto.jpg", "Foto der Wunde")
            },
        ],
        melde_zeitpunkt: Some(zeit("2026-11-23T22:40:00+01:00")),
    }
}

/// Only what the schema requires.
fn minimal() -> Uebermittlung {
    Uebermittlung {
        nachricht: Nachricht {
            eigene_nachrichten_id: "00000000-0000-4000-8000-000000000001".into(),
            erstellungszeitpunkt: zeit("2026-11-24T08:00:00Z"),
        },
        absender: Absender {
            name: "Pflegeheim Sonnenhof".into(),
            aktenzeichen: None,
            safe_id: "DE.BRAK.sonnenhof".into(),
        },
        empfaenger: Empfaenger {
            name: "Betreuungsverein Mitte e. V.".into(),
            art: EmpfaengerArt::Sonstige,
            safe_id: "DE.EBO.verein-mitte".into(),
            aktenzeichen: None,
            adresse: None,
        },
        betroffener: Betroffener {
            vorname: None,
            nachname: "Schmidt".into(),
            geburtsdatum: None,
            familienstand: None,
            anschrift: None,
            telefon: None,
            gegenwaertiger_aufenthalt: None,
        },
        dokumente: vec![pdf("Antrag.pdf", "Antrag")],
        melde_zeitpunkt: None,
    }
}

/// Every variant: (name, input).
fn varianten() -> Vec<(String, Uebermittlung)> {
    let mut v = vec![
        ("voll".to_string(), voll()),
        ("minimal".to_string(), minimal()),
    ];
    let mut gericht_ohne_id = voll();
    gericht_ohne_id.empfaenger.art = EmpfaengerArt::Gericht { xjustiz_id: None };
    v.push(("gericht_ohne_id".into(), gericht_ohne_id));
    let mut sonstige = voll();
    sonstige.empfaenger.art = EmpfaengerArt::Sonstige;
    v.push(("sonstige".into(), sonstige));
    let mut nur_absender_az = minimal();
    nur_absender_az.absender.aktenzeichen = Some("HEIM-7".into());
    v.push(("nur_absender_aktenzeichen".into(), nur_absender_az));
    for f in [
        Familienstand::Ledig,
        Familienstand::Verheiratet,
        Familienstand::Geschieden,
        Familienstand::Verwitwet,
    ] {
        let mut u = minimal();
        u.betroffener.familienstand = Some(f);
        v.push((format!("familienstand_{f:?}"), u));
    }
    let mut leer = minimal();
    leer.absender.aktenzeichen = Some("  ".into());
    leer.empfaenger.aktenzeichen = Some(String::new());
    leer.empfaenger.adresse = Some(Anschrift::default());
    leer.betroffener.vorname = Some(" ".into());
    leer.betroffener.telefon = Some(String::new());
    leer.betroffener.gegenwaertiger_aufenthalt = Some("\t".into());
    leer.betroffener.anschrift = Some(Anschrift {
        strasse: None,
        plz: Some("".into()),
        stadt: Some("Hamburg".into()),
    });
    v.push(("leere_optionale_werte".into(), leer));
    v
}

/// Writes every variant into `dir`; returns (name, input, path, bytes).
fn schreibe_alle(dir: &Path) -> Vec<(String, Uebermittlung, PathBuf, Vec<u8>)> {
    varianten()
        .into_iter()
        .map(|(name, u)| {
            let xml = write_uebermittlung(&u).unwrap_or_else(|e| panic!("{name}: {e}"));
            let path = dir.join(format!("{name}.xml"));
            std::fs::write(&path, &xml).unwrap();
            (name, u, path, xml)
        })
        .collect()
}

#[test]
fn every_variant_is_valid_against_the_xjustiz_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let mut fehler = Vec::new();
    for (name, _, path, xml) in schreibe_alle(dir.path()) {
        let (ok, text) = xmllint_xjustiz(&path);
        if !ok {
            fehler.push(format!("{name}:\n{text}\n{}", String::from_utf8_lossy(&xml)));
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
fn the_same_input_gives_the_same_bytes_and_distinct_document_ids() {
    let a = write_uebermittlung(&voll()).unwrap();
    assert_eq!(a, write_uebermittlung(&voll()).unwrap());
    let summary = read_message(&a).unwrap();
    let ids: Vec<_> = summary.dokumente.iter().map(|d| d.id.clone().unwrap()).collect();
    assert_eq!(ids.len(), 3);
    assert!(ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2]);
    let mut andere = voll();
    andere.nachricht.eigene_nachrichten_id = "3f2a1b4c-5d6e-4f70-8a91-b2c3d4e5f608".into();
    let b = read_message(&write_uebermittlung(&andere).unwrap()).unwrap();
    assert!(b.dokumente.iter().all(|d| !ids.contains(d.id.as_ref().unwrap())));
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
        let (az, quelle) = match (wert(&u.empfaenger.aktenzeichen), wert(&u.absender.aktenzeichen))
        {
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
        let namen: Vec<_> = s.beteiligte.iter().map(|b| b.name.clone().unwrap()).collect();
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
        let erwartet: Vec<_> = u.dokumente.iter().map(|d| vec![d.dateiname.clone()]).collect();
        assert_eq!(dateien, erwartet, "{name}");
        let titel: Vec<_> = s.dokumente.iter().map(|d| d.anzeigename.clone()).collect();
        let erwartet: Vec<_> = u.dokumente.iter().map(|d| Some(d.bezeichnung.clone())).collect();
        assert_eq!(titel, erwartet, "{name}");
        let klassen: Vec<_> = s.dokumente.iter().map(|d| d.dokumentklasse.clone().unwrap()).collect();
        assert_eq!(klassen[0], "003", "the form is the Antrag");
        assert!(klassen[1..].iter().all(|k| k == "005"), "the rest are Anlagen");
    }
}

