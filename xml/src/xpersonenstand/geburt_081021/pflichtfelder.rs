//! Which fields the 081021 schema makes mandatory, expressed as JSON paths of the data.
//!
//! Optional sections (`vorgangsidentifikation`, `elternteil2`, `vorangegangenesKind`, the
//! `geburt` of a parent, `ehe.ereignis`, `zustaendigeElterngeldstelle` and its address,
//! entries of contact lists, names of the child) count as given as soon as one of their
//! fields is filled: a form renders them as empty sub-forms, and an untouched sub-form must
//! not block dispatch. Where the schema offers a choice and nothing is given, the path of
//! the first branch is reported (`…gebaeude.*`, `….code`, `….name`); the other branch
//! satisfies it just as well.

use super::modell::{
    AllgemeinerName, AngabenEhe, AngabenElternteil2, AngabenEreignis, AnschriftInland,
    BehoerdeMitAnschrift, EreignisortErweitert, Geburtsdaten, InlandsanschriftGebaeude,
    InlandsanschriftPostfach, Kontakt, PostalischeInlandsanschrift, Staatsangehoerigkeit,
    VorangegangenesKind, Vorgangsidentifikation,
};
use super::pfade::{self, AnschriftPfade, ElternteilPfade, KontaktPfade, NamePfade};
use crate::xpersonenstand::werte::gesetzt;
use crate::xpersonenstand::PersonName;

