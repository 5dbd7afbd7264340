//! The notice's serde shape is the `birthnotice` memento JSON of spec 01, section 2.3.

mod common;

use common::*;
use meldewerk_xml::xpersonenstand::*;
use serde_json::json;

fn spec_json() -> serde_json::Value {
    json!({
        "standortId": "KH-0815",
        "nameEinrichtung": "Klinikum Süd",
        "ansprechpartner": "Jürgen Weiß",
        "anschriftAutor": {
            "gebaeude": {
                "postleitzahl": "80331",
                "strasse": "Große Straße",
                "hausnummer": "12a",
                "wohnort": "München"
            }
        },
        "totgeburt": false,
        "vertraulicheGeburt": false,
        "geburtsangaben": {
            "tag": "2026-11-02",
            "uhrzeit": "10:00",
            "ort": { "strasse": "Kreißsaalweg", "hausnummer": "3", "ort": "München" }
        },
        "kind": {
            "geschlecht": "WEIBLICH",
            "name": { "vornamen": "Lea Marie", "familienname": "Lee" }
        },
        "mehrlingsgeburt": { "anzahlKnaben": 1, "anzahlMaedchen": 1, "anzahlUnbestimmt": 0 },
        "mutter": {
            "standard": {
                "name": { "vornamen": "Sophia", "familienname": "Lee", "geburtsname": "Kim" },
                "geburtsdatum": "1994-05-17",
                "anschrift": {
                    "strasse": "Äußere Straße",
                    "hausnummer": "2",
                    "postleitzahl": "81667",
                    "wohnort": "München"
                }
            }
        },
        "elternteil2": { "name": { "vornamen": "Max", "familienname": "Lee" } },
        "standesamtKennung": "psw:09162000",
        "zuordnungGeburtsanzeige": "GA-2026-0815"
    })
}

#[test]
fn json_im_spec_format_laesst_sich_hin_und_zurueck_wandeln() {
    let original = spec_json();
    let anzeige: Geburtsanzeige = serde_json::from_value(original.clone()).unwrap();
    assert_eq!(
        anzeige.kind.as_ref().unwrap().geschlecht,
        Some(KindGeschlecht::Weiblich)
    );
    assert_eq!(serde_json::to_value(&anzeige).unwrap(), original);
    assert!(anzeige.missing_for_dispatch().is_empty());
    assert_schema_gueltig(&write_geburt_081020(&kopf(), &anzeige).unwrap());
}

#[test]
fn fixtures_ueberstehen_den_json_rundlauf() {
    for a in [
        minimal(),
        maximal(),
        vertraulich(),
        Geburtsanzeige::default(),
    ] {
        let text = serde_json::to_string(&a).unwrap();
        assert_eq!(serde_json::from_str::<Geburtsanzeige>(&text).unwrap(), a);
    }
    assert_eq!(
        serde_json::to_string(&Geburtsanzeige::default()).unwrap(),
        "{}"
    );
}

#[test]
fn vertrauliche_variante_und_totgeburt_im_json() {
    let a: Geburtsanzeige = serde_json::from_value(json!({
        "totgeburt": true,
        "totgeburtAngaben": { "schwangerschaftswoche": 22, "geburtsgewicht": 450 },
        "vertraulicheGeburt": true,
        "mutter": { "vertraulich": { "vornamen": "Maria", "familienname": "Mustermann" } }
    }))
    .unwrap();
    assert_eq!(a.totgeburt_angaben.unwrap().geburtsgewicht, Some(450));
    assert_eq!(
        a.mutter
            .unwrap()
            .vertraulich
            .unwrap()
            .familienname
            .as_deref(),
        Some("Mustermann")
    );
}

#[test]
fn alle_geschlechtswerte_des_moduls() {
    for (wert, erwartet) in [
        ("KEINE_ANGABE", KindGeschlecht::KeineAngabe),
        ("MAENNLICH", KindGeschlecht::Maennlich),
        ("WEIBLICH", KindGeschlecht::Weiblich),
        ("DIVERS", KindGeschlecht::Divers),
    ] {
        let k: Kind = serde_json::from_value(json!({ "geschlecht": wert })).unwrap();
        assert_eq!(k.geschlecht, Some(erwartet));
    }
    assert!(serde_json::from_value::<Kind>(json!({ "geschlecht": "w" })).is_err());
}

#[test]
fn unbekannte_felder_werden_abgelehnt() {
    let mut oben = spec_json();
    oben["geburtsgewicht"] = json!(3200);
    assert!(serde_json::from_value::<Geburtsanzeige>(oben).is_err());

    let mut tief = spec_json();
    tief["mutter"]["standard"]["name"]["rufname"] = json!("Sophie");
    let fehler = serde_json::from_value::<Geburtsanzeige>(tief).unwrap_err();
    assert!(fehler.to_string().contains("rufname"), "{fehler}");

    // id and clientReference belong to the memento request, not to the notice.
    for feld in ["id", "clientReference"] {
        let mut mit = spec_json();
        mit[feld] = json!("X-1");
        assert!(
            serde_json::from_value::<Geburtsanzeige>(mit).is_err(),
            "{feld}"
        );
    }
}

#[test]
fn negative_anzahlen_werden_abgelehnt() {
    let json = json!({ "mehrlingsgeburt": { "anzahlKnaben": -1 } });
    assert!(serde_json::from_value::<Geburtsanzeige>(json).is_err());
}
