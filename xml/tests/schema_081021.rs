//! Message 081021 (parents' supplementary birth data): schema validity against the real
//! XPersonenstand 26.11 schema, dispatch completeness, value checks and the JSON shape.

mod common;

use common::geburtsdaten::{andere_zweige, maximal, maximal_json, minimal};
use common::{assert_schema_gueltig, kopf, xmllint};
use meldewerk_xml::xpersonenstand::*;
use serde_json::json;

const PFLICHT_LEER: [&str; 12] = [
    "anschriftAutor.gebaeude.postleitzahl",
    "anschriftAutor.gebaeude.strasse",
    "anschriftAutor.gebaeude.wohnort",
    "geburtsangaben.tag",
    "geburtsangaben.uhrzeit",
    "kind.geschlecht",
    "mutter.namen.vornamen",
    "mutter.namen.familienname",
    "mutter.geschlecht",
    "mutter.staatsangehoerigkeit.code",
    "kontaktdaten",
    "auftragsnummer",
];

fn schreibe(d: &Geburtsdaten) -> String {
    write_geburt_081021(&kopf(), d).unwrap()
}

fn ungueltiges_feld(d: &Geburtsdaten) -> &'static str {
    match write_geburt_081021(&kopf(), d) {
        Err(XmlError::InvalidValue { field, .. }) => field,
        anders => panic!("expected InvalidValue, got {anders:?}"),
    }
}

/// Applies `aendern` to the maximal data and returns the field the writer refuses.
fn abgelehnt(aendern: impl FnOnce(&mut Geburtsdaten)) -> &'static str {
    let mut d = maximal();
    aendern(&mut d);
    ungueltiges_feld(&d)
}

fn s(wert: &str) -> Option<String> {
    Some(wert.into())
}

// ---------------------------------------------------------------- schema validity

#[test]
fn minimale_daten_sind_schemagueltig() {
    let xml = schreibe(&minimal());
    assert_schema_gueltig(&xml);
    for erwartet in [
        "<code>081021</code>",
        "<name>portal2StA.Geburt.081021</name>",
        "<xpsw:ort/>",
        "<xpsw:urkundenbestellung/>",
        "<xpsw:auftragsnummer>EG-2026-000123</xpsw:auftragsnummer>",
    ] {
        assert!(xml.contains(erwartet), "missing {erwartet:?} in\n{xml}");
    }
    for fehlt in [
        "elternteil2",
        "elternVerheiratet",
        "xpsw:ehe",
        "vorgangsidentifikation",
        "zustaendigeElterngeldstelle",
    ] {
        assert!(!xml.contains(fehlt), "unexpected {fehlt:?} in\n{xml}");
    }
}

#[test]
fn maximale_daten_sind_schemagueltig_und_maskiert() {
    let xml = schreibe(&maximal());
    assert_schema_gueltig(&xml);
    for erwartet in [
        "Große Straße &quot;Am Fluß&quot; &amp; &lt;Ecke&gt;",
        "<hausnummerBuchstabeZusatzziffer>a</hausnummerBuchstabeZusatzziffer>",
        "<wohnortFruehererGemeindename>Schwabing</wohnortFruehererGemeindename>",
        "<ereignis.zeitpunkt>2026-11-03T09:12:45.250+01:00</ereignis.zeitpunkt>",
        "<xpsw:uhrzeit>1A:07</xpsw:uhrzeit>",
        "<xpsw:ortsteil>Schwabing-West</xpsw:ortsteil>",
        "<nichtVorhanden>true</nichtVorhanden>",
        "<code>fz</code>",
        "<name>Yılmaz</name>",
        "<xpsw:nichtGelisteterWert>Republik Somaliland</xpsw:nichtGelisteterWert>",
        "<xpsw:elternVerheiratet>true</xpsw:elternVerheiratet>",
        "<xpsw:kinderDerEhe>2</xpsw:kinderDerEhe>",
        "<zusatz>ab 18 Uhr</zusatz>",
        "<xpsw:anzahlCIEC34>1</xpsw:anzahlCIEC34>",
        "<xpsw:zustimmungElterngeldstelle>true</xpsw:zustimmungElterngeldstelle>",
        "<kennung>egs:09162000</kennung>",
        "<postfach>10 12 34</postfach>",
        "GA-2026-11-02/0815 &lt;&amp;&gt;",
    ] {
        assert!(xml.contains(erwartet), "missing {erwartet:?} in\n{xml}");
    }
    assert_eq!(xml.matches("<xpsw:kontaktdaten>").count(), 2);
}

