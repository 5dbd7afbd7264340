//! Death notices 084020, 084021 and 084040: schema validity against XPersonenstand 26.11,
//! value checks, dispatch completeness and the JSON shape of the slots.

mod common;

use common::sterbefall::*;
use common::*;
use meldewerk_xml::xpersonenstand::*;
use serde_json::json;

fn ungueltig<T: std::fmt::Debug>(r: Result<T, XmlError>) -> &'static str {
    match r {
        Err(XmlError::InvalidValue { field, .. }) => field,
        anders => panic!("expected InvalidValue, got {anders:?}"),
    }
}

// --- schema validity -------------------------------------------------------------------

#[test]
fn einrichtung_minimal_ist_schemagueltig() {
    let xml = write_sterbefall_084020(&kopf(), &einrichtung_minimal()).unwrap();
    assert_schema_gueltig(&xml);
    for erwartet in [
        "<code>084020</code>",
        "<xpsw:todestag>2026-11-20</xpsw:todestag>",
        r#"<xpsw:todeszeit exakt="true">14:30</xpsw:todeszeit>"#,
        "<code>x</code>",
        "<xpsw:nameOrganisation>Klinikum Mitte</xpsw:nameOrganisation>",
    ] {
        assert!(xml.contains(erwartet), "missing {erwartet:?} in\n{xml}");
    }
    assert!(!xml.contains("leichenID"));
    assert!(!xml.contains("xpsw:ansprechpartner"));
}

#[test]
fn einrichtung_maximal_ist_schemagueltig() {
    let xml = write_sterbefall_084020(&kopf(), &einrichtung_maximal()).unwrap();
    assert_schema_gueltig(&xml);
    for erwartet in [
        "<xpsw:ansprechpartner>Jürgen Weiß</xpsw:ansprechpartner>",
        "<xpsw:nameNatuerlichePerson>",
        r#"<xpsw:todeszeit exakt="false">23:45</xpsw:todeszeit>"#,
        "<xpsw:plz>81667</xpsw:plz>",
        "Äußere Wiener Straße 3 &amp; &lt;Hof&gt;",
        "<zusatz>werktags 8-16 Uhr</zusatz>",
        "<xpsw:leichenID>L-2026-0815</xpsw:leichenID>",
        "<code>w</code>",
    ] {
        assert!(xml.contains(erwartet), "missing {erwartet:?} in\n{xml}");
    }
    // the blank contact row is skipped
    assert_eq!(xml.matches("<xpsw:kontaktdaten>").count(), 2);
}

#[test]
fn alle_geschlechter_sind_schemagueltig() {
    for (g, code) in [
        (GeschlechtVerstorbener::Maennlich, "m"),
        (GeschlechtVerstorbener::Weiblich, "w"),
        (GeschlechtVerstorbener::Divers, "d"),
        (GeschlechtVerstorbener::Unbestimmt, "x"),
    ] {
        let mut x = einrichtung_minimal();
        x.verstorbener.as_mut().unwrap().geschlecht = Some(g);
        let xml = write_sterbefall_084020(&kopf(), &x).unwrap();
        assert!(xml.contains(&format!("<code>{code}</code>")));
        assert_schema_gueltig(&xml);
    }
}

#[test]
fn bestatter_minimal_ist_schemagueltig() {
    let xml = write_sterbefall_084021(&kopf(), &bestatter_minimal()).unwrap();
    assert_schema_gueltig(&xml);
    assert!(xml.contains("<code>084021</code>"));
    assert!(!xml.contains("<xpsw:sterbefall>"));
}

#[test]
fn bestatter_maximal_ist_schemagueltig() {
    let xml = write_sterbefall_084021(&kopf(), &bestatter_maximal()).unwrap();
    assert_schema_gueltig(&xml);
    for erwartet in [
        "<xpsw:sterbezeitraum>",
        "<xpsw:mitSicherheitTotUhrzeit>09:30</xpsw:mitSicherheitTotUhrzeit>",
        "<xpsw:partnerVerstorbener>",
        "<xpsw:auskunftsgeber>",
        "<code>VH</code>",
        "<xpsw:vollwaise>true</xpsw:vollwaise>",
        "<code>2</code>",
        "<xpsw:anzahlCIEC16>1</xpsw:anzahlCIEC16>",
        "<xpsw:abholungImStandesamt>true</xpsw:abholungImStandesamt>",
        "<xpsw:leichenID>L-2026-0815</xpsw:leichenID>",
    ] {
        assert!(xml.contains(erwartet), "missing {erwartet:?} in\n{xml}");
    }
}