/// Collects missing paths in document order.
struct Fehlt(Vec<&'static str>);

impl Fehlt {
    fn erwarte(&mut self, vorhanden: bool, pfad: &'static str) {
        if !vorhanden {
            self.0.push(pfad);
        }
    }

    fn text(&mut self, wert: Option<&Option<String>>, pfad: &'static str) {
        self.erwarte(wert.and_then(gesetzt).is_some(), pfad);
    }

    fn anschrift(&mut self, a: Option<&PostalischeInlandsanschrift>, p: &AnschriftPfade) {
        let postfach = a
            .and_then(|a| a.postfach.as_ref())
            .filter(|f| f.angegeben());
        let gebaeude = a
            .and_then(|a| a.gebaeude.as_ref())
            .filter(|g| g.angegeben());
        match (gebaeude, postfach) {
            (None, Some(f)) => {
                self.text(Some(&f.wohnort), p.postfach[1]);
                self.text(Some(&f.postleitzahl), p.postfach[2]);
            }
            (g, _) => {
                self.text(g.map(|g| &g.postleitzahl), p.gebaeude[0]);
                self.text(g.map(|g| &g.strasse), p.gebaeude[1]);
                self.text(g.map(|g| &g.wohnort), p.gebaeude[3]);
            }
        }
    }

    /// Given names first, then family name, as a form shows them.
    fn person_name(&mut self, n: Option<&PersonName>, p: &NamePfade) {
        self.text(n.map(|n| &n.vornamen), p[2]);
        self.text(n.map(|n| &n.familienname), p[0]);
    }

    /// `geburt` is optional for parents; once given, its day is required.
    fn ereignis(&mut self, e: Option<&AngabenEreignis>, tag: &'static str, pflicht: bool) {
        if pflicht || e.is_some_and(|e| e.angegeben()) {
            self.text(e.map(|e| &e.tag), tag);
        }
    }

    fn staat(&mut self, s: Option<&Staatsangehoerigkeit>, pfad: &'static str) {
        self.erwarte(s.is_some_and(|s| s.angegeben()), pfad);
    }

    fn name(&mut self, n: Option<&AllgemeinerName>, pfad: &'static str) {
        if let Some(n) = n.filter(|n| n.angegeben()) {
            self.erwarte(n.zweig_gewaehlt(), pfad);
        }
    }

    fn elternteil(
        &mut self,
        namen: Option<&PersonName>,
        geburt: Option<&AngabenEreignis>,
        geschlecht: bool,
        staat: Option<&Staatsangehoerigkeit>,
        p: &ElternteilPfade,
    ) {
        self.person_name(namen, &p.namen);
        self.ereignis(geburt, p.geburt.tag, false);
        self.erwarte(geschlecht, p.geschlecht);
        self.staat(staat, p.staatsangehoerigkeit[1]);
    }

    /// A list of contacts: `pflicht` lists need one filled entry; every partly filled
    /// entry needs kanal and kennung (each path reported once).
    fn kontakte(&mut self, liste: Option<&Vec<Kontakt>>, p: &KontaktPfade, pflicht: bool) {
        let gefuellt: Vec<&Kontakt> = liste
            .into_iter()
            .flatten()
            .filter(|k| k.angegeben())
            .collect();
        if pflicht && gefuellt.is_empty() {
            self.0.push(p.liste);
            return;
        }
        let kanal = gefuellt.iter().all(|k| gesetzt(&k.kanal).is_some());
        self.erwarte(kanal, p.kanal);
        let kennung = gefuellt.iter().all(|k| gesetzt(&k.kennung).is_some());
        self.erwarte(kennung, p.kennung);
    }
}

impl Geburtsdaten {
    /// JSON-pointer-like dotted paths (e.g. `geburtsangaben.tag`,
    /// `mutter.namen.familienname`) of fields that the schema makes mandatory and that are
    /// missing or blank in this data, in document order. The form refuses to dispatch
    /// until this is empty. Fields of optional sections are required only once the section
    /// is given; for a choice without any branch the first branch's path is reported.
    pub fn missing_for_dispatch(&self) -> Vec<&'static str> {
        let mut f = Fehlt(Vec::new());

        f.anschrift(self.anschrift_autor.as_ref(), &pfade::ANSCHRIFT_AUTOR);

        if let Some(v) = self
            .vorgangsidentifikation
            .as_ref()
            .filter(|v| v.angegeben())
        {
            let e = v.ereignis.as_ref();
            f.text(
                e.map(|e| &e.zeitpunkt),
                "vorgangsidentifikation.ereignis.zeitpunkt",
            );
            f.text(
                e.map(|e| &e.zeichen),
                "vorgangsidentifikation.ereignis.zeichen",
            );
        }

        let angaben = self.geburtsangaben.as_ref();
        f.text(angaben.map(|a| &a.tag), "geburtsangaben.tag");
        f.text(angaben.map(|a| &a.uhrzeit), "geburtsangaben.uhrzeit");

        let kind = self.kind.as_ref();
        f.erwarte(kind.and_then(|k| k.geschlecht).is_some(), "kind.geschlecht");
        let name = kind.and_then(|k| k.name.as_ref());
        f.name(
            name.and_then(|n| n.familienname.as_ref()),
            "kind.name.familienname.name",
        );
        f.name(
            name.and_then(|n| n.vornamen.as_ref()),
            "kind.name.vornamen.name",
        );

        let m = self.mutter.as_ref();
        f.elternteil(
            m.and_then(|m| m.namen.as_ref()),
            m.and_then(|m| m.geburt.as_ref()),
            m.and_then(|m| m.geschlecht).is_some(),
            m.and_then(|m| m.staatsangehoerigkeit.as_ref()),
            &pfade::MUTTER,
        );

        if let Some(e) = self.elternteil2.as_ref().filter(|e| e.angegeben()) {
            f.elternteil(
                e.namen.as_ref(),
                e.geburt.as_ref(),
                e.geschlecht.is_some(),
                e.staatsangehoerigkeit.as_ref(),
                &pfade::ELTERNTEIL2,
            );
        }

        if let Some(ehe) = self.ehe.as_ref() {
            f.ereignis(ehe.ereignis.as_ref(), pfade::EHE_EREIGNIS.tag, false);
        }

        if let Some(k) = self.vorangegangenes_kind.as_ref().filter(|k| k.angegeben()) {
            f.person_name(k.namen.as_ref(), &pfade::VORANGEGANGENES_KIND_NAMEN);
            f.ereignis(
                k.geburt.as_ref(),
                pfade::VORANGEGANGENES_KIND_GEBURT.tag,
                true,
            );
        }

        f.kontakte(self.kontaktdaten.as_ref(), &pfade::KONTAKTDATEN, true);
        f.text(Some(&self.auftragsnummer), "auftragsnummer");

        if let Some(b) = self
            .zustaendige_elterngeldstelle
            .as_ref()
            .filter(|b| b.angegeben())
        {
            f.text(Some(&b.kennung), "zustaendigeElterngeldstelle.kennung");
            f.text(Some(&b.name), "zustaendigeElterngeldstelle.name");
            f.kontakte(
                b.erreichbarkeit.as_ref(),
                &pfade::ELTERNGELDSTELLE_ERREICHBARKEIT,
                false,
            );
            if let Some(a) = b.anschrift.as_ref().filter(|a| a.angegeben()) {
                f.anschrift(Some(a), &pfade::ELTERNGELDSTELLE_ANSCHRIFT);
            }
        }

        f.0
    }
}

