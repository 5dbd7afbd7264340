//! Fixtures of the parents' supplementary birth data (081021).

use meldewerk_xml::xpersonenstand::*;

fn s(wert: &str) -> Option<String> {
    Some(wert.into())
}

fn name(wert: &str) -> Option<AllgemeinerName> {
    Some(AllgemeinerName {
        name: s(wert),
        ..Default::default()
    })
}

fn ort(strasse: &str, ort: &str) -> Option<EreignisortErweitert> {
    Some(EreignisortErweitert {
        strasse: s(strasse),
        ort: s(ort),
        ..Default::default()
    })
}

/// The smallest data the form lets through.
pub fn minimal() -> Geburtsdaten {
    Geburtsdaten {
        anschrift_autor: Some(PostalischeInlandsanschrift {
            gebaeude: Some(InlandsanschriftGebaeude {
                postleitzahl: s("10117"),
                strasse: s("Chausseestraße"),
                wohnort: s("Berlin"),
                ..Default::default()
            }),
            postfach: None,
        }),
        geburtsangaben: Some(AngabenGeburt {
            ort: None,
            tag: s("2026-11-02"),
            uhrzeit: s("23:41"),
        }),
        kind: Some(Neugeborenes {
            geschlecht: Some(Geschlecht::Weiblich),
            name: None,
        }),
        mutter: Some(AngabenMutter {
            namen: Some(PersonName {
                vornamen: s("Sophia"),
                familienname: s("Lee"),
                geburtsname: None,
            }),
            geschlecht: Some(Geschlecht::Weiblich),
            staatsangehoerigkeit: Some(Staatsangehoerigkeit {
                code: s("000"),
                nicht_gelisteter_wert: None,
            }),
            ..Default::default()
        }),
        kontaktdaten: Some(vec![Kontakt {
            kanal: s("01"),
            kennung: s("sophia.lee@example.org"),
            zusatz: None,
        }]),
        auftragsnummer: s("EG-2026-000123"),
        ..Default::default()
    }
}

