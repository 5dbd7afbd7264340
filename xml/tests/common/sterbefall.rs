//! Fixtures for the death notices 084020, 084021 and 084040.

use meldewerk_xml::xpersonenstand::*;

fn anschrift_autor() -> Option<AnschriftAutor> {
    Some(AnschriftAutor {
        gebaeude: Some(Gebaeudeanschrift {
            postleitzahl: Some("10117".into()),
            strasse: Some("Chausseestraße".into()),
            hausnummer: Some("12a".into()),
            wohnort: Some("Berlin".into()),
        }),
    })
}

fn kontakt(kanal: &str, kennung: &str) -> Kontakt {
    Kontakt {
        kanal: Some(kanal.into()),
        kennung: Some(kennung.into()),
        zusatz: None,
    }
}

fn anzeigender(name: &str) -> Option<Anzeigender> {
    Some(Anzeigender {
        name_organisation: Some(name.into()),
        kontaktdaten: Some(vec![kontakt("02", "030 1234-0")]),
        ..Default::default()
    })
}

fn todestag() -> Option<Sterbefall> {
    Some(Sterbefall {
        todeszeitpunkt: Some(Todeszeitpunkt {
            todestag: Some(Todestag {
                zeitpunkt: Some("2026-11-20T14:30:00+01:00".into()),
                uhrzeit_exakt: Some(true),
            }),
            sterbezeitraum: None,
        }),
        sterbeort: Some(Sterbeort {
            ort: Some("Berlin".into()),
            ..Default::default()
        }),
    })
}

fn wohnsitz() -> Option<Wohnanschrift> {
    Some(Wohnanschrift {
        strasse: Some("Äußere Wiener Straße 3 & <Hof>".into()),
        plz: Some("81667".into()),
        ort: Some("München".into()),
    })
}

pub fn einrichtung_minimal() -> SterbefallEinrichtung {
    SterbefallEinrichtung {
        anschrift_autor: anschrift_autor(),
        anzeigender: anzeigender("Klinikum Mitte"),
        verstorbener: Some(Verstorbener {
            familienname: Some("Lee".into()),
            geschlecht: Some(GeschlechtVerstorbener::Unbestimmt),
            ..Default::default()
        }),
        sterbefall: todestag(),
        leichen_id: None,
    }
}

pub fn einrichtung_maximal() -> SterbefallEinrichtung {
    SterbefallEinrichtung {
        anschrift_autor: anschrift_autor(),
        anzeigender: Some(Anzeigender {
            name_organisation: Some("Pflegeheim Süd & Söhne <\"Haus 2\">".into()),
            ansprechpartner: Some(PersonName {
                vornamen: Some("Jürgen".into()),
                familienname: Some("Weiß".into()),
                geburtsname: None,
            }),
            kontaktdaten: Some(vec![
                kontakt("01", "station@example.org"),
                Kontakt::default(),
                Kontakt {
                    zusatz: Some("werktags 8-16 Uhr".into()),
                    ..kontakt("02", "089 555-0100")
                },
            ]),
            anschrift: Some(Wohnanschrift {
                strasse: Some("Heimweg 1".into()),
                plz: Some("80331".into()),
                ort: Some("München".into()),
            }),
        }),
        verstorbener: Some(Verstorbener {
            vorname: Some("Anna-Lena Zoë".into()),
            familienname: Some("Müller-Lüdenscheidt".into()),
            geburtsname: Some("O'Brien".into()),
            geburtstag: Some("1931-02-28".into()),
            geschlecht: Some(GeschlechtVerstorbener::Weiblich),
            letzter_wohnsitz: wohnsitz(),
        }),
        sterbefall: Some(Sterbefall {
            todeszeitpunkt: Some(Todeszeitpunkt {
                todestag: Some(Todestag {
                    zeitpunkt: Some("2026-11-20T23:45:10+01:00".into()),
                    uhrzeit_exakt: Some(false),
                }),
                sterbezeitraum: None,
            }),
            sterbeort: Some(Sterbeort {
                strasse: Some("Heimweg".into()),
                hausnummer: Some("1-3 Haus B".into()),
                ort: Some("München".into()),
                ortsteil: Some("Schwabing".into()),
            }),
        }),
        leichen_id: Some("L-2026-0815".into()),
    }
}