fn eins(werte: &[&Option<String>]) -> bool {
    werte.iter().any(|w| gesetzt(w).is_some())
}

impl PostalischeInlandsanschrift {
    pub(super) fn angegeben(&self) -> bool {
        self.gebaeude.as_ref().is_some_and(|g| g.angegeben())
            || self.postfach.as_ref().is_some_and(|p| p.angegeben())
    }
}

impl InlandsanschriftGebaeude {
    pub(super) fn angegeben(&self) -> bool {
        eins(&[
            &self.postleitzahl,
            &self.strasse,
            &self.hausnummer,
            &self.wohnort,
            &self.wohnort_frueherer_gemeindename,
            &self.zusatzangaben,
        ])
    }
}

impl InlandsanschriftPostfach {
    pub(super) fn angegeben(&self) -> bool {
        eins(&[&self.postfach, &self.wohnort, &self.postleitzahl])
    }
}

impl Vorgangsidentifikation {
    pub(super) fn angegeben(&self) -> bool {
        self.ereignis
            .as_ref()
            .is_some_and(|e| eins(&[&e.zeitpunkt, &e.zeichen]))
    }
}

impl EreignisortErweitert {
    pub(super) fn angegeben(&self) -> bool {
        eins(&[
            &self.strasse,
            &self.hausnummer,
            &self.ort,
            &self.ortsteil,
            &self.kreisbezeichnung,
        ])
    }
}

impl AngabenEreignis {
    pub(super) fn angegeben(&self) -> bool {
        gesetzt(&self.tag).is_some() || self.ort.as_ref().is_some_and(|o| o.angegeben())
    }
}

impl AllgemeinerName {
    pub(super) fn angegeben(&self) -> bool {
        self.nicht_vorhanden.is_some() || eins(&[&self.name, &self.namensart_code])
    }

    /// The choice `name` / `nichtVorhanden` has a branch (a `false` is refused later).
    pub(super) fn zweig_gewaehlt(&self) -> bool {
        self.nicht_vorhanden.is_some() || gesetzt(&self.name).is_some()
    }
}

impl Staatsangehoerigkeit {
    pub(super) fn angegeben(&self) -> bool {
        eins(&[&self.code, &self.nicht_gelisteter_wert])
    }
}

impl AnschriftInland {
    pub(super) fn angegeben(&self) -> bool {
        eins(&[
            &self.strasse,
            &self.hausnummer,
            &self.postleitzahl,
            &self.wohnort,
        ])
    }
}

pub(super) fn name_angegeben(n: &PersonName) -> bool {
    eins(&[&n.vornamen, &n.familienname, &n.geburtsname])
}

impl AngabenElternteil2 {
    pub(super) fn angegeben(&self) -> bool {
        self.namen.as_ref().is_some_and(name_angegeben)
            || self.geburt.as_ref().is_some_and(|g| g.angegeben())
            || self.geschlecht.is_some()
            || self
                .staatsangehoerigkeit
                .as_ref()
                .is_some_and(|s| s.angegeben())
            || self
                .weitere_staatsangehoerigkeit
                .as_ref()
                .is_some_and(|s| s.angegeben())
            || self.anschrift.as_ref().is_some_and(|a| a.angegeben())
    }
}

impl AngabenEhe {
    pub(super) fn angegeben(&self) -> bool {
        self.ereignis.as_ref().is_some_and(|e| e.angegeben())
            || self.kinder_der_ehe.is_some()
            || self.totgeburten_der_ehe.is_some()
    }
}

impl VorangegangenesKind {
    pub(super) fn angegeben(&self) -> bool {
        self.namen.as_ref().is_some_and(name_angegeben)
            || self.geburt.as_ref().is_some_and(|g| g.angegeben())
    }
}

impl Kontakt {
    /// An entry counts only once one of its fields is filled (an untouched form row is
    /// neither required nor written).
    pub(crate) fn angegeben(&self) -> bool {
        eins(&[&self.kanal, &self.kennung, &self.zusatz])
    }
}

impl BehoerdeMitAnschrift {
    pub(super) fn angegeben(&self) -> bool {
        eins(&[&self.kennung, &self.name])
            || self.erreichbarkeit.iter().flatten().any(|k| k.angegeben())
            || self.anschrift.as_ref().is_some_and(|a| a.angegeben())
    }
}