#[test]
fn andere_auswahlzweige_sind_schemagueltig() {
    let xml = schreibe(&andere_zweige());
    assert_schema_gueltig(&xml);
    for erwartet in [
        "<anschrift.autor>\n        <postfach>",
        "<postleitzahl>10999</postleitzahl>",
        "<xpsw:nichtGelisteterWert>Republik Somaliland</xpsw:nichtGelisteterWert>",
        "<name>Lee</name>",
        "<nichtVorhanden>true</nichtVorhanden>",
        "<strasse>Friedrichstraße</strasse>",
    ] {
        assert!(xml.contains(erwartet), "missing {erwartet:?} in\n{xml}");
    }
}

#[test]
fn alle_geschlechter_und_uhrzeiten_mit_a_und_b_sind_schemagueltig() {
    for (geschlecht, code, uhrzeit) in [
        (Geschlecht::Maennlich, "m", "2B:59"),
        (Geschlecht::Weiblich, "w", "00:00"),
        (Geschlecht::KeineAngabe, "x", "29:00"),
        (Geschlecht::Divers, "d", "0A:30"),
    ] {
        let mut d = minimal();
        d.kind.as_mut().unwrap().geschlecht = Some(geschlecht);
        d.geburtsangaben.as_mut().unwrap().uhrzeit = s(uhrzeit);
        let xml = schreibe(&d);
        assert!(xml.contains(&format!("<code>{code}</code>")));
        assert_schema_gueltig(&xml);
    }
}

/// Guards the harness itself: a message the schema must reject is reported as invalid.
#[test]
fn pruefung_erkennt_ungueltige_nachricht() {
    let xml = schreibe(&minimal());
    let kaputt = xml.replace(
        "<xpsw:auftragsnummer>EG-2026-000123</xpsw:auftragsnummer>",
        "",
    );
    assert_ne!(kaputt, xml);
    let (ok, text) = xmllint(&kaputt);
    assert!(
        !ok,
        "xmllint accepted a message without auftragsnummer:\n{text}"
    );
}

// ---------------------------------------------------------------- missing_for_dispatch

#[test]
fn leere_daten_listen_alle_pflichtfelder() {
    assert_eq!(Geburtsdaten::default().missing_for_dispatch(), PFLICHT_LEER);
    assert_eq!(
        write_geburt_081021(&kopf(), &Geburtsdaten::default()),
        Err(XmlError::MissingField(
            "anschriftAutor.gebaeude.postleitzahl"
        ))
    );
}

#[test]
fn vollstaendige_daten_sind_versandbereit() {
    for d in [minimal(), maximal(), andere_zweige()] {
        assert!(d.missing_for_dispatch().is_empty(), "{d:?}");
    }
}

#[test]
fn leere_texte_gelten_als_fehlend() {
    let mut d = minimal();
    d.auftragsnummer = s("   ");
    d.kontaktdaten = Some(vec![Kontakt::default()]);
    assert_eq!(d.missing_for_dispatch(), ["kontaktdaten", "auftragsnummer"]);
    assert_eq!(
        write_geburt_081021(&kopf(), &d),
        Err(XmlError::MissingField("kontaktdaten"))
    );
}

