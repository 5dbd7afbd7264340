//! The fields of the parents' birth data (spec/01 §2.2), in form order. The schema repeats its
//! building blocks (places, names, nationalities, addresses) under several members, so each block
//! is written once as a function and the table is built at start-up.

use std::sync::LazyLock;

use meldewerk_xml::codelisten::{ERREICHBARKEIT, NAMENSART, STAATSANGEHOERIGKEIT};

use crate::module_layer::fields::{Field, FieldKind, TableBuilder};
use crate::xpersonenstand as xps;
use FieldKind::*;

const GESCHLECHT: &[(&str, &str)] = &[
    ("w", "weiblich"),
    ("m", "männlich"),
    ("d", "divers"),
    ("x", "ohne Angabe"),
];

/// Every field of the `birthdata` request except `id`.
pub static FIELDS: LazyLock<Vec<Field>> = LazyLock::new(|| {
    let mut t = TableBuilder::default();
    t.section("Meldende Stelle");
    postalische_anschrift(&mut t, "anschriftAutor", "Anschrift der meldenden Stelle");
    t.field("ansprechpartner", "Ansprechpartner", Text);
    t.field(
        "vorgangsidentifikation.ereignis.zeitpunkt",
        "Vorgang: Zeitpunkt",
        DateTime,
    )
    .field(
        "vorgangsidentifikation.ereignis.zeichen",
        "Vorgang: Zeichen",
        Text,
    );

    t.section("Geburt");
    t.field("geburtsangaben.tag", "Tag der Geburt", Date).field(
        "geburtsangaben.uhrzeit",
        "Uhrzeit der Geburt",
        Pattern(&xps::UHRZEIT),
    );
    ereignisort(&mut t, "geburtsangaben.ort", "Geburtsort");

    t.section("Kind");
    t.field(
        "kind.geschlecht",
        "Geschlecht des Kindes",
        Choice(GESCHLECHT),
    );
    allgemeiner_name(&mut t, "kind.name.familienname", "Familienname des Kindes");
    allgemeiner_name(&mut t, "kind.name.vornamen", "Vornamen des Kindes");

    t.section("Mutter");
    elternteil(&mut t, "mutter", "der Mutter");
    t.field(
        "mutter.anzahlTotgeburten",
        "Anzahl früherer Totgeburten",
        Integer { min: 0, max: 99 },
    )
    .field(
        "mutter.geburtsdatumVorherigesKind",
        "Geburtsdatum des vorherigen Kindes",
        Date,
    )
    .field(
        "mutter.anzahlKinder",
        "Anzahl der Kinder",
        Integer { min: 1, max: 99 },
    );

    t.section("Zweiter Elternteil");
    elternteil(&mut t, "elternteil2", "des zweiten Elternteils");

    t.section("Ehe der Eltern");
    t.field(
        "elternVerheiratet",
        "Die Eltern sind miteinander verheiratet",
        OnlyTrue,
    );
    ereignis(&mut t, "ehe.ereignis", "der Eheschließung");
    t.field(
        "ehe.kinderDerEhe",
        "Das wievielte Kind der Ehe",
        Integer { min: 1, max: 99 },
    )
    .field(
        "ehe.totgeburtenDerEhe",
        "Totgeburten in der Ehe",
        Integer { min: 0, max: 99 },
    );

    t.section("Vorangegangenes Kind");
    person_name(
        &mut t,
        "vorangegangenesKind.namen",
        "des vorangegangenen Kindes",
    );
    ereignis(
        &mut t,
        "vorangegangenesKind.geburt",
        "der Geburt des vorangegangenen Kindes",
    );

    t.section("Kontaktdaten der Eltern");
    kontakt(&mut t, "kontaktdaten[]", "Kontakt");

    t.section("Urkunden");
    let anzahl = Integer { min: 0, max: 99 };
    t.field(
        "urkundenbestellung.anzahlStandardformat",
        "Urkunden im Standardformat",
        anzahl,
    )
    .field(
        "urkundenbestellung.anzahlStammbuchformat",
        "Urkunden im Stammbuchformat",
        anzahl,
    )
    .field(
        "urkundenbestellung.anzahlCIEC16",
        "Urkunden CIEC 16",
        anzahl,
    )
    .field(
        "urkundenbestellung.anzahlCIEC34",
        "Urkunden CIEC 34",
        anzahl,
    );

    t.section("Elterngeld");
    t.field("auftragsnummer", "Auftragsnummer", Text)
        .hint(
            "Die Auftragsnummer aus dem Elterngeldverfahren, mit der das Standesamt die \
             Geburtsdaten an die Elterngeldstelle weiterleitet; steht auf dem Antrag.",
        )
        .field(
            "zuordnungGeburtsanzeige",
            "Zuordnung zur Geburtsanzeige",
            Text,
        )
        .hint(
            "Dieselbe Kennung wie in der Geburtsanzeige der Klinik (Zuordnungskennung), damit \
             das Standesamt beide Meldungen zusammenführt.",
        )
        .field(
            "zustimmungElterngeldstelle",
            "Zustimmung zur Weitergabe an die Elterngeldstelle",
            OnlyTrue,
        )
        .field(
            "zustaendigeElterngeldstelle.kennung",
            "Elterngeldstelle: Kennung",
            Text,
        )
        .hint("DVDV-Kennung der Elterngeldstelle, wenn bekannt.")
        .field(
            "zustaendigeElterngeldstelle.name",
            "Elterngeldstelle: Name",
            Text,
        );
    kontakt(
        &mut t,
        "zustaendigeElterngeldstelle.erreichbarkeit[]",
        "Elterngeldstelle: Kontakt",
    );
    postalische_anschrift(
        &mut t,
        "zustaendigeElterngeldstelle.anschrift",
        "Anschrift der Elterngeldstelle",
    );
    t.build()
});