#[test]
fn bescheinigung_minimal_ist_schemagueltig() {
    let xml = write_sterbefall_084040(&kopf(), &bescheinigung_minimal()).unwrap();
    assert_schema_gueltig(&xml);
    for erwartet in [
        "<code>084040</code>",
        "<xpsw:sterbeort>true</xpsw:sterbeort>",
        "<xpsw:ereignisort/>",
        "<xpsw:anschriftArzt/>",
        "<xpsw:unbekannt>true</xpsw:unbekannt>",
        "<xpsw:ansprechpartner>Eva Ärztin</xpsw:ansprechpartner>",
    ] {
        assert!(xml.contains(erwartet), "missing {erwartet:?} in\n{xml}");
    }
}

#[test]
fn bescheinigung_maximal_ist_schemagueltig() {
    let xml = write_sterbefall_084040(&kopf(), &bescheinigung_maximal()).unwrap();
    assert_schema_gueltig(&xml);
    for erwartet in [
        "<jahrMonatTag>1940-12-24</jahrMonatTag>",
        "<xpsw:anschriftInland>",
        "<code>EPR</code>",
        r#"<xpsw:uhrzeit exakt="true">10:05</xpsw:uhrzeit>"#,
        "<hausnummerBuchstabeZusatzziffer>1/2</hausnummerBuchstabeZusatzziffer>",
        "<xpsw:natuerlicherTod>true</xpsw:natuerlicherTod>",
        "Müller &amp; Söhne &lt;Test&gt;",
    ] {
        assert!(xml.contains(erwartet), "missing {erwartet:?} in\n{xml}");
    }
    // found, not died there; totgeburt false is not written
    assert!(!xml.contains("<xpsw:sterbeort>"));
    assert!(!xml.contains("totgeburt"));
}

/// Guards the harness for the new root elements.
#[test]
fn pruefung_erkennt_ungueltige_sterbefallnachricht() {
    let xml = write_sterbefall_084040(&kopf(), &bescheinigung_minimal()).unwrap();
    let kaputt = xml.replace("<xpsw:leichenID>L-2026-0815</xpsw:leichenID>", "");
    assert_ne!(kaputt, xml);
    assert!(
        !xmllint(&kaputt).0,
        "xmllint accepted 084040 without leichenID"
    );
}

// --- value checks ----------------------------------------------------------------------

#[test]
fn zeitpunkt_ohne_offset_wird_abgelehnt() {
    for falsch in [
        "2026-11-20T14:30:00",
        "2026-11-20 14:30:00+01:00",
        "2026-11-31T14:30:00+01:00",
        "gestern",
    ] {
        let mut x = einrichtung_minimal();
        let t = x
            .sterbefall
            .as_mut()
            .unwrap()
            .todeszeitpunkt
            .as_mut()
            .unwrap();
        t.todestag.as_mut().unwrap().zeitpunkt = Some(falsch.into());
        assert_eq!(
            ungueltig(write_sterbefall_084020(&kopf(), &x)),
            "sterbefall.todeszeitpunkt.todestag.zeitpunkt",
            "{falsch}"
        );
    }
}

#[test]
fn datum_uhrzeit_plz_hausnummer_werden_geprueft() {
    let mut x = einrichtung_minimal();
    x.verstorbener.as_mut().unwrap().geburtstag = Some("1931-2-28".into());
    assert_eq!(
        ungueltig(write_sterbefall_084020(&kopf(), &x)),
        "verstorbener.geburtstag"
    );

    let mut x = einrichtung_minimal();
    x.verstorbener.as_mut().unwrap().letzter_wohnsitz = Some(Wohnanschrift {
        plz: Some("D-8166".into()),
        ..Default::default()
    });
    assert_eq!(
        ungueltig(write_sterbefall_084020(&kopf(), &x)),
        "verstorbener.letzterWohnsitz.plz"
    );

    let mut x = bestatter_maximal();
    let t = x
        .sterbefall
        .as_mut()
        .unwrap()
        .todeszeitpunkt
        .as_mut()
        .unwrap();
    t.sterbezeitraum
        .as_mut()
        .unwrap()
        .mit_sicherheit_tot_uhrzeit = Some("24:00".into());
    assert_eq!(
        ungueltig(write_sterbefall_084021(&kopf(), &x)),
        "sterbefall.todeszeitpunkt.sterbezeitraum.mitSicherheitTotUhrzeit"
    );

    let mut x = bescheinigung_maximal();
    let l = x.angaben_leichenschau.as_mut().unwrap();
    l.anschrift_arzt.as_mut().unwrap().hausnummer = Some("12-14".into());
    assert_eq!(
        ungueltig(write_sterbefall_084040(&kopf(), &x)),
        "angabenLeichenschau.anschriftArzt.hausnummer"
    );

    let mut x = bescheinigung_maximal();
    x.angaben_leichenschau.as_mut().unwrap().datum = Some("19.11.2026".into());
    assert_eq!(
        ungueltig(write_sterbefall_084040(&kopf(), &x)),
        "angabenLeichenschau.datum"
    );
}

