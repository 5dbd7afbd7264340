//! Dispatch completeness and value checks of the 081020 writer.

mod common;

use common::*;
use meldewerk_xml::xpersonenstand::*;

const PFLICHT_LEER: [&str; 10] = [
    "nameEinrichtung",
    "anschriftAutor.gebaeude.postleitzahl",
    "anschriftAutor.gebaeude.strasse",
    "anschriftAutor.gebaeude.wohnort",
    "geburtsangaben.tag",
    "geburtsangaben.uhrzeit",
    "kind.geschlecht",
    "mutter.standard.name.vornamen",
    "mutter.standard.name.familienname",
    "mutter.standard.geburtsdatum",
];

fn ungueltiges_feld(a: &Geburtsanzeige) -> &'static str {
    match write_geburt_081020(&kopf(), a) {
        Err(XmlError::InvalidValue { field, .. }) => field,
        anders => panic!("expected InvalidValue, got {anders:?}"),
    }
}

#[test]
fn leere_anzeige_listet_alle_pflichtfelder() {
    assert_eq!(
        Geburtsanzeige::default().missing_for_dispatch(),
        PFLICHT_LEER
    );
}

#[test]
fn vollstaendige_anzeigen_sind_versandbereit() {
    assert!(minimal().missing_for_dispatch().is_empty());
    assert!(maximal().missing_for_dispatch().is_empty());
    assert!(vertraulich().missing_for_dispatch().is_empty());
}

#[test]
fn writer_meldet_fehlendes_pflichtfeld() {
    assert_eq!(
        write_geburt_081020(&kopf(), &Geburtsanzeige::default()),
        Err(XmlError::MissingField("nameEinrichtung"))
    );
    let mut a = minimal();
    a.geburtsangaben.as_mut().unwrap().uhrzeit = Some("   ".into());
    assert_eq!(a.missing_for_dispatch(), ["geburtsangaben.uhrzeit"]);
    assert_eq!(
        write_geburt_081020(&kopf(), &a),
        Err(XmlError::MissingField("geburtsangaben.uhrzeit"))
    );
}

#[test]
fn vertrauliche_geburt_verlangt_pseudonym_statt_standarddaten() {
    let a = Geburtsanzeige {
        vertrauliche_geburt: Some(true),
        ..Default::default()
    };
    let fehlt = a.missing_for_dispatch();
    assert!(fehlt.contains(&"mutter.vertraulich.vornamen"));
    assert!(fehlt.contains(&"mutter.vertraulich.familienname"));
    assert!(!fehlt.iter().any(|p| p.starts_with("mutter.standard")));
}

#[test]
fn optionale_abschnitte_verlangen_ihre_pflichtfelder_erst_wenn_angegeben() {
    let mut a = minimal();
    a.elternteil2 = Some(ZweitesElternteil::default());
    a.mehrlingsgeburt = Some(Mehrlingsgeburt::default());
    a.totgeburt_angaben = Some(TotgeburtAngaben::default());
    assert!(a.missing_for_dispatch().is_empty());
    assert_schema_gueltig(&write_geburt_081020(&kopf(), &a).unwrap());

    a.elternteil2 = Some(ZweitesElternteil {
        name: Some(PersonName {
            geburtsname: Some("Schmidt".into()),
            ..Default::default()
        }),
    });
    a.mehrlingsgeburt = Some(Mehrlingsgeburt {
        anzahl_maedchen: Some(2),
        ..Default::default()
    });
    a.totgeburt = Some(true);
    a.totgeburt_angaben = Some(TotgeburtAngaben {
        schwangerschaftswoche: Some(20),
        geburtsgewicht: None,
    });
    assert_eq!(
        a.missing_for_dispatch(),
        [
            "totgeburtAngaben.geburtsgewicht",
            "elternteil2.name.vornamen",
            "elternteil2.name.familienname",
            "mehrlingsgeburt.anzahlKnaben",
            "mehrlingsgeburt.anzahlUnbestimmt",
        ]
    );
}

