"""Builds an incoming court message (XJustiz 3.6.2, nachricht.gds.uebermittlungSchriftgutobjekte.0005005)
with pyxjustiz's models and xsdata's serializer, not with meldewerk's writer, and prints it.

A court's reply as tests need one: the court as sender (by its XJustiz-ID or by name) with its
case reference, the recipient, parties (natural persons) and documents. Any crate's tests may use
it; pyxjustiz is pinned in scripts/test.sh.

Usage:
  python3 court_message.py --aktenzeichen "50 XVII 123/26" --absender "Amtsgericht Musterstadt" \\
      --empfaenger "Klinikum Nord" --beteiligter "Jörg Müller" \\
      --dokument "Beschluss.pdf=Beschluss über die Betreuung" --dokument Anschreiben.pdf > file.xml

  --aktenzeichen X            the court's case reference (absender/aktenzeichen); optional
  --absender NAME             the court's name (sonstige); or --gericht CODE, its XJustiz-ID
  --empfaenger NAME           the recipient's name (sonstige)
  --empfaenger-aktenzeichen Y the recipient's reference (aktenzeichen.freitext); else "unbekannt"
  --beteiligter "VORNAME NACHNAME"  a party; repeatable; the last word is the family name
  --dokument DATEI[=TITEL]    a document with one file; repeatable, in order
  --nachrichten-id UUID       eigeneNachrichtenID (default: a random UUID)
  --erstellungszeitpunkt T    xs:dateTime (default: 2026-11-24T10:00:00+01:00)
"""

import argparse
import sys
import uuid

from xsdata.formats.dataclass.serializers import XmlSerializer
from xsdata.formats.dataclass.serializers.config import SerializerConfig
from xsdata.models.datatype import XmlDateTime
from xjustiz.model_gen.xjustiz_0000_grunddatensatz_3_6 import (
    TypeGdsBeteiligter,
    TypeGdsBeteiligung,
    TypeGdsDokument,
    TypeGdsGrunddaten,
    TypeGdsHerstellerinformation,
    TypeGdsKommunikationspartner,
    TypeGdsNachrichtenkopf,
    TypeGdsNameNatuerlichePerson,
    TypeGdsNatuerlichePerson,
    TypeGdsSchriftgutobjekte,
    TypeGdsXdomeaIdentifikationObjektType,
)
from xjustiz.model_gen.xjustiz_0005_nachrichten_3_2 import (
    NachrichtGdsUebermittlungSchriftgutobjekte0005005 as Uebermittlung,
)
from xjustiz.model_gen.xjustiz_0010_cl_allgemein_3_7 import (
    CodeGdsBestandteiltyp,
    CodeGdsDokumentklasseTyp3,
    GdsBestandteiltyp,
)
from xjustiz.model_gen.xjustiz_0020_cl_gerichte_3_3 import CodeGdsGerichteTyp3

Partner = TypeGdsKommunikationspartner.AuswahlKommunikationspartner
Fach = TypeGdsDokument.XjustizFachspezifischeDaten


def partner(gericht=None, name=None):
    if gericht:
        auswahl = Partner(gericht=CodeGdsGerichteTyp3(code=gericht, list_version_id="3.3"))
    else:
        auswahl = Partner(sonstige=name)
    return TypeGdsKommunikationspartner(auswahl_kommunikationspartner=auswahl)


def beteiligung(nummer, name):
    *vornamen, nachname = name.split()
    person = TypeGdsNatuerlichePerson(
        voller_name=TypeGdsNameNatuerlichePerson(
            vorname=" ".join(vornamen) or None, nachname=nachname
        )
    )
    return TypeGdsBeteiligung(
        rolle=[TypeGdsBeteiligung.Rolle(rollennummer=str(nummer))],
        beteiligter=TypeGdsBeteiligter(
            beteiligtennummer=str(nummer),
            auswahl_beteiligter=TypeGdsBeteiligter.AuswahlBeteiligter(natuerliche_person=person),
        ),
    )


def dokument(nummer, angabe, nachrichten_id):
    datei, _, titel = angabe.partition("=")
    return TypeGdsDokument(
        identifikation=TypeGdsXdomeaIdentifikationObjektType(
            id=str(uuid.uuid5(uuid.UUID(nachrichten_id), str(nummer))),
            nummer_im_uebergeordneten_container=nummer,
        ),
        xjustiz_fachspezifische_daten=Fach(
            dokumentklasse=CodeGdsDokumentklasseTyp3(code="005", list_version_id="1.3"),
            anzeigename=titel or None,
            datei=[
                Fach.Datei(
                    dateiname=datei,
                    bestandteil=CodeGdsBestandteiltyp(code=GdsBestandteiltyp.VALUE_001),
                )
            ],
        ),
    )


def baue(args):
    nachrichten_id = args.nachrichten_id or str(uuid.uuid4())
    auswahl_az = TypeGdsNachrichtenkopf.Empfaenger.AuswahlAktenzeichen
    az = (
        auswahl_az(aktenzeichen_freitext=args.empfaenger_aktenzeichen)
        if args.empfaenger_aktenzeichen
        else auswahl_az(aktenzeichen_unbekannt=True)
    )
    kopf = TypeGdsNachrichtenkopf(
        erstellungszeitpunkt=XmlDateTime.from_string(args.erstellungszeitpunkt),
        absender=TypeGdsNachrichtenkopf.Absender(
            informationen=partner(args.gericht, args.absender),
            aktenzeichen=args.aktenzeichen,
            eigene_nachrichten_id=nachrichten_id,
        ),
        empfaenger=TypeGdsNachrichtenkopf.Empfaenger(
            informationen=partner(name=args.empfaenger), auswahl_aktenzeichen=az
        ),
        herstellerinformation=TypeGdsHerstellerinformation(
            name_des_produkts="court_message.py",
            hersteller_des_produkts="meldewerk tests",
            version="1",
        ),
    )
    verfahren = TypeGdsGrunddaten.Verfahrensdaten(
        beteiligung=[beteiligung(i + 1, n) for i, n in enumerate(args.beteiligter)]
    )
    return Uebermittlung(
        nachrichtenkopf=kopf,
        grunddaten=TypeGdsGrunddaten(verfahrensdaten=verfahren),
        schriftgutobjekte=TypeGdsSchriftgutobjekte(
            dokument=[dokument(i + 1, d, nachrichten_id) for i, d in enumerate(args.dokument)]
        ),
    )


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--aktenzeichen")
    sender = p.add_mutually_exclusive_group(required=True)
    sender.add_argument("--absender")
    sender.add_argument("--gericht")
    p.add_argument("--empfaenger", required=True)
    p.add_argument("--empfaenger-aktenzeichen")
    p.add_argument("--beteiligter", action="append", default=[])
    p.add_argument("--dokument", action="append", default=[])
    p.add_argument("--nachrichten-id")
    p.add_argument("--erstellungszeitpunkt", default="2026-11-24T10:00:00+01:00")
    args = p.parse_args()
    serializer = XmlSerializer(config=SerializerConfig(indent="  "))
    sys.stdout.write(serializer.render(baue(args), ns_map={"tns": "http://www.xjustiz.de"}))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
