//! The inputs of the XJustiz writer tests: every variant of an outgoing 0005005.

use std::path::{Path, PathBuf};

use chrono::{DateTime, NaiveDate};
use meldewerk_xml::xjustiz::*;

/// An optional input value as the writer takes it: trimmed, blank is absent.
pub fn wert(v: &Option<String>) -> Option<&str> {
    v.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

pub const NACHRICHTEN_ID: &str = "3f2a1b4c-5d6e-4f70-8a91-b2c3d4e5f607";

pub fn zeit(s: &str) -> DateTime<chrono::FixedOffset> {
    DateTime::parse_from_rfc3339(s).unwrap()
}

pub fn pdf(name: &str, titel: &str) -> Dokumentangabe {
    Dokumentangabe {
        dateiname: name.into(),
        mime_type: "application/pdf".into(),
        bezeichnung: titel.into(),
    }
}

/// Every field filled; the recipient a court with its XJustiz-ID.
pub fn voll() -> Uebermittlung {
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
            pdf(
                "BetreuungAnregung.pdf",
                "Anregung einer Betreuung <Eilt> & Anlagen",
            ),
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
pub fn minimal() -> Uebermittlung {
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
pub fn varianten() -> Vec<(String, Uebermittlung)> {
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
pub fn schreibe_alle(dir: &Path) -> Vec<(String, Uebermittlung, PathBuf, Vec<u8>)> {
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
