//! Our code lists against the schema closure: where the schema enumerates a list, ours equals
//! that enumeration (URI, version, codes and labels); where it only fixes the URI (lists
//! transcribed from their publisher), the URI matches. So the two cannot drift apart.

use std::path::PathBuf;

use meldewerk_xml::codelisten::{
    Codeliste, ALLE, BESTATTUNGSART, ERREICHBARKEIT, FAMILIENSTAND, GESCHLECHT,
    IDENTIFIZIERUNGSART, NAMENSART, STAATSANGEHOERIGKEIT,
};
use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

/// What a schema says about one code type.
#[derive(Debug, Default)]
struct Codetyp {
    kennung: Option<String>,
    version: Option<String>,
    fixed_uri: Option<String>,
    fixed_version: Option<String>,
    eintraege: Vec<(String, String)>,
}

fn schema(pfad: &str) -> String {
    let datei = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/reference/xpersonenstand-26.11/schemas")
        .join(pfad);
    std::fs::read_to_string(&datei).unwrap_or_else(|e| panic!("{}: {e}", datei.display()))
}

/// The complex type `typ` of the schema at `pfad`.
fn codetyp(pfad: &str, typ: &str) -> Codetyp {
    let text = schema(pfad);
    let mut reader = Reader::from_str(&text);
    let mut found = Codetyp::default();
    let (mut drin, mut tiefe, mut stapel) = (false, 0usize, Vec::<String>::new());
    loop {
        match reader.read_event().expect("well-formed schema") {
            Event::Start(e) if !drin => {
                let name = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
                if name == "complexType" && attr(&e, "name").as_deref() == Some(typ) {
                    drin = true;
                    tiefe = 1;
                }
            }
            Event::Start(e) if drin => {
                tiefe += 1;
                let name = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
                attribute_of(&e, &mut found);
                stapel.push(name);
            }
            Event::Empty(e) if drin => attribute_of(&e, &mut found),
            Event::Text(t) if drin => {
                let wert = t.unescape().unwrap().trim().to_owned();
                match stapel.last().map(String::as_str) {
                    Some("kennung") => found.kennung = Some(wert),
                    Some("version") if stapel.iter().any(|s| s == "versionCodeliste") => {
                        found.version = Some(wert)
                    }
                    Some("name") if stapel.iter().any(|s| s == "enumeration") => {
                        if let Some(last) = found.eintraege.last_mut() {
                            last.1 = wert;
                        }
                    }
                    _ => {}
                }
            }
            Event::End(_) if drin => {
                tiefe -= 1;
                stapel.pop();
                if tiefe == 0 {
                    return found;
                }
            }
            Event::Eof => panic!("{typ} not in {pfad}"),
            _ => {}
        }
    }
}

/// The value of the attribute `k` of `e`.
fn attr(e: &BytesStart, k: &str) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.as_ref() == k.as_bytes())
        .map(|a| a.unescape_value().unwrap().into_owned())
}

/// Notes an enumeration value or a fixed attribute.
fn attribute_of(e: &BytesStart, found: &mut Codetyp) {
    let attr = |k: &str| attr(e, k);
    match e.local_name().as_ref() {
        b"enumeration" => found
            .eintraege
            .push((attr("value").unwrap_or_default(), String::new())),
        b"attribute" => match attr("name").as_deref() {
            Some("listURI") => found.fixed_uri = attr("fixed"),
            Some("listVersionID") => found.fixed_version = attr("fixed"),
            _ => {}
        },
        _ => {}
    }
}

const CODES: &str = "xpsw.domap.de/xpsw2611/xpersonenstand-codes.xsd";

fn assert_enumerated(liste: &Codeliste, typ: &str) {
    let t = codetyp(CODES, typ);
    assert_eq!(t.kennung.as_deref(), Some(liste.uri), "{typ}: kennung");
    assert_eq!(t.fixed_uri.as_deref(), Some(liste.uri), "{typ}: listURI");
    assert_eq!(t.version.as_deref(), Some(liste.version), "{typ}: version");
    assert_eq!(
        t.fixed_version.as_deref(),
        Some(liste.version),
        "{typ}: listVersionID"
    );
    let ours: Vec<(String, String)> = liste
        .eintraege
        .iter()
        .map(|(c, l)| (c.to_string(), l.to_string()))
        .collect();
    assert_eq!(ours, t.eintraege, "{typ}: codes and labels");
}

#[test]
fn enumerated_lists_equal_the_schema() {
    assert_enumerated(&NAMENSART, "Code.Namensart.Code");
    assert_enumerated(&FAMILIENSTAND, "Code.FamilienstandPersonenstandswesen.Code");
    assert_enumerated(&BESTATTUNGSART, "Code.Bestattungsart.Code");
    assert_enumerated(&IDENTIFIZIERUNGSART, "Code.Identifizierungsart.Code");
}

#[test]
fn transcribed_lists_have_the_uri_the_schema_fixes() {
    let cases = [
        (
            &STAATSANGEHOERIGKEIT,
            CODES,
            "Code.Staatsangehoerigkeit.Code",
        ),
        (
            &GESCHLECHT,
            "www.osci.de/xinneres/geschlecht/1/xinneres-geschlecht.xsd",
            "Code.Geschlecht",
        ),
    ];
    for (liste, pfad, typ) in cases {
        let t = codetyp(pfad, typ);
        assert_eq!(t.fixed_uri.as_deref(), Some(liste.uri), "{typ}");
        assert!(
            t.eintraege.is_empty(),
            "{typ} is enumerated after all: compare it"
        );
    }
    let basis = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
        "../../shared/reference/xpersonenstand-26.11/external/xoev.de/schemata/\
             basisnachricht/unqualified/g2g/1_1/xoev-basisnachricht-unqualified-g2g_1.1.xsd",
    ))
    .expect("basisnachricht schema");
    assert!(basis.contains(&format!("fixed=\"{}\"", ERREICHBARKEIT.uri)));
    assert_eq!(ALLE.len(), 7);
}