/// Every member filled, with umlauts, ß and characters XML must escape; the choices take
/// the `gebaeude`, `code` and `name` branches (and `nichtVorhanden` for the child's family
/// name, `nichtGelisteterWert` for the second parent's further nationality).
pub fn maximal() -> Geburtsdaten {
    Geburtsdaten {
        anschrift_autor: Some(PostalischeInlandsanschrift {
            gebaeude: Some(InlandsanschriftGebaeude {
                postleitzahl: s("80331"),
                strasse: s("Große Straße \"Am Fluß\" & <Ecke>"),
                hausnummer: s("12a"),
                wohnort: s("München"),
                wohnort_frueherer_gemeindename: s("Schwabing"),
                zusatzangaben: s("c/o Familie Weiß"),
            }),
            postfach: None,
        }),
        ansprechpartner: s("Jürgen Weiß & Söhne <Eltern>"),
        vorgangsidentifikation: Some(Vorgangsidentifikation {
            ereignis: Some(Vorgangsereignis {
                zeitpunkt: s("2026-11-03T09:12:45.250+01:00"),
                zeichen: s("VG-2026/0815 <&>"),
            }),
        }),
        geburtsangaben: Some(AngabenGeburt {
            ort: Some(EreignisortErweitert {
                strasse: s("Kreißsaalweg <3>"),
                hausnummer: s("7-9 & 11"),
                ort: s("München"),
                ortsteil: s("Schwabing-West"),
                kreisbezeichnung: s("Kreisfreie Stadt München"),
            }),
            tag: s("2026-11-02"),
            uhrzeit: s("1A:07"),
        }),
        kind: Some(Neugeborenes {
            geschlecht: Some(Geschlecht::Divers),
            name: Some(PersonNameVeraenderung {
                familienname: Some(AllgemeinerName {
                    name: None,
                    nicht_vorhanden: Some(true),
                    namensart_code: s("fz"),
                }),
                vornamen: Some(AllgemeinerName {
                    name: s("Jörg Björn"),
                    nicht_vorhanden: None,
                    namensart_code: s("vv"),
                }),
            }),
        }),
        mutter: Some(AngabenMutter {
            namen: Some(PersonName {
                vornamen: s("Anna-Lena Zoë"),
                familienname: s("Müller-Lüdenscheidt"),
                geburtsname: s("O'Brien & Groß"),
            }),
            geburt: Some(AngabenEreignis {
                ort: ort("Hauptstraße", "Köln"),
                tag: s("1990-02-28"),
            }),
            geschlecht: Some(Geschlecht::Weiblich),
            staatsangehoerigkeit: Some(Staatsangehoerigkeit {
                code: s("000"),
                nicht_gelisteter_wert: None,
            }),
            weitere_staatsangehoerigkeit: Some(Staatsangehoerigkeit {
                code: s("168"),
                nicht_gelisteter_wert: None,
            }),
            anschrift: Some(AnschriftInland {
                strasse: s("Äußere Wiener Straße"),
                hausnummer: s("3 1/2"),
                postleitzahl: s("81667"),
                wohnort: s("München"),
            }),
            anzahl_totgeburten: Some(0),
            geburtsdatum_vorheriges_kind: s("2023-07-14"),
            anzahl_kinder: Some(2),
        }),
        elternteil2: Some(AngabenElternteil2 {
            namen: Some(PersonName {
                vornamen: s("Özgür"),
                familienname: s("Straßer"),
                geburtsname: s("Yılmaz"),
            }),
            geburt: Some(AngabenEreignis {
                ort: None,
                tag: s("1988-12-31"),
            }),
            geschlecht: Some(Geschlecht::Maennlich),
            staatsangehoerigkeit: Some(Staatsangehoerigkeit {
                code: s("163"),
                nicht_gelisteter_wert: None,
            }),
            weitere_staatsangehoerigkeit: Some(Staatsangehoerigkeit {
                code: None,
                nicht_gelisteter_wert: s("Republik Somaliland"),
            }),
            anschrift: Some(AnschriftInland {
                strasse: s("Äußere Wiener Straße"),
                hausnummer: s("3"),
                postleitzahl: s("81667"),
                wohnort: s("München"),
            }),
        }),
        eltern_verheiratet: Some(true),
        ehe: Some(AngabenEhe {
            ereignis: Some(AngabenEreignis {
                ort: ort("Marienplatz", "München"),
                tag: s("2020-06-20"),
            }),
            kinder_der_ehe: Some(2),
            totgeburten_der_ehe: Some(0),
        }),
        vorangegangenes_kind: Some(VorangegangenesKind {
            namen: Some(PersonName {
                vornamen: s("Lina"),
                familienname: s("Straßer"),
                geburtsname: s("Müller-Lüdenscheidt"),
            }),
            geburt: Some(AngabenEreignis {
                ort: ort("Kreißsaalweg", "München"),
                tag: s("2023-07-14"),
            }),
        }),
        kontaktdaten: Some(vec![
            Kontakt {
                kanal: s("01"),
                kennung: s("anna-lena@example.org"),
                zusatz: s("bevorzugt"),
            },
            Kontakt {
                kanal: s("03"),
                kennung: s("+49 170 1234567"),
                zusatz: s("ab 18 Uhr"),
            },
        ]),
        urkundenbestellung: Some(Urkundenanforderung {
            anzahl_standardformat: Some(2),
            anzahl_stammbuchformat: Some(1),
            anzahl_ciec16: Some(0),
            anzahl_ciec34: Some(1),
        }),
        auftragsnummer: s("EG-2026-000123 <Ü>"),
        zuordnung_geburtsanzeige: s("GA-2026-11-02/0815 <&>"),
        zustimmung_elterngeldstelle: Some(true),
        zustaendige_elterngeldstelle: Some(BehoerdeMitAnschrift {
            kennung: s("egs:09162000"),
            name: s("Elterngeldstelle München"),
            erreichbarkeit: Some(vec![Kontakt {
                kanal: s("02"),
                kennung: s("+49 89 1234-0"),
                zusatz: None,
            }]),
            anschrift: Some(PostalischeInlandsanschrift {
                gebaeude: None,
                postfach: Some(InlandsanschriftPostfach {
                    postfach: s("10 12 34"),
                    wohnort: s("München"),
                    postleitzahl: s("80087"),
                }),
            }),
        }),
    }
}

/// The other branches: author address by post-office box, the mother's nationality as
/// free text, the child's family name as a name and given names as `nichtVorhanden`.
pub fn andere_zweige() -> Geburtsdaten {
    let mut d = minimal();
    d.anschrift_autor = Some(PostalischeInlandsanschrift {
        gebaeude: None,
        postfach: Some(InlandsanschriftPostfach {
            postfach: None,
            wohnort: s("Berlin"),
            postleitzahl: s("10999"),
        }),
    });
    d.mutter.as_mut().unwrap().staatsangehoerigkeit = Some(Staatsangehoerigkeit {
        code: None,
        nicht_gelisteter_wert: s("Republik Somaliland"),
    });
    d.kind.as_mut().unwrap().name = Some(PersonNameVeraenderung {
        familienname: name("Lee"),
        vornamen: Some(AllgemeinerName {
            nicht_vorhanden: Some(true),
            ..Default::default()
        }),
    });
    d.zustaendige_elterngeldstelle = Some(BehoerdeMitAnschrift {
        kennung: s("egs:11000000"),
        name: s("Elterngeldstelle Berlin"),
        erreichbarkeit: None,
        anschrift: Some(PostalischeInlandsanschrift {
            gebaeude: Some(InlandsanschriftGebaeude {
                postleitzahl: s("10969"),
                strasse: s("Friedrichstraße"),
                hausnummer: s("1"),
                wohnort: s("Berlin"),
                ..Default::default()
            }),
            postfach: None,
        }),
    });
    d
}