#[test]
fn unberuehrte_abschnitte_blockieren_nicht_und_werden_nicht_geschrieben() {
    let mut d = minimal();
    d.vorgangsidentifikation = Some(Vorgangsidentifikation::default());
    d.elternteil2 = Some(AngabenElternteil2::default());
    d.ehe = Some(AngabenEhe::default());
    d.vorangegangenes_kind = Some(VorangegangenesKind::default());
    d.urkundenbestellung = Some(Urkundenanforderung::default());
    d.zustaendige_elterngeldstelle = Some(BehoerdeMitAnschrift {
        erreichbarkeit: Some(vec![Kontakt::default()]),
        ..Default::default()
    });
    d.kind.as_mut().unwrap().name = Some(PersonNameVeraenderung::default());
    d.mutter.as_mut().unwrap().geburt = Some(AngabenEreignis::default());
    d.mutter.as_mut().unwrap().anschrift = Some(AnschriftInland::default());
    d.kontaktdaten.as_mut().unwrap().push(Kontakt::default());
    assert!(d.missing_for_dispatch().is_empty());
    let xml = schreibe(&d);
    assert_schema_gueltig(&xml);
    assert_eq!(xml, schreibe(&minimal()));
}

#[test]
fn postfach_verlangt_seine_pflichtfelder() {
    let mut d = minimal();
    d.anschrift_autor = Some(PostalischeInlandsanschrift {
        gebaeude: None,
        postfach: Some(InlandsanschriftPostfach {
            postfach: s("12 34"),
            ..Default::default()
        }),
    });
    assert_eq!(
        d.missing_for_dispatch(),
        [
            "anschriftAutor.postfach.wohnort",
            "anschriftAutor.postfach.postleitzahl"
        ]
    );
}

#[test]
fn optionale_abschnitte_verlangen_ihre_pflichtfelder_erst_wenn_angegeben() {
    let mut d = minimal();
    d.vorgangsidentifikation = Some(Vorgangsidentifikation {
        ereignis: Some(Vorgangsereignis {
            zeitpunkt: None,
            zeichen: s("VG-1"),
        }),
    });
    d.kind.as_mut().unwrap().name = Some(PersonNameVeraenderung {
        familienname: Some(AllgemeinerName {
            namensart_code: s("fz"),
            ..Default::default()
        }),
        vornamen: None,
    });
    d.mutter.as_mut().unwrap().geburt = Some(AngabenEreignis {
        ort: Some(EreignisortErweitert {
            ort: s("Köln"),
            ..Default::default()
        }),
        tag: None,
    });
    d.elternteil2 = Some(AngabenElternteil2 {
        geschlecht: Some(Geschlecht::Maennlich),
        geburt: Some(AngabenEreignis {
            ort: Some(EreignisortErweitert {
                ortsteil: s("Mitte"),
                ..Default::default()
            }),
            tag: None,
        }),
        ..Default::default()
    });
    d.eltern_verheiratet = Some(true);
    d.ehe = Some(AngabenEhe {
        ereignis: Some(AngabenEreignis {
            ort: Some(EreignisortErweitert {
                kreisbezeichnung: s("Kreis X"),
                ..Default::default()
            }),
            tag: None,
        }),
        ..Default::default()
    });
    d.vorangegangenes_kind = Some(VorangegangenesKind {
        namen: Some(PersonName {
            geburtsname: s("Lee"),
            ..Default::default()
        }),
        geburt: None,
    });
    d.kontaktdaten = Some(vec![Kontakt {
        kanal: s("01"),
        ..Default::default()
    }]);
    d.zustaendige_elterngeldstelle = Some(BehoerdeMitAnschrift {
        erreichbarkeit: Some(vec![Kontakt {
            zusatz: s("vormittags"),
            ..Default::default()
        }]),
        anschrift: Some(PostalischeInlandsanschrift {
            gebaeude: Some(InlandsanschriftGebaeude {
                hausnummer: s("1"),
                ..Default::default()
            }),
            postfach: None,
        }),
        ..Default::default()
    });
    assert_eq!(
        d.missing_for_dispatch(),
        [
            "vorgangsidentifikation.ereignis.zeitpunkt",
            "kind.name.familienname.name",
            "mutter.geburt.tag",
            "elternteil2.namen.vornamen",
            "elternteil2.namen.familienname",
            "elternteil2.geburt.tag",
            "elternteil2.staatsangehoerigkeit.code",
            "ehe.ereignis.tag",
            "vorangegangenesKind.namen.vornamen",
            "vorangegangenesKind.namen.familienname",
            "vorangegangenesKind.geburt.tag",
            "kontaktdaten.kennung",
            "zustaendigeElterngeldstelle.kennung",
            "zustaendigeElterngeldstelle.name",
            "zustaendigeElterngeldstelle.erreichbarkeit.kanal",
            "zustaendigeElterngeldstelle.erreichbarkeit.kennung",
            "zustaendigeElterngeldstelle.anschrift.gebaeude.postleitzahl",
            "zustaendigeElterngeldstelle.anschrift.gebaeude.strasse",
            "zustaendigeElterngeldstelle.anschrift.gebaeude.wohnort",
        ]
    );
}