pub fn bestatter_minimal() -> SterbefallBestatter {
    SterbefallBestatter {
        anschrift_autor: anschrift_autor(),
        anzeigender: anzeigender("Bestattungen Ruhe GmbH"),
        verstorbener: Some(VerstorbenerBestatter {
            familienname: Some("Lee".into()),
            geschlecht: Some(GeschlechtVerstorbener::Maennlich),
            ..Default::default()
        }),
        ..Default::default()
    }
}

pub fn bestatter_maximal() -> SterbefallBestatter {
    let anschrift = wohnsitz();
    SterbefallBestatter {
        anschrift_autor: anschrift_autor(),
        anzeigender: einrichtung_maximal().anzeigender,
        verstorbener: Some(VerstorbenerBestatter {
            vorname: Some("Özgür".into()),
            familienname: Some("Straßer".into()),
            geburtsname: Some("Yılmaz".into()),
            geburtstag: Some("1950-01-31".into()),
            geschlecht: Some(GeschlechtVerstorbener::Divers),
            letzter_wohnsitz: wohnsitz(),
            familienstand: Some("VH".into()),
            vollwaise: Some(true),
        }),
        sterbefall: Some(Sterbefall {
            todeszeitpunkt: Some(Todeszeitpunkt {
                todestag: None,
                sterbezeitraum: Some(Sterbezeitraum {
                    letzter_tag_lebend: Some("2026-11-17".into()),
                    letzter_tag_lebend_uhrzeit: Some("18:00".into()),
                    mit_sicherheit_tot_tag: Some("2026-11-19".into()),
                    mit_sicherheit_tot_uhrzeit: Some("09:30".into()),
                }),
            }),
            sterbeort: Some(Sterbeort {
                ort: Some("Berlin".into()),
                ..Default::default()
            }),
        }),
        partner_verstorbener: Some(PartnerVerstorbener {
            vorname: Some("Maria".into()),
            familienname: Some("Straßer".into()),
            geburtsname: Some("Groß".into()),
            geburtstag: Some("1952-07-01".into()),
            geschlecht: Some(GeschlechtVerstorbener::Weiblich),
            ist_auskunftsgeber: Some(true),
        }),
        auskunftsgeber: Some(Auskunftsgeber {
            vorname: Some("Petra".into()),
            familienname: Some("Nichte".into()),
            geburtsname: None,
            anschrift: anschrift.clone(),
            kontaktdaten: Some(vec![kontakt("03", "0170 555")]),
            verhaeltnis_verstorbener: Some("Nichte".into()),
        }),
        anzahl_kinder_volljaehrig: Some(1),
        volljaehrige_kinder: Some(vec![VolljaehrigesKind {
            familienname: Some("Straßer".into()),
            geburtsname: None,
            vornamen: Some("Jörg".into()),
            anschrift: anschrift.clone(),
            ist_auskunftsgeber: Some(true),
        }]),
        anzahl_kinder_minderjaehrig: Some(2),
        minderjaehrige_kinder: Some(vec![MinderjaehrigesKind {
            familienname: Some("Straßer".into()),
            vornamen: Some("Lea".into()),
            geburtstag: Some("2012-03-04".into()),
            anschrift,
            vollwaise: Some(true),
            ist_auskunftsgeber: None,
        }]),
        art_der_bestattung: Some(Bestattungsart::Feuerbestattung),
        zahl_der_urkunden: Some(ZahlDerUrkunden {
            anzahl_standardformat: Some(3),
            anzahl_stammbuchformat: Some(0),
            anzahl_ciec16: Some(1),
            anzahl_ciec34: Some(1),
            anzahl_registerausdruck: Some(1),
            anzahl_registerausdruck_mit_hinweisen: Some(0),
            anzahl_sozialversicherung: Some(2),
        }),
        abholung_im_standesamt: Some(true),
        bescheinigung_bei_zurueckstellung: Some(true),
        leichen_id: Some("L-2026-0815".into()),
    }
}

