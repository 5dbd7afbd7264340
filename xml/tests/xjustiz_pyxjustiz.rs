//! Checks by a tool nobody here wrote: pyxjustiz (PyPI, pinned in scripts/test.sh), whose
//! dataclasses are generated from the official XJustiz 3.6.2 schemas. Every variant our writer
//! produces is parsed by tests/pyxjustiz/read_uebermittlung.py and compared with the input; court
//! messages built by tests/pyxjustiz/court_message.py (pyxjustiz's models and serializer, not
//! our writer) are read by our `read_message`.

mod common;

use std::path::{Path, PathBuf};

use common::uebermittlung::*;
use common::xjustiz::{pyxjustiz, xmllint_xjustiz};
use meldewerk_xml::xjustiz::*;
use serde_json::Value;

/// What pyxjustiz's reading script says about the files, in order; panics on a script failure.
fn pyxjustiz_liest(paths: &[&Path]) -> Vec<Value> {
    let output = pyxjustiz("read_uebermittlung.py", paths);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let ergebnisse: Vec<Value> = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "read_uebermittlung.py gave no JSON ({e}):\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    assert_eq!(ergebnisse.len(), paths.len());
    ergebnisse
}

/// The JSON the reading script gives for an address of ours.
fn anschrift_json(a: &Anschrift) -> Value {
    serde_json::json!({
        "strasse": wert(&a.strasse), "plz": wert(&a.plz), "ort": wert(&a.stadt),
        "zusatz": [], "derzeitigerAufenthalt": null,
    })
}

/// An `xs:dateTime` as pyxjustiz prints it (`Z` for a zero offset) in RFC 3339 with its
/// offset, to compare instant and offset alike.
fn zeitpunkt(v: &Value) -> Option<String> {
    Some(zeit(v.as_str()?).to_rfc3339())
}

fn safe_id_json(safe_id: &str) -> Value {
    serde_json::json!([{ "art": "008", "verbindung": safe_id }])
}