// ---------------------------------------------------------------- value checks

#[test]
fn falsche_daten_werden_abgelehnt() {
    let tag = |e: &mut Option<AngabenEreignis>| e.as_mut().unwrap().tag = s("2026-02-30");
    assert_eq!(
        abgelehnt(|d| d.geburtsangaben.as_mut().unwrap().tag = s("02.11.2026")),
        "geburtsangaben.tag"
    );
    assert_eq!(
        abgelehnt(|d| tag(&mut d.mutter.as_mut().unwrap().geburt)),
        "mutter.geburt.tag"
    );
    assert_eq!(
        abgelehnt(|d| d.mutter.as_mut().unwrap().geburtsdatum_vorheriges_kind = s("2023-7-14")),
        "mutter.geburtsdatumVorherigesKind"
    );
    assert_eq!(
        abgelehnt(|d| tag(&mut d.elternteil2.as_mut().unwrap().geburt)),
        "elternteil2.geburt.tag"
    );
    assert_eq!(
        abgelehnt(|d| tag(&mut d.ehe.as_mut().unwrap().ereignis)),
        "ehe.ereignis.tag"
    );
    assert_eq!(
        abgelehnt(|d| tag(&mut d.vorangegangenes_kind.as_mut().unwrap().geburt)),
        "vorangegangenesKind.geburt.tag"
    );
}

#[test]
fn falsche_uhrzeit_und_falscher_zeitpunkt_werden_abgelehnt() {
    for falsch in ["30:00", "1C:00", "7:30", "07:60", "07:30:00", "1a:00"] {
        let f = abgelehnt(|d| d.geburtsangaben.as_mut().unwrap().uhrzeit = s(falsch));
        assert_eq!(f, "geburtsangaben.uhrzeit", "{falsch}");
    }
    fn ereignis(d: &mut Geburtsdaten) -> &mut Vorgangsereignis {
        let v = d.vorgangsidentifikation.as_mut().unwrap();
        v.ereignis.as_mut().unwrap()
    }
    for falsch in ["2026-11-03", "2026-11-03 09:12:45Z", "2026-11-03T09:12:45"] {
        let f = abgelehnt(|d| ereignis(d).zeitpunkt = s(falsch));
        assert_eq!(f, "vorgangsidentifikation.ereignis.zeitpunkt", "{falsch}");
    }
    let f = abgelehnt(|d| ereignis(d).zeichen = Some("x".repeat(101)));
    assert_eq!(f, "vorgangsidentifikation.ereignis.zeichen");
}