/// [`maximal`] as the contract's JSON (memento request of `birthdata` without `id`).
pub fn maximal_json() -> serde_json::Value {
    serde_json::json!({
        "anschriftAutor": {
            "gebaeude": {
                "postleitzahl": "80331",
                "strasse": "Große Straße \"Am Fluß\" & <Ecke>",
                "hausnummer": "12a",
                "wohnort": "München",
                "wohnortFruehererGemeindename": "Schwabing",
                "zusatzangaben": "c/o Familie Weiß"
            }
        },
        "ansprechpartner": "Jürgen Weiß & Söhne <Eltern>",
        "vorgangsidentifikation": {
            "ereignis": { "zeitpunkt": "2026-11-03T09:12:45.250+01:00", "zeichen": "VG-2026/0815 <&>" }
        },
        "geburtsangaben": {
            "ort": {
                "strasse": "Kreißsaalweg <3>",
                "hausnummer": "7-9 & 11",
                "ort": "München",
                "ortsteil": "Schwabing-West",
                "kreisbezeichnung": "Kreisfreie Stadt München"
            },
            "tag": "2026-11-02",
            "uhrzeit": "1A:07"
        },
        "kind": {
            "geschlecht": "d",
            "name": {
                "familienname": { "nichtVorhanden": true, "namensartCode": "fz" },
                "vornamen": { "name": "Jörg Björn", "namensartCode": "vv" }
            }
        },
        "mutter": {
            "namen": {
                "vornamen": "Anna-Lena Zoë",
                "familienname": "Müller-Lüdenscheidt",
                "geburtsname": "O'Brien & Groß"
            },
            "geburt": { "ort": { "strasse": "Hauptstraße", "ort": "Köln" }, "tag": "1990-02-28" },
            "geschlecht": "w",
            "staatsangehoerigkeit": { "code": "000" },
            "weitereStaatsangehoerigkeit": { "code": "168" },
            "anschrift": {
                "strasse": "Äußere Wiener Straße",
                "hausnummer": "3 1/2",
                "postleitzahl": "81667",
                "wohnort": "München"
            },
            "anzahlTotgeburten": 0,
            "geburtsdatumVorherigesKind": "2023-07-14",
            "anzahlKinder": 2
        },
        "elternteil2": {
            "namen": { "vornamen": "Özgür", "familienname": "Straßer", "geburtsname": "Yılmaz" },
            "geburt": { "tag": "1988-12-31" },
            "geschlecht": "m",
            "staatsangehoerigkeit": { "code": "163" },
            "weitereStaatsangehoerigkeit": { "nichtGelisteterWert": "Republik Somaliland" },
            "anschrift": {
                "strasse": "Äußere Wiener Straße",
                "hausnummer": "3",
                "postleitzahl": "81667",
                "wohnort": "München"
            }
        },
        "elternVerheiratet": true,
        "ehe": {
            "ereignis": { "ort": { "strasse": "Marienplatz", "ort": "München" }, "tag": "2020-06-20" },
            "kinderDerEhe": 2,
            "totgeburtenDerEhe": 0
        },
        "vorangegangenesKind": {
            "namen": { "vornamen": "Lina", "familienname": "Straßer", "geburtsname": "Müller-Lüdenscheidt" },
            "geburt": { "ort": { "strasse": "Kreißsaalweg", "ort": "München" }, "tag": "2023-07-14" }
        },
        "kontaktdaten": [
            { "kanal": "01", "kennung": "anna-lena@example.org", "zusatz": "bevorzugt" },
            { "kanal": "03", "kennung": "+49 170 1234567", "zusatz": "ab 18 Uhr" }
        ],
        "urkundenbestellung": {
            "anzahlStandardformat": 2,
            "anzahlStammbuchformat": 1,
            "anzahlCIEC16": 0,
            "anzahlCIEC34": 1
        },
        "auftragsnummer": "EG-2026-000123 <Ü>",
        "zuordnungGeburtsanzeige": "GA-2026-11-02/0815 <&>",
        "zustimmungElterngeldstelle": true,
        "zustaendigeElterngeldstelle": {
            "kennung": "egs:09162000",
            "name": "Elterngeldstelle München",
            "erreichbarkeit": [{ "kanal": "02", "kennung": "+49 89 1234-0" }],
            "anschrift": {
                "postfach": { "postfach": "10 12 34", "wohnort": "München", "postleitzahl": "80087" }
            }
        }
    })
}