#[test]
fn text_ausserhalb_din_91379_wird_abgelehnt() {
    let mut x = einrichtung_minimal();
    x.verstorbener.as_mut().unwrap().familienname = Some("Иванов".into());
    assert_eq!(
        ungueltig(write_sterbefall_084020(&kopf(), &x)),
        "verstorbener.familienname"
    );
    let mut x = bestatter_maximal();
    x.auskunftsgeber.as_mut().unwrap().verhaeltnis_verstorbener = Some("Nichte 🙂".into());
    assert_eq!(
        ungueltig(write_sterbefall_084021(&kopf(), &x)),
        "auskunftsgeber.verhaeltnisVerstorbener"
    );
    let mut x = bescheinigung_minimal();
    x.leichen_id = Some("L\u{7}1".into());
    assert_eq!(ungueltig(write_sterbefall_084040(&kopf(), &x)), "leichenID");
}

#[test]
fn codes_und_widersprueche_werden_abgelehnt() {
    let mut x = bestatter_maximal();
    x.verstorbener.as_mut().unwrap().familienstand = Some("verheiratet".into());
    assert_eq!(
        ungueltig(write_sterbefall_084021(&kopf(), &x)),
        "verstorbener.familienstand"
    );

    let mut x = bestatter_maximal();
    x.anzahl_kinder_volljaehrig = Some(0);
    assert_eq!(
        ungueltig(write_sterbefall_084021(&kopf(), &x)),
        "anzahlKinderVolljaehrig"
    );

    let mut x = bescheinigung_maximal();
    x.verstorbener.as_mut().unwrap().identifizierung = Some("Ausweis".into());
    assert_eq!(
        ungueltig(write_sterbefall_084040(&kopf(), &x)),
        "verstorbener.identifizierung"
    );

    let mut x = bescheinigung_maximal();
    x.angaben_leichenschau.as_mut().unwrap().uhrzeit_unbekannt = Some(true);
    assert_eq!(
        ungueltig(write_sterbefall_084040(&kopf(), &x)),
        "angabenLeichenschau.uhrzeitUnbekannt"
    );

    // a known day and a period at the same time
    let mut x = einrichtung_minimal();
    let t = x
        .sterbefall
        .as_mut()
        .unwrap()
        .todeszeitpunkt
        .as_mut()
        .unwrap();
    t.sterbezeitraum = Some(Sterbezeitraum {
        mit_sicherheit_tot_tag: Some("2026-11-20".into()),
        ..Default::default()
    });
    assert_eq!(
        ungueltig(write_sterbefall_084020(&kopf(), &x)),
        "sterbefall.todeszeitpunkt"
    );
}

#[test]
fn geschlecht_ausserhalb_der_liste_wird_beim_lesen_abgelehnt() {
    let r: Result<Verstorbener, _> = serde_json::from_value(json!({ "geschlecht": "m" }));
    assert!(r.is_err());
    let r: Result<Verstorbener, _> = serde_json::from_value(json!({ "geschlecht": "MAENNLICH" }));
    assert!(r.is_err());
}

// --- missing_for_dispatch --------------------------------------------------------------

const EINRICHTUNG_LEER: [&str; 10] = [
    "anschriftAutor.gebaeude.postleitzahl",
    "anschriftAutor.gebaeude.strasse",
    "anschriftAutor.gebaeude.wohnort",
    "sterbefall.todeszeitpunkt.todestag.zeitpunkt",
    "sterbefall.todeszeitpunkt.todestag.uhrzeitExakt",
    "sterbefall.sterbeort.ort",
    "verstorbener.familienname",
    "verstorbener.geschlecht",
    "anzeigender.nameOrganisation",
    "anzeigender.kontaktdaten",
];

