//! Messages written for 081020 are checked against the real XPersonenstand 26.11 schema.

mod common;

use common::*;
use meldewerk_xml::xpersonenstand::*;

#[test]
fn minimale_anzeige_ist_schemagueltig() {
    let xml = write_geburt_081020(&kopf(), &minimal()).unwrap();
    assert_schema_gueltig(&xml);
    assert!(xml.contains("<code>x</code>"), "KEINE_ANGABE maps to x");
    assert!(xml.contains(r#"test="test""#));
    assert!(xml.contains("<kennung>psw:11007007</kennung>"));
    assert!(xml.contains("<xpsw:ort/>"));
    assert!(xml.contains("<xpsw:anschrift/>"));
    assert!(!xml.contains("totgeburt"));
    assert!(!xml.contains("vertraulicheGeburt"));
}

#[test]
fn maximale_anzeige_ist_schemagueltig_und_maskiert() {
    let xml = write_geburt_081020(&kopf(), &maximal()).unwrap();
    assert_schema_gueltig(&xml);
    for erwartet in [
        "Klinikum Süd &amp; Söhne &lt;&quot;Geburtshilfe&quot;&gt; &apos;Ost&apos;",
        "<hausnummer>12</hausnummer>",
        "<hausnummerBuchstabeZusatzziffer>a</hausnummerBuchstabeZusatzziffer>",
        "<hausnummerBuchstabeZusatzziffer>1/2</hausnummerBuchstabeZusatzziffer>",
        "<xpsw:totgeburt>true</xpsw:totgeburt>",
        "<xpsw:geburtsgewicht>480</xpsw:geburtsgewicht>",
        "<code>d</code>",
        "<name>Yılmaz</name>",
        "<xpsw:anzahlUnbestimmt>1</xpsw:anzahlUnbestimmt>",
        // standesamtKennung replaces the configured reader's kennung
        "<kennung>psw:09162000</kennung>",
        "GA-2026-11-02/0815 &lt;&amp;&gt;",
    ] {
        assert!(xml.contains(erwartet), "missing {erwartet:?} in\n{xml}");
    }
    assert!(!xml.contains("psw:11007007"));
    // standortId has no element in 081020
    assert!(!xml.contains("KH-0815"));
    assert!(!xml.contains("vertraulicheGeburt"), "false is not written");
}

#[test]
fn vertrauliche_geburt_ist_schemagueltig() {
    let xml = write_geburt_081020(&kopf(), &vertraulich()).unwrap();
    assert_schema_gueltig(&xml);
    assert!(xml.contains("<xpsw:vertraulicheGeburt>true</xpsw:vertraulicheGeburt>"));
    assert!(xml.contains("<xpsw:vertraulich>"));
    assert!(!xml.contains("<xpsw:standard>"));
}

#[test]
fn alle_geschlechter_sind_schemagueltig() {
    for (geschlecht, code) in [
        (KindGeschlecht::Maennlich, "m"),
        (KindGeschlecht::Weiblich, "w"),
        (KindGeschlecht::Divers, "d"),
        (KindGeschlecht::KeineAngabe, "x"),
    ] {
        let mut a = minimal();
        a.kind.as_mut().unwrap().geschlecht = Some(geschlecht);
        let xml = write_geburt_081020(&kopf(), &a).unwrap();
        assert!(xml.contains(&format!("<code>{code}</code>")));
        assert_schema_gueltig(&xml);
    }
}

#[test]
fn produktivnachricht_ohne_test_attribut() {
    let mut k = kopf();
    k.test = false;
    k.produkt.version = String::new();
    let xml = write_geburt_081020(&k, &minimal()).unwrap();
    assert!(!xml.contains("test="));
    assert!(!xml.contains("produktversion"));
    assert_schema_gueltig(&xml);
}

/// Guards the harness itself: a message the schema must reject is reported as invalid.
#[test]
fn pruefung_erkennt_ungueltige_nachricht() {
    let xml = write_geburt_081020(&kopf(), &minimal()).unwrap();
    let kaputt = xml.replace("<xpsw:tag>2026-11-02</xpsw:tag>", "");
    assert_ne!(kaputt, xml);
    let (ok, text) = xmllint(&kaputt);
    assert!(
        !ok,
        "xmllint accepted a message without geburtsangaben/tag:\n{text}"
    );
}
