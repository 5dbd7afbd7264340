"""Parses XJustiz 0005005 messages with pyxjustiz's models and prints what they say, as JSON.

pyxjustiz (pinned in scripts/test.sh) holds Python dataclasses generated from the official
XJustiz 3.6.2 schemas; xsdata's parser fills them. The parser is strict: an element or attribute
the model does not know, a value that does not convert, or a required element that is missing
fails the file. (xsdata checks neither element order nor patterns; xmllint does that.)

Usage: python3 read_uebermittlung.py FILE...
Prints one JSON array, one entry per file in the order given: {"file", "message"} or
{"file", "error"}. Exit status 0 when every file parsed, 1 otherwise.
"""

import json
import sys

from xsdata.formats.dataclass.parsers import XmlParser
from xsdata.formats.dataclass.parsers.config import ParserConfig
from xjustiz.model_gen.xjustiz_0005_nachrichten_3_2 import (
    NachrichtGdsUebermittlungSchriftgutobjekte0005005 as Uebermittlung,
)


def code(value):
    return None if value is None else value.code


def text(value):
    return None if value is None else str(value)


def partner(informationen):
    auswahl = informationen.auswahl_kommunikationspartner
    verweis = informationen.auswahl_verweis_grunddaten
    return {
        "gericht": code(auswahl.gericht),
        "sonstige": auswahl.sonstige,
        "refRollennummer": (
            verweis.ref_rollennummer.ref_rollennummer
            if verweis is not None and verweis.ref_rollennummer is not None
            else None
        ),
        "refInstanznummer": verweis.ref_instanznummer if verweis is not None else None,
    }


def kommunikation(eintraege):
    return [{"art": code(k.telekommunikationsart), "verbindung": k.verbindung} for k in eintraege]


def anschriften(eintraege):
    return [
        {
            "strasse": a.strasse,
            "plz": a.postleitzahl,
            "ort": a.ort,
            "zusatz": list(a.anschriftenzusatz),
            "derzeitigerAufenthalt": a.derzeitiger_aufenthalt,
        }
        for a in eintraege
    ]


def beteiligter(beteiligung):
    b = beteiligung.beteiligter
    auswahl = b.auswahl_beteiligter
    eintrag = {
        "beteiligtennummer": b.beteiligtennummer,
        "rollennummern": [r.rollennummer for r in beteiligung.rolle],
        "rollen": [
            code(r.rollenbezeichnung)
            or next((x.sonstige_bezeichnung for x in r.auswahl_bezeichnung), None)
            for r in beteiligung.rolle
        ],
    }
    if auswahl.natuerliche_person is not None:
        p = auswahl.natuerliche_person
        eintrag.update(
            {
                "art": "natuerlichePerson",
                "vorname": p.voller_name.vorname,
                "nachname": p.voller_name.nachname,
                "geburtsdatum": p.geburt.geburtsdatum if p.geburt is not None else None,
                "familienstand": code(p.familienstand),
                "anschriften": anschriften(p.anschrift),
                "telekommunikation": kommunikation(p.telekommunikation),
            }
        )
    elif auswahl.organisation is not None:
        o = auswahl.organisation
        eintrag.update(
            {
                "art": "organisation",
                "bezeichnung": o.bezeichnung.bezeichnung_aktuell,
                "anschriften": anschriften(o.anschrift),
                "telekommunikation": kommunikation(o.telekommunikation),
            }
        )
    else:
        eintrag.update(
            {"art": "ra.kanzlei", "bezeichnung": auswahl.ra_kanzlei.bezeichnung.bezeichnung_aktuell}
        )
    return eintrag


def dokumente(sgo):
    """The documents directly below schriftgutobjekte (ours are never inside an akte)."""
    return [
        {
            "id": d.identifikation.id,
            "nummer": d.identifikation.nummer_im_uebergeordneten_container,
            "dokumentklasse": code(d.xjustiz_fachspezifische_daten.dokumentklasse),
            "anzeigename": d.xjustiz_fachspezifische_daten.anzeigename,
            "personen": [p.ref_beteiligtennummer for p in d.xjustiz_fachspezifische_daten.person],
            "dateinamen": [f.dateiname for f in d.xjustiz_fachspezifische_daten.datei],
            "erstellungszeitpunkt": text(d.erstellungszeitpunkt),
        }
        for d in sgo.dokument
    ]


def lies(inhalt):
    parser = XmlParser(
        config=ParserConfig(
            fail_on_unknown_properties=True,
            fail_on_unknown_attributes=True,
            fail_on_converter_warnings=True,
        )
    )
    n = parser.from_bytes(inhalt, Uebermittlung)
    kopf = n.nachrichtenkopf
    az = kopf.empfaenger.auswahl_aktenzeichen
    verfahren = n.grunddaten.verfahrensdaten
    return {
        "xjustizVersion": kopf.xjustiz_version,
        "erstellungszeitpunkt": text(kopf.erstellungszeitpunkt),
        "nachrichtenId": kopf.absender.eigene_nachrichten_id,
        "absender": dict(partner(kopf.absender.informationen), aktenzeichen=kopf.absender.aktenzeichen),
        "empfaenger": dict(
            partner(kopf.empfaenger.informationen),
            aktenzeichen=az.aktenzeichen_freitext,
            aktenzeichenNeu=az.aktenzeichen_neu,
            aktenzeichenUnbekannt=az.aktenzeichen_unbekannt,
        ),
        "hersteller": kopf.herstellerinformation.name_des_produkts,
        "instanzen": [
            {
                "instanznummer": i.instanznummer,
                "gericht": code(i.auswahl_instanzbehoerde.gericht),
                "sonstige": i.auswahl_instanzbehoerde.sonstige,
                "beteiligter": (
                    i.auswahl_instanzbehoerde.beteiligter.ref_beteiligtennummer
                    if i.auswahl_instanzbehoerde.beteiligter is not None
                    else None
                ),
                "telekommunikation": kommunikation(i.telekommunikation),
            }
            for i in (verfahren.instanzdaten if verfahren is not None else [])
        ],
        "beteiligte": [beteiligter(b) for b in (verfahren.beteiligung if verfahren else [])],
        "dokumente": dokumente(n.schriftgutobjekte),
    }


def main(dateien):
    ergebnisse = []
    for datei in dateien:
        try:
            with open(datei, "rb") as f:
                ergebnisse.append({"file": datei, "message": lies(f.read())})
        except Exception as e:  # every failure is reported per file, with its kind
            ergebnisse.append({"file": datei, "error": f"{type(e).__name__}: {e}"})
    json.dump(ergebnisse, sys.stdout, ensure_ascii=False, indent=1)
    print()
    return 0 if all("message" in e for e in ergebnisse) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