#[test]
fn pyxjustiz_parses_every_variant_and_finds_the_input_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let geschrieben = schreibe_alle(dir.path());
    let paths: Vec<&Path> = geschrieben.iter().map(|(_, _, p, _)| p.as_path()).collect();
    let ergebnisse = pyxjustiz_liest(&paths);
    for ((name, u, _, _), ergebnis) in geschrieben.iter().zip(&ergebnisse) {
        let m = ergebnis
            .get("message")
            .unwrap_or_else(|| panic!("{name}: pyxjustiz could not parse it: {ergebnis}"));
        assert_eq!(m["xjustizVersion"], "3.6.2");
        assert_eq!(
            m["nachrichtenId"],
            u.nachricht.eigene_nachrichten_id.as_str()
        );
        assert_eq!(
            zeitpunkt(&m["erstellungszeitpunkt"]),
            Some(u.nachricht.erstellungszeitpunkt.to_rfc3339())
        );

        // The header: who sends, who receives, which case references.
        let absender = &m["absender"];
        assert_eq!(absender["sonstige"], u.absender.name.as_str(), "{name}");
        assert_eq!(
            absender["aktenzeichen"],
            serde_json::json!(wert(&u.absender.aktenzeichen))
        );
        assert_eq!(absender["refRollennummer"], "2");
        let empfaenger = &m["empfaenger"];
        assert_eq!(
            empfaenger["aktenzeichen"],
            serde_json::json!(wert(&u.empfaenger.aktenzeichen)),
            "{name}"
        );
        let neu = wert(&u.empfaenger.aktenzeichen).is_none().then_some(true);
        assert_eq!(
            empfaenger["aktenzeichenNeu"],
            serde_json::json!(neu),
            "{name}"
        );
        match &u.empfaenger.art {
            EmpfaengerArt::Gericht { xjustiz_id } => {
                let instanz = &m["instanzen"][0];
                assert_eq!(empfaenger["refInstanznummer"], "1", "{name}");
                assert_eq!(
                    instanz["telekommunikation"],
                    safe_id_json(&u.empfaenger.safe_id)
                );
                match xjustiz_id {
                    Some(id) => {
                        assert_eq!(empfaenger["gericht"], id.as_str());
                        assert_eq!(instanz["gericht"], id.as_str());
                    }
                    None => {
                        assert_eq!(empfaenger["sonstige"], u.empfaenger.name.as_str());
                        assert_eq!(instanz["beteiligter"], "3", "{name}");
                    }
                }
            }
            EmpfaengerArt::Sonstige => {
                assert_eq!(empfaenger["sonstige"], u.empfaenger.name.as_str(), "{name}");
                assert_eq!(empfaenger["refRollennummer"], "3");
                assert_eq!(m["instanzen"], serde_json::json!([]));
            }
        }

        // The parties: the person concerned, the sender, the recipient.
        let beteiligte = m["beteiligte"].as_array().unwrap();
        assert_eq!(beteiligte.len(), 3, "{name}");
        let b = &u.betroffener;
        let person = &beteiligte[0];
        assert_eq!(person["art"], "natuerlichePerson");
        assert_eq!(person["rollen"], serde_json::json!(["Betroffene Person"]));
        assert_eq!(
            person["vorname"],
            serde_json::json!(wert(&b.vorname)),
            "{name}"
        );
        assert_eq!(person["nachname"], b.nachname.as_str());
        assert_eq!(
            person["geburtsdatum"],
            serde_json::json!(b.geburtsdatum.map(|d| d.to_string()))
        );
        assert_eq!(
            person["familienstand"],
            serde_json::json!(b.familienstand.map(Familienstand::code)),
            "{name}"
        );
        let mut anschriften: Vec<Value> = b
            .anschrift
            .iter()
            .map(anschrift_json)
            .filter(|a| a["strasse"].is_string() || a["plz"].is_string() || a["ort"].is_string())
            .collect();
        if let Some(aufenthalt) = wert(&b.gegenwaertiger_aufenthalt) {
            anschriften.push(serde_json::json!({
                "strasse": null, "plz": null, "ort": null,
                "zusatz": [aufenthalt], "derzeitigerAufenthalt": true,
            }));
        }
        assert_eq!(person["anschriften"], Value::Array(anschriften), "{name}");
        let telefon: Vec<Value> = wert(&b.telefon)
            .map(|t| serde_json::json!({ "art": "007", "verbindung": t }))
            .into_iter()
            .collect();
        assert_eq!(person["telekommunikation"], Value::Array(telefon), "{name}");

        let sender = &beteiligte[1];
        assert_eq!(sender["art"], "organisation");
        assert_eq!(sender["bezeichnung"], u.absender.name.as_str());
        assert_eq!(
            sender["telekommunikation"],
            safe_id_json(&u.absender.safe_id)
        );
        assert_eq!(sender["anschriften"], serde_json::json!([]));
        let recipient = &beteiligte[2];
        assert_eq!(recipient["bezeichnung"], u.empfaenger.name.as_str());
        assert_eq!(
            recipient["telekommunikation"],
            safe_id_json(&u.empfaenger.safe_id)
        );
        let adresse: Vec<Value> = u
            .empfaenger
            .adresse
            .iter()
            .map(anschrift_json)
            .filter(|a| a["strasse"].is_string() || a["plz"].is_string() || a["ort"].is_string())
            .collect();
        assert_eq!(recipient["anschriften"], Value::Array(adresse), "{name}");

        // The documents, in order, each naming its one file and the person concerned.
        let dokumente = m["dokumente"].as_array().unwrap();
        assert_eq!(dokumente.len(), u.dokumente.len(), "{name}");
        for (i, (d, eingabe)) in dokumente.iter().zip(&u.dokumente).enumerate() {
            assert_eq!(d["nummer"], i + 1);
            assert_eq!(d["dateinamen"], serde_json::json!([eingabe.dateiname]));
            assert_eq!(d["anzeigename"], eingabe.bezeichnung.as_str());
            assert_eq!(d["personen"], serde_json::json!(["1"]));
            assert_eq!(d["dokumentklasse"], if i == 0 { "003" } else { "005" });
            let melde = (i == 0)
                .then_some(u.melde_zeitpunkt)
                .flatten()
                .map(|t| t.to_rfc3339());
            assert_eq!(zeitpunkt(&d["erstellungszeitpunkt"]), melde, "{name}");
        }
    }
}

#[test]
fn the_outside_checkers_refuse_a_broken_message() {
    // Without this, the two tests above could pass on checkers that accept anything.
    let dir = tempfile::tempdir().unwrap();
    let xml = String::from_utf8(write_uebermittlung(&voll()).unwrap()).unwrap();
    let ohne_nachname = dir.path().join("ohne_nachname.xml");
    let start = xml.find("<tns:nachname>").unwrap();
    let ende = xml.find("</tns:nachname>").unwrap() + "</tns:nachname>".len();
    std::fs::write(&ohne_nachname, format!("{}{}", &xml[..start], &xml[ende..])).unwrap();
    let fremdes_element = dir.path().join("fremdes_element.xml");
    std::fs::write(
        &fremdes_element,
        xml.replace(
            "<tns:geburt>",
            "<tns:geburt><tns:sternzeichen>Fische</tns:sternzeichen>",
        ),
    )
    .unwrap();
    for path in [&ohne_nachname, &fremdes_element] {
        let (ok, text) = xmllint_xjustiz(path);
        assert!(!ok, "xmllint accepted {}:\n{text}", path.display());
    }
    let ergebnisse = pyxjustiz_liest(&[&ohne_nachname, &fremdes_element]);
    for e in &ergebnisse {
        assert!(e.get("message").is_none(), "pyxjustiz accepted it: {e}");
        assert!(e["error"].is_string());
    }
    assert!(ergebnisse[0]["error"]
        .as_str()
        .unwrap()
        .contains("nachname"));
    assert!(ergebnisse[1]["error"]
        .as_str()
        .unwrap()
        .contains("sternzeichen"));
}