#[test]
fn falsches_datum_wird_abgelehnt() {
    for falsch in ["02.11.2026", "2026-11-31", "2026-1-2", "2026-11-02T10:00"] {
        let mut a = minimal();
        a.geburtsangaben.as_mut().unwrap().tag = Some(falsch.into());
        assert_eq!(ungueltiges_feld(&a), "geburtsangaben.tag", "{falsch}");
    }
    let mut a = minimal();
    a.mutter
        .as_mut()
        .unwrap()
        .standard
        .as_mut()
        .unwrap()
        .geburtsdatum = Some("1994-13-01".into());
    assert_eq!(ungueltiges_feld(&a), "mutter.standard.geburtsdatum");
}

#[test]
fn falsche_uhrzeit_wird_abgelehnt() {
    for falsch in ["24:00", "7:30", "07.30", "07:30:00", "1A:00"] {
        let mut a = minimal();
        a.geburtsangaben.as_mut().unwrap().uhrzeit = Some(falsch.into());
        assert_eq!(ungueltiges_feld(&a), "geburtsangaben.uhrzeit", "{falsch}");
    }
}

#[test]
fn schemawidrige_adressen_werden_abgelehnt() {
    let mut a = minimal();
    let g = a
        .anschrift_autor
        .as_mut()
        .unwrap()
        .gebaeude
        .as_mut()
        .unwrap();
    g.postleitzahl = Some("D-10117".into());
    assert_eq!(ungueltiges_feld(&a), "anschriftAutor.gebaeude.postleitzahl");

    let mut a = minimal();
    let g = a
        .anschrift_autor
        .as_mut()
        .unwrap()
        .gebaeude
        .as_mut()
        .unwrap();
    g.hausnummer = Some("12-14".into());
    assert_eq!(ungueltiges_feld(&a), "anschriftAutor.gebaeude.hausnummer");
}

#[test]
fn zeichen_ausserhalb_din_91379_werden_abgelehnt() {
    let mut a = minimal();
    a.name_einrichtung = Some("Клиника".into());
    assert_eq!(ungueltiges_feld(&a), "nameEinrichtung");

    let mut a = minimal();
    a.kind.as_mut().unwrap().name = Some(KindName {
        vornamen: Some("Emma 🙂".into()),
        familienname: None,
    });
    assert_eq!(ungueltiges_feld(&a), "kind.name.vornamen");

    let mut a = minimal();
    a.standesamt_kennung = Some("psw:Ω".into());
    assert_eq!(ungueltiges_feld(&a), "standesamtKennung");
}

#[test]
fn widerspruechliche_angaben_werden_abgelehnt() {
    let mut a = vertraulich();
    a.mutter.as_mut().unwrap().standard = minimal().mutter.unwrap().standard;
    assert_eq!(ungueltiges_feld(&a), "mutter.standard");

    let mut a = minimal();
    a.mutter.as_mut().unwrap().vertraulich = vertraulich().mutter.unwrap().vertraulich;
    assert_eq!(ungueltiges_feld(&a), "mutter.vertraulich");

    let mut a = minimal();
    a.totgeburt_angaben = Some(TotgeburtAngaben {
        schwangerschaftswoche: None,
        geburtsgewicht: Some(350),
    });
    assert_eq!(ungueltiges_feld(&a), "totgeburtAngaben");

    a.totgeburt = Some(true);
    a.totgeburt_angaben.as_mut().unwrap().geburtsgewicht = Some(0);
    assert_eq!(ungueltiges_feld(&a), "totgeburtAngaben.geburtsgewicht");
}

#[test]
fn kopf_ohne_pflichtangaben_wird_abgelehnt() {
    let mut k = kopf();
    k.autor.erreichbarkeit.clear();
    assert_eq!(
        write_geburt_081020(&k, &minimal()),
        Err(XmlError::MissingField("kopf.autor.erreichbarkeit"))
    );
    let mut k = kopf();
    k.leser.name = " ".into();
    assert_eq!(
        write_geburt_081020(&k, &minimal()),
        Err(XmlError::MissingField("kopf.leser.name"))
    );
}