#[test]
fn schemawidrige_adressen_werden_abgelehnt() {
    fn gebaeude(d: &mut Geburtsdaten) -> &mut InlandsanschriftGebaeude {
        let a = d.anschrift_autor.as_mut().unwrap();
        a.gebaeude.as_mut().unwrap()
    }
    assert_eq!(
        abgelehnt(|d| gebaeude(d).postleitzahl = s("803310")),
        "anschriftAutor.gebaeude.postleitzahl"
    );
    assert_eq!(
        abgelehnt(|d| gebaeude(d).hausnummer = s("12-14")),
        "anschriftAutor.gebaeude.hausnummer"
    );
    let mut d = andere_zweige();
    let f = d
        .anschrift_autor
        .as_mut()
        .unwrap()
        .postfach
        .as_mut()
        .unwrap();
    f.postleitzahl = s("D-10999");
    assert_eq!(ungueltiges_feld(&d), "anschriftAutor.postfach.postleitzahl");
    assert_eq!(
        abgelehnt(|d| {
            let a = d.mutter.as_mut().unwrap().anschrift.as_mut().unwrap();
            a.postleitzahl = s("8166A");
        }),
        "mutter.anschrift.postleitzahl"
    );
    assert_eq!(
        abgelehnt(|d| {
            let a = d.elternteil2.as_mut().unwrap().anschrift.as_mut().unwrap();
            a.hausnummer = s("7 Hinterhaus");
        }),
        "elternteil2.anschrift.hausnummer"
    );
    assert_eq!(
        abgelehnt(|d| {
            let b = d.zustaendige_elterngeldstelle.as_mut().unwrap();
            let p = b.anschrift.as_mut().unwrap().postfach.as_mut().unwrap();
            p.postleitzahl = s("123456");
        }),
        "zustaendigeElterngeldstelle.anschrift.postfach.postleitzahl"
    );
}

#[test]
fn zeichen_ausserhalb_din_91379_werden_abgelehnt() {
    assert_eq!(
        abgelehnt(|d| {
            let n = d.mutter.as_mut().unwrap().namen.as_mut().unwrap();
            n.familienname = s("Иванова");
        }),
        "mutter.namen.familienname"
    );
    assert_eq!(
        abgelehnt(|d| d.kontaktdaten.as_mut().unwrap()[1].kennung = s("☎ 0170")),
        "kontaktdaten.kennung"
    );
    assert_eq!(
        abgelehnt(|d| {
            let o = d.geburtsangaben.as_mut().unwrap().ort.as_mut().unwrap();
            o.ortsteil = s("Mitte\u{7}");
        }),
        "geburtsangaben.ort.ortsteil"
    );
    assert_eq!(
        abgelehnt(|d| d.auftragsnummer = s("EG-😀")),
        "auftragsnummer"
    );
}

#[test]
fn auswahl_verlangt_genau_einen_zweig() {
    assert_eq!(
        abgelehnt(|d| {
            let a = d.anschrift_autor.as_mut().unwrap();
            a.postfach = andere_zweige().anschrift_autor.unwrap().postfach;
        }),
        "anschriftAutor"
    );
    assert_eq!(
        abgelehnt(|d| {
            let b = d.zustaendige_elterngeldstelle.as_mut().unwrap();
            b.anschrift.as_mut().unwrap().gebaeude = minimal().anschrift_autor.unwrap().gebaeude;
        }),
        "zustaendigeElterngeldstelle.anschrift"
    );
    assert_eq!(
        abgelehnt(|d| {
            let s = d.mutter.as_mut().unwrap().staatsangehoerigkeit.as_mut();
            s.unwrap().nicht_gelisteter_wert = Some("Atlantis".into());
        }),
        "mutter.staatsangehoerigkeit"
    );
    assert_eq!(
        abgelehnt(|d| {
            let n = d.kind.as_mut().unwrap().name.as_mut().unwrap();
            n.familienname.as_mut().unwrap().name = s("Lee");
        }),
        "kind.name.familienname"
    );
}

#[test]
fn codes_ausserhalb_der_listen_werden_abgelehnt() {
    for falsch in ["DE", "DEU", "1", "0000"] {
        let f = abgelehnt(|d| {
            let st = d
                .elternteil2
                .as_mut()
                .unwrap()
                .staatsangehoerigkeit
                .as_mut();
            st.unwrap().code = s(falsch);
        });
        assert_eq!(f, "elternteil2.staatsangehoerigkeit.code", "{falsch}");
    }
    assert_eq!(
        abgelehnt(|d| {
            let n = d.kind.as_mut().unwrap().name.as_mut().unwrap();
            n.vornamen.as_mut().unwrap().namensart_code = s("xx");
        }),
        "kind.name.vornamen.namensartCode"
    );
    assert!(serde_json::from_value::<Neugeborenes>(json!({ "geschlecht": "WEIBLICH" })).is_err());
}