/// A court message built with pyxjustiz's models by tests/pyxjustiz/court_message.py.
fn gerichtsnachricht(dir: &Path, name: &str, args: &[&str]) -> (PathBuf, Vec<u8>) {
    let output = pyxjustiz("court_message.py", args);
    assert!(
        output.status.success(),
        "court_message.py failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let path = dir.join(name);
    std::fs::write(&path, &output.stdout).unwrap();
    let (ok, text) = xmllint_xjustiz(&path);
    assert!(ok, "pyxjustiz built an invalid message:\n{text}");
    (path, output.stdout)
}

#[test]
fn a_court_reply_built_by_pyxjustiz_is_read_by_our_reader() {
    let dir = tempfile::tempdir().unwrap();
    let (_, xml) = gerichtsnachricht(
        dir.path(),
        "antwort.xml",
        &[
            "--aktenzeichen",
            "50 XVII 123/26 <&>",
            "--gericht",
            "B1101",
            "--empfaenger",
            "Klinikum Nord",
            "--beteiligter",
            "Jörg André Müller-Weiß",
            "--dokument",
            "Beschluss.pdf=Beschluss über die Bestellung eines Betreuers",
            "--dokument",
            "Anhörung & Termin.pdf",
            "--nachrichten-id",
            "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
        ],
    );
    let s = read_message(&xml).unwrap();
    assert_eq!(
        s.nachrichtentyp,
        "nachricht.gds.uebermittlungSchriftgutobjekte.0005005"
    );
    // The recipient's reference is "unbekannt": the court's own is the one.
    assert_eq!(s.aktenzeichen.as_deref(), Some("50 XVII 123/26 <&>"));
    assert_eq!(s.aktenzeichen_source, Some(AktenzeichenSource::Absender));
    assert_eq!(
        s.nachrichten_id.as_deref(),
        Some("0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d")
    );
    assert_eq!(
        s.erstellungszeitpunkt.as_deref(),
        Some("2026-11-24T10:00:00+01:00")
    );
    assert_eq!(s.beteiligte.len(), 1);
    assert_eq!(
        s.beteiligte[0].name.as_deref(),
        Some("Jörg André Müller-Weiß")
    );
    assert_eq!(s.beteiligte[0].beteiligtennummer.as_deref(), Some("1"));
    let dateien: Vec<_> = s.dokumente.iter().map(|d| d.dateinamen.clone()).collect();
    assert_eq!(
        dateien,
        [
            vec!["Beschluss.pdf".to_string()],
            vec!["Anhörung & Termin.pdf".to_string()]
        ]
    );
    assert_eq!(
        s.dokumente[0].anzeigename.as_deref(),
        Some("Beschluss über die Bestellung eines Betreuers")
    );
    assert_eq!(s.dokumente[1].anzeigename, None);

    // With our reference as the recipient's, that one is the case reference.
    let (_, xml) = gerichtsnachricht(
        dir.path(),
        "mit_unserem_aktenzeichen.xml",
        &[
            "--aktenzeichen",
            "50 XVII 123/26",
            "--absender",
            "Amtsgericht Musterstadt",
            "--empfaenger",
            "Klinikum Nord",
            "--empfaenger-aktenzeichen",
            "SD-2026/17",
            "--beteiligter",
            "Schmidt",
            "--beteiligter",
            "Anna Maria Schmidt",
        ],
    );
    let s = read_message(&xml).unwrap();
    assert_eq!(s.aktenzeichen.as_deref(), Some("SD-2026/17"));
    assert_eq!(s.aktenzeichen_source, Some(AktenzeichenSource::Empfaenger));
    let namen: Vec<_> = s.beteiligte.iter().map(|b| b.name.clone()).collect();
    assert_eq!(
        namen,
        [
            Some("Schmidt".to_string()),
            Some("Anna Maria Schmidt".to_string())
        ]
    );
    assert!(s.dokumente.is_empty());
}

#[test]
fn pyxjustiz_and_our_reader_agree_on_a_court_reply() {
    // The reply keeps our reference as the recipient's; both readers find it, the same
    // document id and the person.
    let dir = tempfile::tempdir().unwrap();
    let (path, xml) = gerichtsnachricht(
        dir.path(),
        "antwort.xml",
        &[
            "--absender",
            "Amtsgericht Musterstadt",
            "--empfaenger",
            "Klinikum Nord",
            "--empfaenger-aktenzeichen",
            "SD-2026/17",
            "--beteiligter",
            "Jörg André Müller-Weiß",
            "--dokument",
            "Beschluss.pdf=Beschluss",
        ],
    );
    let ours = read_message(&xml).unwrap();
    let theirs = &pyxjustiz_liest(&[&path])[0]["message"];
    assert_eq!(
        theirs["empfaenger"]["aktenzeichen"],
        serde_json::json!(ours.aktenzeichen)
    );
    assert_eq!(theirs["absender"]["aktenzeichen"], Value::Null);
    assert_eq!(
        theirs["dokumente"][0]["id"],
        serde_json::json!(ours.dokumente[0].id)
    );
    assert_eq!(theirs["beteiligte"][0]["nachname"], "Müller-Weiß");
}
