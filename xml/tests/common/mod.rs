//! Shared fixtures and the schema validation harness for the integration tests.
#![allow(dead_code)] // each test binary uses a different subset

pub mod geburtsdaten;

use std::path::PathBuf;
use std::process::Command;

use chrono::{TimeZone, Utc};
use meldewerk_xml::xpersonenstand::*;
use uuid::Uuid;

pub mod sterbefall;
pub mod uebermittlung;
pub mod xjustiz;

pub fn kopf() -> Nachrichtenkopf {
    Nachrichtenkopf {
        nachrichten_uuid: Uuid::parse_str("0b8a6a3e-5c1f-4f63-9a43-2f4a8e1d7c11").unwrap(),
        erstellungszeitpunkt: Utc.with_ymd_and_hms(2026, 11, 3, 8, 15, 30).unwrap(),
        leser: Behoerde {
            kennung: "psw:11007007".into(),
            name: "Standesamt Berlin-Mitte".into(),
            erreichbarkeit: vec![],
        },
        autor: Behoerde {
            kennung: "sap:000000013".into(),
            name: "meldewerk Geburtenportal".into(),
            erreichbarkeit: vec![Erreichbarkeit {
                kanal: "01".into(),
                kennung: "standesamt-portal@example.org".into(),
            }],
        },
        produkt: Produkt {
            name: "meldewerk".into(),
            hersteller: "meldewerk-Projekt".into(),
            version: "0.1.0".into(),
        },
        test: true,
    }
}

/// The smallest notice the form lets through.
pub fn minimal() -> Geburtsanzeige {
    Geburtsanzeige {
        name_einrichtung: Some("Klinikum Mitte".into()),
        anschrift_autor: Some(AnschriftAutor {
            gebaeude: Some(Gebaeudeanschrift {
                postleitzahl: Some("10117".into()),
                strasse: Some("Chausseestraße".into()),
                hausnummer: None,
                wohnort: Some("Berlin".into()),
            }),
        }),
        geburtsangaben: Some(Geburtsangaben {
            tag: Some("2026-11-02".into()),
            uhrzeit: Some("23:41".into()),
            ort: None,
        }),
        kind: Some(Kind {
            geschlecht: Some(KindGeschlecht::KeineAngabe),
            name: None,
        }),
        mutter: Some(Mutter {
            standard: Some(MutterStandard {
                name: Some(PersonName {
                    vornamen: Some("Sophia".into()),
                    familienname: Some("Lee".into()),
                    geburtsname: None,
                }),
                geburtsdatum: Some("1994-05-17".into()),
                anschrift: None,
            }),
            vertraulich: None,
        }),
        ..Default::default()
    }
}

/// Every supported field filled, with umlauts, ß and characters XML must escape.
pub fn maximal() -> Geburtsanzeige {
    Geburtsanzeige {
        standort_id: Some("KH-0815-Süd".into()),
        name_einrichtung: Some("Klinikum Süd & Söhne <\"Geburtshilfe\"> 'Ost'".into()),
        ansprechpartner: Some("Dr. Jürgen Weiß & Team <Kreißsaal>".into()),
        anschrift_autor: Some(AnschriftAutor {
            gebaeude: Some(Gebaeudeanschrift {
                postleitzahl: Some("80331".into()),
                strasse: Some("Große Straße \"Am Fluß\" & <Ecke>".into()),
                hausnummer: Some("12a".into()),
                wohnort: Some("München".into()),
            }),
        }),
        totgeburt: Some(true),
        totgeburt_angaben: Some(TotgeburtAngaben {
            schwangerschaftswoche: Some(23),
            geburtsgewicht: Some(480),
        }),
        vertrauliche_geburt: Some(false),
        geburtsangaben: Some(Geburtsangaben {
            tag: Some("2026-11-02".into()),
            uhrzeit: Some("00:07".into()),
            ort: Some(Ereignisort {
                strasse: Some("Kreißsaalweg <3>".into()),
                hausnummer: Some("7-9 & 11".into()),
                ort: Some("München-Schwabing".into()),
            }),
        }),
        kind: Some(Kind {
            geschlecht: Some(KindGeschlecht::Divers),
            name: Some(KindName {
                vornamen: Some("Jörg Björn".into()),
                familienname: Some("Müller-Lüdenscheidt".into()),
            }),
        }),
        mehrlingsgeburt: Some(Mehrlingsgeburt {
            anzahl_knaben: Some(1),
            anzahl_maedchen: Some(0),
            anzahl_unbestimmt: Some(1),
        }),
        mutter: Some(Mutter {
            standard: Some(MutterStandard {
                name: Some(PersonName {
                    vornamen: Some("Anna-Lena Zoë".into()),
                    familienname: Some("Müller-Lüdenscheidt".into()),
                    geburtsname: Some("O'Brien & Groß".into()),
                }),
                geburtsdatum: Some("1990-02-28".into()),
                anschrift: Some(AnschriftMutter {
                    strasse: Some("Äußere Wiener Straße".into()),
                    hausnummer: Some("3 1/2".into()),
                    postleitzahl: Some("81667".into()),
                    wohnort: Some("München".into()),
                }),
            }),
            vertraulich: None,
        }),
        elternteil2: Some(ZweitesElternteil {
            name: Some(PersonName {
                vornamen: Some("Özgür".into()),
                familienname: Some("Straßer".into()),
                geburtsname: Some("Yılmaz".into()),
            }),
        }),
        standesamt_kennung: Some("psw:09162000".into()),
        zuordnung_geburtsanzeige: Some("GA-2026-11-02/0815 <&>".into()),
    }
}

/// A confidential birth: the mother appears only under her pseudonym.
pub fn vertraulich() -> Geburtsanzeige {
    let mut a = minimal();
    a.vertrauliche_geburt = Some(true);
    a.mutter = Some(Mutter {
        standard: None,
        vertraulich: Some(MutterVertraulich {
            vornamen: Some("Maria".into()),
            familienname: Some("Mustermann".into()),
        }),
    });
    a
}

fn referenz() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/reference/xpersonenstand-26.11")
        .canonicalize()
        .expect("schema folder ../../shared/reference/xpersonenstand-26.11 not found")
}

/// Runs the real `xmllint --schema` on `xml`; returns xmllint's verdict and output.
pub fn xmllint(xml: &str) -> (bool, String) {
    let ordner = referenz();
    let dir = tempfile::tempdir().unwrap();
    let datei = dir.path().join("nachricht.xml");
    std::fs::write(&datei, xml).unwrap();
    let ergebnis = Command::new("xmllint")
        .current_dir(&ordner)
        .env("XML_CATALOG_FILES", ordner.join("local-catalog.xml"))
        .args(["--noout", "--nonet", "--schema"])
        .arg(ordner.join("schemas/xpsw.domap.de/xpsw2611/xpersonenstand-nachrichten-portale.xsd"))
        .arg(&datei)
        .output();
    let ergebnis = match ergebnis {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
            "xmllint is not installed, so the XPersonenstand schema validation cannot run. \
             Install it with `apt-get install -y libxml2-utils`."
        ),
        Err(e) => panic!("could not run xmllint: {e}"),
    };
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&ergebnis.stdout),
        String::from_utf8_lossy(&ergebnis.stderr)
    );
    (ergebnis.status.success(), text)
}

pub fn assert_schema_gueltig(xml: &str) {
    let (ok, text) = xmllint(xml);
    assert!(
        ok,
        "xmllint rejected the message:\n{text}\n--- message ---\n{xml}"
    );
}