#[test]
fn leere_slots_listen_alle_pflichtfelder() {
    assert_eq!(
        SterbefallEinrichtung::default().missing_for_dispatch(),
        EINRICHTUNG_LEER
    );
    assert_eq!(
        SterbefallBestatter::default().missing_for_dispatch(),
        [
            "anschriftAutor.gebaeude.postleitzahl",
            "anschriftAutor.gebaeude.strasse",
            "anschriftAutor.gebaeude.wohnort",
            "verstorbener.familienname",
            "verstorbener.geschlecht",
            "anzeigender.nameOrganisation",
            "anzeigender.kontaktdaten",
        ]
    );
    assert_eq!(
        Todesbescheinigung::default().missing_for_dispatch(),
        [
            "anschriftAutor.gebaeude.postleitzahl",
            "anschriftAutor.gebaeude.strasse",
            "anschriftAutor.gebaeude.wohnort",
            "verstorbener.familienname",
            "verstorbener.geschlecht",
            "sterbefall.todeszeitpunkt.todestag.zeitpunkt",
            "sterbefall.todeszeitpunkt.todestag.uhrzeitExakt",
            "angabenLeichenschau.namenArzt.vornamen",
            "angabenLeichenschau.namenArzt.familienname",
            "angabenLeichenschau.kontaktArzt",
            "angabenLeichenschau.datum",
            "angabenLeichenschau.uhrzeit",
            "angabenLeichenschau.uhrzeitExakt",
            "angabenLeichenschau.ort",
            "leichenID",
        ]
    );
}

#[test]
fn vollstaendige_slots_sind_versandbereit() {
    assert!(einrichtung_minimal().missing_for_dispatch().is_empty());
    assert!(einrichtung_maximal().missing_for_dispatch().is_empty());
    assert!(bestatter_minimal().missing_for_dispatch().is_empty());
    assert!(bestatter_maximal().missing_for_dispatch().is_empty());
    assert!(bescheinigung_minimal().missing_for_dispatch().is_empty());
    assert!(bescheinigung_maximal().missing_for_dispatch().is_empty());
}

#[test]
fn angefangene_abschnitte_verlangen_ihre_pflichtfelder() {
    let mut x = einrichtung_minimal();
    let a = x.anzeigender.as_mut().unwrap();
    a.ansprechpartner = Some(PersonName {
        vornamen: Some("Jürgen".into()),
        ..Default::default()
    });
    a.kontaktdaten = Some(vec![Kontakt {
        kennung: Some("x@example.org".into()),
        ..Default::default()
    }]);
    assert_eq!(
        x.missing_for_dispatch(),
        [
            "anzeigender.ansprechpartner.familienname",
            "anzeigender.kontaktdaten[].kanal"
        ]
    );
    assert_eq!(
        write_sterbefall_084020(&kopf(), &x),
        Err(XmlError::MissingField(
            "anzeigender.ansprechpartner.familienname"
        ))
    );

    let mut x = bestatter_minimal();
    x.partner_verstorbener = Some(PartnerVerstorbener {
        vorname: Some("Maria".into()),
        ..Default::default()
    });
    x.auskunftsgeber = Some(Auskunftsgeber {
        familienname: Some("Nichte".into()),
        ..Default::default()
    });
    x.sterbefall = Some(Sterbefall {
        todeszeitpunkt: Some(Todeszeitpunkt {
            todestag: None,
            sterbezeitraum: Some(Sterbezeitraum {
                letzter_tag_lebend: Some("2026-11-17".into()),
                ..Default::default()
            }),
        }),
        sterbeort: None,
    });
    assert_eq!(
        x.missing_for_dispatch(),
        [
            "sterbefall.todeszeitpunkt.sterbezeitraum.mitSicherheitTotTag",
            "sterbefall.todeszeitpunkt.sterbezeitraum.mitSicherheitTotUhrzeit",
            "sterbefall.sterbeort.ort",
            "partnerVerstorbener.familienname",
            "partnerVerstorbener.geschlecht",
            "auskunftsgeber.kontaktdaten",
        ]
    );

    let mut x = bescheinigung_minimal();
    let l = x.angaben_leichenschau.as_mut().unwrap();
    l.uhrzeit_unbekannt = None;
    l.uhrzeit = Some("10:00".into());
    assert_eq!(
        x.missing_for_dispatch(),
        ["angabenLeichenschau.uhrzeitExakt"]
    );
    x.leichen_id = Some("  ".into());
    assert_eq!(
        write_sterbefall_084040(&kopf(), &x),
        Err(XmlError::MissingField("angabenLeichenschau.uhrzeitExakt"))
    );
}

