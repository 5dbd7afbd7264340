//! Memento requests of the civil-registry modules, complete for a dispatch.

use serde_json::{json, Value};

/// A memento request with everything a dispatch needs.
pub fn complete_notice(id: &str) -> Value {
    json!({
        "id": id,
        "clientReference": format!("KIS-{id}"),
        "nameEinrichtung": "Klinikum Süd",
        "anschriftAutor": {"gebaeude": {"strasse": "Hauptstraße", "hausnummer": "5", "postleitzahl": "10117", "wohnort": "Berlin"}},
        "geburtsangaben": {"tag": "2026-11-20", "uhrzeit": "10:15", "ort": {"strasse": "Hauptstraße", "hausnummer": "5", "ort": "Berlin"}},
        "kind": {"geschlecht": "WEIBLICH", "name": {"vornamen": "Lina", "familienname": "Muster"}},
        "mutter": {"standard": {"name": {"vornamen": "Anna", "familienname": "Muster", "geburtsname": "Beispiel"},
                    "geburtsdatum": "1990-04-01",
                    "anschrift": {"strasse": "Gartenweg", "hausnummer": "3", "postleitzahl": "10115", "wohnort": "Berlin"}}}
    })
}

/// A death notice of a facility (`deathnotice`, 084020) that needs nothing more than a
/// signature, with two contacts.
pub fn complete_death_notice(id: &str) -> Value {
    json!({"id": id, "Einrichtung": {
        "anzeigender": {"nameOrganisation": "Klinikum Süd",
            "kontaktdaten": [{"kanal": "01", "kennung": "station3@klinikum.example"},
                             {"kanal": "02", "kennung": "030 123456"}]},
        "anschriftAutor": {"gebaeude": {"strasse": "Hauptstraße", "hausnummer": "5",
                                        "postleitzahl": "10117", "wohnort": "Berlin"}},
        "verstorbener": {"vorname": "Karl", "familienname": "Muster", "geschlecht": "maennlich",
            "geburtstag": "1940-02-03",
            "letzterWohnsitz": {"strasse": "Gartenweg 3", "plz": "10115", "ort": "Berlin"}},
        "sterbefall": {"todeszeitpunkt": {"todestag":
            {"zeitpunkt": "2026-11-20T14:30:00+01:00", "uhrzeitExakt": true}},
            "sterbeort": {"ort": "Berlin"}},
        "leichenID": "L-2026-0001"}})
}

/// Parents' birth data (`birthdata`) complete for the 081021 message.
pub fn complete_birth_data(id: &str) -> Value {
    json!({
        "id": id,
        "anschriftAutor": {"gebaeude": {"strasse": "Hauptstraße", "hausnummer": "5", "postleitzahl": "10117", "wohnort": "Berlin"}},
        "vorgangsidentifikation": {"ereignis": {"zeitpunkt": "2026-11-20T10:30:00+01:00", "zeichen": "ELT-7"}},
        "geburtsangaben": {"tag": "2026-11-20", "uhrzeit": "1A:15", "ort": {"ort": "Berlin"}},
        "kind": {"geschlecht": "w", "name": {"familienname": {"name": "Muster"}, "vornamen": {"name": "Lina"}}},
        "mutter": {
            "namen": {"vornamen": "Anna", "familienname": "Muster"},
            "geburt": {"tag": "1990-04-01", "ort": {"ort": "Leipzig"}},
            "geschlecht": "w",
            "staatsangehoerigkeit": {"code": "000"}
        },
        "kontaktdaten": [{"kanal": "01", "kennung": "anna@example.org"}],
        "auftragsnummer": "EG-2026-1",
        "zuordnungGeburtsanzeige": "ZU-2026-0001",
        "zustimmungElterngeldstelle": true
    })
}

/// Parents' birth data with everything a dispatch needs (and nothing optional).
pub fn minimal_birth_data(id: &str) -> Value {
    json!({
        "id": id,
        "anschriftAutor": {"gebaeude": {"strasse": "Hauptstraße", "postleitzahl": "10117", "wohnort": "Berlin"}},
        "geburtsangaben": {"tag": "2026-11-20", "uhrzeit": "10:15"},
        "kind": {"geschlecht": "w"},
        "mutter": {"namen": {"vornamen": "Anna", "familienname": "Muster"}, "geschlecht": "w",
                   "staatsangehoerigkeit": {"code": "000"}},
        "kontaktdaten": [{"kanal": "01", "kennung": "anna@example.org"}],
        "auftragsnummer": "EG-2026-1"
    })
}