/// Mother and second parent share their members.
fn elternteil(t: &mut TableBuilder, at: &str, wessen: &str) {
    person_name(t, &format!("{at}.namen"), wessen);
    ereignis(t, &format!("{at}.geburt"), &format!("der Geburt {wessen}"));
    t.field(
        format!("{at}.geschlecht"),
        format!("Geschlecht {wessen}"),
        Choice(GESCHLECHT),
    );
    staatsangehoerigkeit(
        t,
        &format!("{at}.staatsangehoerigkeit"),
        &format!("Staatsangehörigkeit {wessen}"),
    );
    staatsangehoerigkeit(
        t,
        &format!("{at}.weitereStaatsangehoerigkeit"),
        &format!("Weitere Staatsangehörigkeit {wessen}"),
    );
    let anschrift = format!("{at}.anschrift");
    t.field(
        format!("{anschrift}.strasse"),
        format!("Straße {wessen}"),
        Text,
    )
    .field(
        format!("{anschrift}.hausnummer"),
        format!("Hausnummer {wessen}"),
        Hausnummer,
    )
    .field(
        format!("{anschrift}.postleitzahl"),
        format!("Postleitzahl {wessen}"),
        Postleitzahl,
    )
    .field(
        format!("{anschrift}.wohnort"),
        format!("Wohnort {wessen}"),
        Text,
    );
}

fn person_name(t: &mut TableBuilder, at: &str, wessen: &str) {
    t.field(format!("{at}.vornamen"), format!("Vornamen {wessen}"), Text)
        .field(
            format!("{at}.familienname"),
            format!("Familienname {wessen}"),
            Text,
        )
        .field(
            format!("{at}.geburtsname"),
            format!("Geburtsname {wessen}"),
            Text,
        );
}

/// `AngabenEreignis`: place and day of an event.
fn ereignis(t: &mut TableBuilder, at: &str, wovon: &str) {
    t.field(format!("{at}.tag"), format!("Tag {wovon}"), Date);
    ereignisort(t, &format!("{at}.ort"), &format!("Ort {wovon}"));
}

fn ereignisort(t: &mut TableBuilder, at: &str, label: &str) {
    t.field(format!("{at}.strasse"), format!("{label}: Straße"), Text)
        .field(
            format!("{at}.hausnummer"),
            format!("{label}: Hausnummer"),
            Text,
        )
        .field(format!("{at}.ort"), format!("{label}: Ort"), Text)
        .field(format!("{at}.ortsteil"), format!("{label}: Ortsteil"), Text)
        .field(
            format!("{at}.kreisbezeichnung"),
            format!("{label}: Kreis"),
            Text,
        );
}

/// `AllgemeinerNamePersonenstandswesen`: a name, or the statement that there is none.
fn allgemeiner_name(t: &mut TableBuilder, at: &str, label: &str) {
    t.field(format!("{at}.name"), label, Text)
        .field(
            format!("{at}.nichtVorhanden"),
            format!("{label}: nicht vorhanden"),
            OnlyTrue,
        )
        .field(
            format!("{at}.namensartCode"),
            format!("{label}: Namensart"),
            Code(&NAMENSART),
        );
}

/// A choice: a code of the nationality list, or free text for a state the list lacks.
fn staatsangehoerigkeit(t: &mut TableBuilder, at: &str, label: &str) {
    t.field(format!("{at}.code"), label, Code(&STAATSANGEHOERIGKEIT))
        .field(
            format!("{at}.nichtGelisteterWert"),
            format!("{label} (nicht gelistet)"),
            Text,
        );
}

fn kontakt(t: &mut TableBuilder, at: &str, label: &str) {
    t.field(
        format!("{at}.kanal"),
        format!("{label}: Kanal"),
        Code(&ERREICHBARKEIT),
    )
    .field(
        format!("{at}.kennung"),
        format!("{label}: Adresse oder Nummer"),
        Text,
    )
    .field(format!("{at}.zusatz"), format!("{label}: Zusatz"), Text);
}

/// `PostalischeInlandsanschrift`: a building address or a post-office box.
fn postalische_anschrift(t: &mut TableBuilder, at: &str, label: &str) {
    let gebaeude = format!("{at}.gebaeude");
    t.field(
        format!("{gebaeude}.strasse"),
        format!("{label}: Straße"),
        Text,
    )
    .field(
        format!("{gebaeude}.hausnummer"),
        format!("{label}: Hausnummer"),
        Hausnummer,
    )
    .field(
        format!("{gebaeude}.postleitzahl"),
        format!("{label}: Postleitzahl"),
        Postleitzahl,
    )
    .field(format!("{gebaeude}.wohnort"), format!("{label}: Ort"), Text)
    .field(
        format!("{gebaeude}.wohnortFruehererGemeindename"),
        format!("{label}: früherer Gemeindename"),
        Text,
    )
    .field(
        format!("{gebaeude}.zusatzangaben"),
        format!("{label}: Zusatzangaben"),
        Text,
    );
    let postfach = format!("{at}.postfach");
    t.field(
        format!("{postfach}.postfach"),
        format!("{label}: Postfach"),
        Text,
    )
    .field(
        format!("{postfach}.postleitzahl"),
        format!("{label}: Postleitzahl des Postfachs"),
        Postleitzahl,
    )
    .field(
        format!("{postfach}.wohnort"),
        format!("{label}: Ort des Postfachs"),
        Text,
    );
}