// --- JSON shape ------------------------------------------------------------------------

#[test]
fn leere_slot_objekte_werden_gelesen() {
    let e: SterbefallEinrichtung = serde_json::from_str("{}").unwrap();
    assert_eq!(e, SterbefallEinrichtung::default());
    let b: SterbefallBestatter = serde_json::from_str("{}").unwrap();
    assert_eq!(b, SterbefallBestatter::default());
    let t: Todesbescheinigung = serde_json::from_str("{}").unwrap();
    assert_eq!(t, Todesbescheinigung::default());
}

#[test]
fn unbekannte_felder_werden_abgelehnt() {
    assert!(serde_json::from_value::<SterbefallEinrichtung>(json!({ "leichenId": "x" })).is_err());
    assert!(serde_json::from_value::<SterbefallEinrichtung>(
        json!({ "verstorbener": { "vornamen": "Anna" } })
    )
    .is_err());
    assert!(serde_json::from_value::<SterbefallBestatter>(json!({ "todesart": "x" })).is_err());
    assert!(serde_json::from_value::<Todesbescheinigung>(
        json!({ "angabenLeichenschau": { "arzt": "Eva" } })
    )
    .is_err());
}

#[test]
fn einrichtung_in_vertragsform_wird_gelesen_und_geschrieben() {
    let json = json!({
        "anzeigender": {
            "nameOrganisation": "Klinikum Süd",
            "ansprechpartner": { "vornamen": "Jürgen", "familienname": "Weiß" },
            "kontaktdaten": [ { "kanal": "01", "kennung": "station@example.org" } ]
        },
        "verstorbener": {
            "vorname": "Anna",
            "familienname": "Lee",
            "geburtsname": "Kim",
            "geburtstag": "1931-02-28",
            "geschlecht": "weiblich",
            "letzterWohnsitz": { "strasse": "Große Straße 2", "plz": "80331", "ort": "München" }
        },
        "sterbefall": {
            "todeszeitpunkt": {
                "todestag": { "zeitpunkt": "2026-11-20T14:30:00+01:00", "uhrzeitExakt": true }
            },
            "sterbeort": { "strasse": "Kliniksweg", "hausnummer": "3", "ort": "München" }
        },
        "leichenID": "L-2026-0815"
    });
    let mut x: SterbefallEinrichtung = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(x.leichen_id.as_deref(), Some("L-2026-0815"));
    assert_eq!(
        x.verstorbener.as_ref().unwrap().geschlecht,
        Some(GeschlechtVerstorbener::Weiblich)
    );
    // Serialising gives back the same JSON.
    assert_eq!(serde_json::to_value(&x).unwrap(), json);
    assert_eq!(
        x.missing_for_dispatch(),
        [
            "anschriftAutor.gebaeude.postleitzahl",
            "anschriftAutor.gebaeude.strasse",
            "anschriftAutor.gebaeude.wohnort",
        ]
    );
    x.anschrift_autor = einrichtung_minimal().anschrift_autor;
    assert_schema_gueltig(&write_sterbefall_084020(&kopf(), &x).unwrap());
}

#[test]
fn bestatter_und_bescheinigung_ueberstehen_json_rundreise() {
    let b = bestatter_maximal();
    let wert = serde_json::to_value(&b).unwrap();
    assert_eq!(wert["artDerBestattung"], "feuerbestattung");
    assert_eq!(wert["zahlDerUrkunden"]["anzahlCIEC16"], 1);
    assert_eq!(
        serde_json::from_value::<SterbefallBestatter>(wert).unwrap(),
        b
    );
    let t = bescheinigung_maximal();
    let wert = serde_json::to_value(&t).unwrap();
    assert_eq!(wert["leichenID"], "L-2026-0815");
    assert_eq!(
        serde_json::from_value::<Todesbescheinigung>(wert).unwrap(),
        t
    );
}