#[test]
fn nur_wahr_felder_lehnen_false_ab() {
    assert_eq!(
        abgelehnt(|d| d.eltern_verheiratet = Some(false)),
        "elternVerheiratet"
    );
    assert_eq!(
        abgelehnt(|d| d.zustimmung_elterngeldstelle = Some(false)),
        "zustimmungElterngeldstelle"
    );
    assert_eq!(
        abgelehnt(|d| {
            let n = d.kind.as_mut().unwrap().name.as_mut().unwrap();
            n.familienname.as_mut().unwrap().nicht_vorhanden = Some(false);
        }),
        "kind.name.familienname.nichtVorhanden"
    );
}

#[test]
fn ehe_nur_mit_verheirateten_eltern() {
    assert_eq!(abgelehnt(|d| d.eltern_verheiratet = None), "ehe");
    let mut d = maximal();
    d.eltern_verheiratet = None;
    d.ehe = None;
    assert_schema_gueltig(&schreibe(&d));
}

#[test]
fn anzahlen_unter_dem_minimum_werden_abgelehnt() {
    assert_eq!(
        abgelehnt(|d| d.mutter.as_mut().unwrap().anzahl_kinder = Some(0)),
        "mutter.anzahlKinder"
    );
    assert_eq!(
        abgelehnt(|d| d.ehe.as_mut().unwrap().kinder_der_ehe = Some(0)),
        "ehe.kinderDerEhe"
    );
    let negativ = json!({ "urkundenbestellung": { "anzahlCIEC16": -1 } });
    assert!(serde_json::from_value::<Geburtsdaten>(negativ).is_err());
}

#[test]
fn kopf_ohne_erreichbarkeit_des_autors_wird_abgelehnt() {
    let mut k = kopf();
    k.autor.erreichbarkeit.clear();
    assert_eq!(
        write_geburt_081021(&k, &minimal()),
        Err(XmlError::MissingField("kopf.autor.erreichbarkeit"))
    );
}

// ---------------------------------------------------------------- JSON shape

#[test]
fn json_im_vertragsformat_laesst_sich_hin_und_zurueck_wandeln() {
    let original = maximal_json();
    let daten: Geburtsdaten = serde_json::from_value(original.clone()).unwrap();
    assert_eq!(daten, maximal());
    assert_eq!(serde_json::to_value(&daten).unwrap(), original);
    for d in [minimal(), andere_zweige(), Geburtsdaten::default()] {
        let text = serde_json::to_string(&d).unwrap();
        assert_eq!(serde_json::from_str::<Geburtsdaten>(&text).unwrap(), d);
    }
    assert_eq!(
        serde_json::to_string(&Geburtsdaten::default()).unwrap(),
        "{}"
    );
}

#[test]
fn unbekannte_felder_werden_abgelehnt() {
    // `id` belongs to the memento request, not to the data.
    let mut oben = maximal_json();
    oben["id"] = json!("R-1");
    assert!(serde_json::from_value::<Geburtsdaten>(oben).is_err());

    for (pfad, feld) in [
        (&["anschriftAutor", "gebaeude"][..], "hausnr"),
        (&["vorgangsidentifikation", "ereignis"][..], "datum"),
        (&["kind", "name", "familienname"][..], "namensart"),
        (&["mutter", "staatsangehoerigkeit"][..], "iso"),
        (&["elternteil2", "geburt", "ort"][..], "staat"),
        (&["urkundenbestellung"][..], "anzahlCIEC99"),
        (
            &["zustaendigeElterngeldstelle", "anschrift", "postfach"][..],
            "land",
        ),
    ] {
        let mut tief = maximal_json();
        let mut ziel = &mut tief;
        for teil in pfad {
            ziel = &mut ziel[*teil];
        }
        ziel[feld] = json!("x");
        let fehler = serde_json::from_value::<Geburtsdaten>(tief).unwrap_err();
        assert!(
            fehler.to_string().contains(feld),
            "{pfad:?}.{feld}: {fehler}"
        );
    }
    let mut liste = maximal_json();
    liste["kontaktdaten"][0]["typ"] = json!("x");
    assert!(serde_json::from_value::<Geburtsdaten>(liste).is_err());
}