pub fn bescheinigung_minimal() -> Todesbescheinigung {
    Todesbescheinigung {
        anschrift_autor: anschrift_autor(),
        verstorbener: Some(VerstorbenerTodesbescheinigung {
            familienname: Some("Unbekannt".into()),
            geschlecht: Some(GeschlechtVerstorbener::Unbestimmt),
            ..Default::default()
        }),
        sterbefall: Some(SterbefallTodesbescheinigung {
            todeszeitpunkt: todestag().unwrap().todeszeitpunkt,
            ..Default::default()
        }),
        angaben_leichenschau: Some(AngabenLeichenschau {
            namen_arzt: Some(PersonName {
                vornamen: Some("Eva".into()),
                familienname: Some("Ärztin".into()),
                geburtsname: None,
            }),
            kontakt_arzt: Some(vec![kontakt("02", "030 999")]),
            datum: Some("2026-11-20".into()),
            uhrzeit_unbekannt: Some(true),
            ort: Some("Berlin".into()),
            ..Default::default()
        }),
        leichen_id: Some("L-2026-0815".into()),
    }
}

pub fn bescheinigung_maximal() -> Todesbescheinigung {
    Todesbescheinigung {
        anschrift_autor: anschrift_autor(),
        verstorbener: Some(VerstorbenerTodesbescheinigung {
            vorname: Some("Jörg Björn".into()),
            familienname: Some("Müller & Söhne <Test>".into()),
            geburtsname: Some("Meier".into()),
            letzter_wohnsitz: wohnsitz(),
            geburtstag: Some("1940-12-24".into()),
            geburtsort: Some("Köln".into()),
            geschlecht: Some(GeschlechtVerstorbener::Maennlich),
            identifizierung: Some("EPR".into()),
        }),
        sterbefall: Some(SterbefallTodesbescheinigung {
            todeszeitpunkt: Some(Todeszeitpunkt {
                todestag: None,
                sterbezeitraum: Some(Sterbezeitraum {
                    mit_sicherheit_tot_tag: Some("2026-11-19".into()),
                    mit_sicherheit_tot_uhrzeit: Some("07:15".into()),
                    ..Default::default()
                }),
            }),
            sterbeort: Some(Sterbeort {
                strasse: Some("A 9, km 12,5".into()),
                hausnummer: None,
                ort: Some("Garching".into()),
                ortsteil: None,
            }),
            auffindungsort: Some(true),
            natuerlicher_tod: Some(true),
            totgeburt: Some(false),
        }),
        angaben_leichenschau: Some(AngabenLeichenschau {
            namen_arzt: Some(PersonName {
                vornamen: Some("Eva".into()),
                familienname: Some("Ärztin".into()),
                geburtsname: Some("Groß".into()),
            }),
            anschrift_arzt: Some(Gebaeudeanschrift {
                postleitzahl: Some("85748".into()),
                strasse: Some("Praxisweg".into()),
                hausnummer: Some("3 1/2".into()),
                wohnort: Some("Garching".into()),
            }),
            kontakt_arzt: Some(vec![kontakt("01", "praxis@example.org")]),
            datum: Some("2026-11-19".into()),
            uhrzeit: Some("10:05".into()),
            uhrzeit_exakt: Some(true),
            uhrzeit_unbekannt: None,
            ort: Some("Garching".into()),
        }),
        leichen_id: Some("L-2026-0815".into()),
    }
}
